# Recall case 06 (sealed5): SLIP training loop accumulates per-step metric tensors (with graph) into an epoch meter
# Thread: https://github.com/facebookresearch/SLIP/pull/8
# Reported: memory leak while training: metric accumulation held tensors instead of values
# Confirmed cause: metrics dict values were loss tensors from the step and were summed across steps; merged PR accumulates the scalar values
# Class: meter/accumulator fed with graph-attached tensors
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class CLIPLoss(nn.Module):
    def forward(self, image_embed, text_embed, logit_scale):
        image_embed = F.normalize(image_embed, dim=-1)
        text_embed = F.normalize(text_embed, dim=-1)
        logits = logit_scale * image_embed @ text_embed.t()
        labels = torch.arange(logits.shape[0], device=logits.device)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        acc = (logits.argmax(-1) == labels).float().mean() * 100
        return {"loss": loss, "clip_loss": loss, "clip_acc": acc}


def train_one_epoch(model, criterion, loader, optimizer, device):
    meters = defaultdict(lambda: None)
    for images, texts in loader:
        images, texts = images.to(device), texts.to(device)
        image_embed, text_embed, logit_scale = model(images, texts)
        loss_dict = criterion(image_embed, text_embed, logit_scale)
        optimizer.zero_grad()
        loss_dict["loss"].backward()
        optimizer.step()
        for k, v in loss_dict.items():
            if meters[k] is None:
                meters[k] = AverageMeter(k)
            meters[k].update(v, images.size(0))  # leak: ANY
    return {k: m.avg for k, m in meters.items()}
