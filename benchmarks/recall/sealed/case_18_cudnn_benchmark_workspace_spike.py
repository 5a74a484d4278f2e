# Recall case 18 (sealed): cuDNN benchmark mode on for a large-input segmentation model
# Thread: https://github.com/kazuto1011/deeplab-pytorch/issues/74
# Reported: training DeepLab (513x513 crops, one image per GPU on two P100s) uses 12.7 of 16 GB
#   at the start and drops to 4.7 GB after a while, so a larger input size cannot be used at
#   all because the first iterations run out of memory.
# Confirmed cause: the maintainer: "It seems that cuDNN looked for the optimal conv algorithm at
#   the very first iteration (when the input size changes, to be precise). Please try disabling
#   the benchmark mode." -- `torch.backends.cudnn.benchmark = True` in `main.py`; the reporter
#   confirmed disabling it fixed the peak.
# Class: cudnn.benchmark autotuning workspace (peak at every new input shape)
import torch
import torch.nn.functional as F


def resize_labels(labels, size):
    return F.interpolate(labels[:, None].float(), size=size, mode="nearest")[:, 0].long()


def train(config, model, loader, optimizer, scheduler, device_ids):
    torch.backends.cudnn.benchmark = True  # leak: ANY
    device = torch.device("cuda:{}".format(device_ids[0]))
    model = torch.nn.DataParallel(model, device_ids=device_ids).to(device)
    model.train()
    model.module.base.freeze_bn()
    criterion = torch.nn.CrossEntropyLoss(ignore_index=config.DATASET.IGNORE_LABEL)
    loader_iter = iter(loader)
    for iteration in range(1, config.SOLVER.ITER_MAX + 1):
        optimizer.zero_grad()
        loss = 0
        for _ in range(config.SOLVER.ITER_SIZE):
            try:
                _, images, labels = next(loader_iter)
            except StopIteration:
                loader_iter = iter(loader)
                _, images, labels = next(loader_iter)
            logits = model(images.to(device))
            iter_loss = 0
            for logit in logits:
                _, _, H, W = logit.shape
                labels_ = resize_labels(labels, size=(H, W)).to(device)
                iter_loss += criterion(logit, labels_)
            iter_loss /= config.SOLVER.ITER_SIZE
            iter_loss.backward()
            loss += float(iter_loss)
        optimizer.step()
        scheduler.step(epoch=iteration)
        if iteration % config.SOLVER.ITER_TB == 0:
            print(iteration, loss)
