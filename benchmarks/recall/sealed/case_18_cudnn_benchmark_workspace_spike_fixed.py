# Fixed twin of case 18: benchmark mode is off, so no per-shape algorithm search (and its
#   workspace peak) happens.
# Thread: https://github.com/kazuto1011/deeplab-pytorch/issues/74
# Class: cudnn.benchmark autotuning workspace (peak at every new input shape)
import torch
import torch.nn.functional as F


def resize_labels(labels, size):
    return F.interpolate(labels[:, None].float(), size=size, mode="nearest")[:, 0].long()


def train(config, model, loader, optimizer, scheduler, device_ids):
    torch.backends.cudnn.benchmark = False
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
