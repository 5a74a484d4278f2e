# Recall case 16 (sealed11): the datamanager writes the GPU copy of each image back into its CPU image cache
# Thread: https://github.com/nerfstudio-project/nerfstudio/pull/3375
# Reported: memory leak with the full-image datamanager (issue #3335): GPU memory keeps growing as training visits more images until every cached image lives on the GPU
# Confirmed cause: next_train did `data = self.cached_train[idx]; data["image"] = data["image"].to(self.device)`, mutating the cached dict so the cache ends up holding GPU tensors (and eval deep-copied the whole cache each time); the maintainers' merged fix shallow-copies the dict before moving the image and drops the deepcopy
# Class: long-lived cache entry mutated in place with a device copy (results kept on GPU) / whole-cache deepcopy per call
from copy import deepcopy
import random

import torch
import torch.nn as nn


class Cameras:
    def __init__(self, n):
        self.c2w = torch.eye(4).repeat(n, 1, 1)
        self.shape = (n,)

    def __getitem__(self, idx):
        out = Cameras(1)
        out.c2w = self.c2w[idx]
        return out

    def to(self, device):
        self.c2w = self.c2w.to(device)
        return self


class FullImageDatamanager:
    def __init__(self, n_train=300, n_eval=30, hw=(1080, 1920), device="cuda"):
        self.device = torch.device(device)
        self.cached_train = [{"image": torch.rand(*hw, 3), "image_idx": i} for i in range(n_train)]
        self.cached_eval = [{"image": torch.rand(*hw, 3), "image_idx": i} for i in range(n_eval)]
        self.train_cameras = Cameras(n_train)
        self.eval_cameras = Cameras(n_eval)
        self.train_unseen_cameras = list(range(n_train))

    def next_train(self, step):
        image_idx = self.train_unseen_cameras.pop(random.randint(0, len(self.train_unseen_cameras) - 1))
        if len(self.train_unseen_cameras) == 0:
            self.train_unseen_cameras = list(range(len(self.cached_train)))
        data = self.cached_train[image_idx]
        data["image"] = data["image"].to(self.device)  # leak: ANY
        camera = self.train_cameras[image_idx : image_idx + 1].to(self.device)
        return camera, data

    def fixed_indices_eval_dataloader(self):
        data = deepcopy(self.cached_eval)  # leak: ANY
        cameras = []
        for i in range(len(data)):
            data[i]["image"] = data[i]["image"].to(self.device)
            cameras.append(self.eval_cameras[i : i + 1].to(self.device))
        return list(zip(cameras, data))


class SplatModel(nn.Module):
    def __init__(self, n=200_000):
        super().__init__()
        self.colors = nn.Parameter(torch.rand(n, 3))
        self.head = nn.Linear(3, 3)

    def forward(self, camera, hw):
        rgb = self.head(self.colors.mean(0)).sigmoid()
        return rgb.expand(*hw, 3)


def main():
    dm = FullImageDatamanager()
    model = SplatModel().to(dm.device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(30_000):
        camera, batch = dm.next_train(step)
        gt = batch["image"]
        pred = model(camera, gt.shape[:2])
        loss = (pred - gt).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 2000 == 0:
            with torch.no_grad():
                psnr = [(-10 * torch.log10(((model(c, d["image"].shape[:2]) - d["image"]) ** 2).mean())).item()
                        for c, d in dm.fixed_indices_eval_dataloader()]
            print(step, sum(psnr) / len(psnr), torch.cuda.memory_allocated() / 2**30, "GiB")


if __name__ == "__main__":
    main()
