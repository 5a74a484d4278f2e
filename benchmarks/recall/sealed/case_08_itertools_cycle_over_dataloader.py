# Recall case 08 (sealed): an iteration-based training loop draws batches from itertools.cycle(loader)
# Thread: https://github.com/cgtuebingen/SSS-GS/pull/7
# Reported: (SSS-GS #6) host RAM rises linearly during training until the OS kills the process,
#   even on a 64 GB machine.
# Confirmed cause: the merged PR: `itertools.cycle` keeps a copy of every item of its first pass
#   so it can replay them; over a DataLoader of high-resolution images and masks this caches the
#   whole dataset's batches in RAM. Replaced by `iter(dataloader)` re-created on
#   `StopIteration`, which lets earlier batches be freed.
# Class: itertools.cycle over a DataLoader (the cycle keeps every batch)
import itertools

import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


def training(dataset, gaussians, scene, opt, pipe, render, loss_fn, background, first_iter=0):
    dataloader = DataLoader(dataset, batch_size=1, shuffle=True, num_workers=4,
                            collate_fn=lambda x: x[0])
    data_iter = itertools.cycle(dataloader)  # leak: ANY
    progress_bar = tqdm(range(first_iter, opt.iterations), desc="Training progress")
    for iteration in range(first_iter + 1, opt.iterations + 1):
        gaussians.update_learning_rate(iteration)
        viewpoint_cam = next(data_iter)
        gt_image = viewpoint_cam["image"].cuda()
        mask = viewpoint_cam["mask"].cuda()
        render_pkg = render(viewpoint_cam, gaussians, pipe, background)
        image = render_pkg["render"]
        loss = loss_fn(image * mask, gt_image * mask)
        loss.backward()
        with torch.no_grad():
            if iteration % 10 == 0:
                progress_bar.set_postfix({"Loss": f"{loss.item():.7f}"})
                progress_bar.update(10)
            gaussians.optimizer.step()
            gaussians.optimizer.zero_grad(set_to_none=True)
            if iteration in opt.save_iterations:
                scene.save(iteration)
    progress_bar.close()
