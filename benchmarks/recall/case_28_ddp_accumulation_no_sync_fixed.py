# Fixed twin of case 28: the fix from the thread, non-final micro-batches run under model.no_sync().
# Thread: https://github.com/ultralytics/yolov5/issues/790
# Reported: DDP training with gradient accumulation is slower than it needs to be, badly so on
#   multiple nodes.
# Confirmed cause: with accumulation the optimizer steps every K batches, "but every training
#   step (with loss.backward()) DDP would activate an all_reduce. Therefore, there are K-1 steps
#   of all_reduce wasted"; fix (agreed by the maintainer): run the non-final micro-batches under
#   `model.no_sync()`.
# Class: DDP gradient accumulation without no_sync
from contextlib import nullcontext

import torch
from torch.cuda import amp
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, dataloader, optimizer, compute_loss, local_rank, epochs, nbs=64, batch_size=16):
    model = DDP(model.cuda(local_rank), device_ids=[local_rank], output_device=local_rank)
    scaler = amp.GradScaler()
    accumulate = max(round(nbs / batch_size), 1)
    optimizer.zero_grad()
    for epoch in range(epochs):
        model.train()
        for i, (imgs, targets, paths, _) in enumerate(dataloader):
            imgs = imgs.cuda(local_rank, non_blocking=True).float() / 255.0
            sync_now = (i + 1) % accumulate == 0
            with nullcontext() if sync_now else model.no_sync():
                with amp.autocast():
                    pred = model(imgs)
                    loss, loss_items = compute_loss(pred, targets.cuda(local_rank))
                scaler.scale(loss).backward()
            if sync_now:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
