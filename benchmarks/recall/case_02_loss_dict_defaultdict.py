# Recall case 02: per-component losses summed into a defaultdict of device tensors
# Thread: https://github.com/MultimediaTechLab/YOLO/pull/83
# Reported: 1-2 MB of host memory lost per batch while training YOLO (batch 4, 1024x1024).
# Confirmed cause: `total_loss[loss_name] += loss_val * batch_size` sums each component loss, with
#   its graph, into a tensor that lives for the whole epoch; the fix adopted in the PR thread keeps
#   floats (`defaultdict(float)` and `loss_val.item()`), which also cut memory by about 10 GB.
# Class: accumulation under a key of a defaultdict, the values returned by a helper step method
from collections import defaultdict

import torch
from torch.cuda.amp import GradScaler, autocast


class ModelTrainer:
    def __init__(self, model, loss_fn, optimizer, device, use_amp=True):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.device = device
        self.scaler = GradScaler(enabled=use_amp)

    def train_one_batch(self, images, targets):
        images, targets = images.to(self.device), targets.to(self.device)
        self.optimizer.zero_grad()
        with autocast():
            predicts = self.model(images)
            loss, loss_each = self.loss_fn(predicts["AUX"], predicts["Main"], targets)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss_each

    def train_one_epoch(self, dataloader):
        self.model.train()
        total_loss = defaultdict(lambda: torch.tensor(0.0, device=self.device))
        total_samples = 0
        for batch_size, images, targets, *_ in dataloader:
            loss_each = self.train_one_batch(images, targets)
            for loss_name, loss_val in loss_each.items():
                total_loss[loss_name] += loss_val * batch_size  # leak: ML101
            total_samples += batch_size
        return {name: value / total_samples for name, value in total_loss.items()}
