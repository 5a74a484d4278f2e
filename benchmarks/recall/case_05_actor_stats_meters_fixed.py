# Fixed twin of case 05: the meters get numbers (a tensor value is converted with .item()).
# Thread: https://github.com/visionml/pytracking/pull/313
# Reported: memory grows steadily during LTR training.
# Confirmed cause: `_update_stats()` is called with the actor's `stats` values, tensors with
#   gradients; `AverageMeter.update(val, batch_size)` keeps them, so "the gradient graph will be
#   accumulated during training and won't be released" (PR; maintainer asks to convert only when
#   the value actually is a tensor).
# Class: values pulled out of a dict returned by a call keep the graph of what was put in
from collections import OrderedDict

import torch
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class SegmActor:
    def __init__(self, net, objective, loss_weight):
        self.net = net
        self.objective = objective
        self.loss_weight = loss_weight

    def train(self, mode=True):
        self.net.train(mode)

    def __call__(self, data):
        masks_pred = self.net(data["train_images"], data["test_images"], data["train_masks"])
        loss_segm = self.loss_weight["segm"] * self.objective["segm"](masks_pred, data["test_masks"])
        loss_iou = self.loss_weight["iou"] * F.binary_cross_entropy_with_logits(masks_pred, data["test_masks"])
        loss = loss_segm + loss_iou
        stats = {"Loss/total": loss.item(), "Loss/segm": loss_segm.item(), "Loss/iou": loss_iou.item()}
        return loss, stats


class LTRTrainer:
    def __init__(self, actor, loaders, optimizer, device):
        self.actor = actor
        self.loaders = loaders
        self.optimizer = optimizer
        self.device = device
        self.stats = OrderedDict({loader.name: None for loader in loaders})

    def cycle_dataset(self, loader):
        self.actor.train(loader.training)
        torch.set_grad_enabled(loader.training)
        for i, data in enumerate(loader, 1):
            data = data.to(self.device)
            loss, stats = self.actor(data)
            if loader.training:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            batch_size = data["train_images"].shape[loader.stack_dim]
            self._update_stats(stats, batch_size, loader)

    def _update_stats(self, new_stats, batch_size, loader):
        if self.stats[loader.name] is None:
            self.stats[loader.name] = OrderedDict({name: AverageMeter() for name in new_stats.keys()})
        for name, val in new_stats.items():
            if name not in self.stats[loader.name].keys():
                self.stats[loader.name][name] = AverageMeter()
            self.stats[loader.name][name].update(val.item() if torch.is_tensor(val) else val, batch_size)

    def train_epoch(self):
        for loader in self.loaders:
            self.cycle_dataset(loader)
