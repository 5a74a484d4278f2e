# Fixed twin of case 14: backpropagates (loss / iter_size) after every micro-batch and steps once per iteration instead of keeping a list of losses
# Thread: https://github.com/sunsmarterjie/SDL-Skeleton/pull/7
# Reported: GPU memory leak / OOM while training AdaLSN with iter_size > 1 (related issue #6)
# Confirmed cause: the trainer appended every micro-batch loss (with its whole graph) to a list and only called backward on torch.mean(torch.cat(losses)) after iter_size forwards, so all iter_size graphs were resident at once; the merged PR calls (loss / iter_size).backward() per micro-batch and steps once
# Class: losses (with graphs) collected in a list across micro-batches and backpropagated together instead of accumulating gradients
import logging
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class SkeletonDataset(Dataset):
    def __len__(self):
        return 10_000

    def __getitem__(self, idx):
        img = torch.rand(3, 400, 400)
        target = (torch.rand(1, 400, 400) > 0.98).float()
        return img, target


class SideOutputNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3 if i == 0 else 64, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2) if i else nn.Identity())
            for i in range(5)])
        self.side = nn.ModuleList([nn.Conv2d(64, 1, 1) for _ in range(5)])
        self.fuse = nn.Conv2d(5, 1, 1)

    def forward(self, data, target):
        h, sides = data, []
        for stage, side in zip(self.stages, self.side):
            h = stage(h)
            sides.append(F.interpolate(side(h), size=data.shape[-2:], mode="bilinear", align_corners=False))
        fuse = self.fuse(torch.cat(sides, 1))
        side_losses = sum(F.binary_cross_entropy_with_logits(s, target) for s in sides)
        fuse_loss = F.binary_cross_entropy_with_logits(fuse, target)
        return (side_losses + fuse_loss).view(1), fuse_loss.view(1)


class Trainer:
    def __init__(self, network, optimizer, dataloader, args):
        self.args = args
        self.network = network
        self.optimizer = optimizer
        self.dataloader = dataloader

    def train(self):
        lossAcc = 0.0
        lossFuse = 0.0
        self.network.train()
        dataiter = iter(self.dataloader)
        self.optimizer.zero_grad()
        for step in range(self.args.resume_iter, self.args.max_step):
            for _ in range(self.args.iter_size):
                try:
                    data, target = next(dataiter)
                except StopIteration:
                    dataiter = iter(self.dataloader)
                    data, target = next(dataiter)
                data, target = data.cuda(self.args.gpu_id), target.cuda(self.args.gpu_id)

                loss, fuse_loss = self.network(data, target)
                if np.isnan(float(loss.item())):
                    raise ValueError("loss is nan while training")
                loss = loss / self.args.iter_size
                loss.backward()
                lossAcc += loss.item()
                lossFuse += fuse_loss.item()

            self.optimizer.step()
            self.optimizer.zero_grad()

            if (step + 1) % self.args.disp_interval == 0:
                logging.info("iter=%d totloss=%.2f fuseloss=%.2f", step + 1,
                             lossAcc / self.args.disp_interval / self.args.iter_size,
                             lossFuse / self.args.disp_interval / self.args.iter_size)
                lossAcc = 0.0
                lossFuse = 0.0
        return lossAcc


class Args:
    resume_iter = 0
    max_step = 40_000
    iter_size = 10
    gpu_id = 0
    disp_interval = 100


if __name__ == "__main__":
    net = SideOutputNet().cuda()
    optim = torch.optim.Adam(net.parameters(), lr=1e-4)
    loader = DataLoader(SkeletonDataset(), batch_size=1, shuffle=True, num_workers=4)
    Trainer(net, optim, loader, Args()).train()
