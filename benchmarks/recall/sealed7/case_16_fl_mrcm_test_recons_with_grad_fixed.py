# Fixed twin of case 16: the test forward runs under torch.no_grad(), so collected reconstructions carry no graph
# Thread: https://github.com/guopengf/FL-MRCM/issues/2
# Reported: GPU memory leakage when running the test script
# Confirmed cause: maintainer: the test forward (test.py around line 172) is not wrapped in `with torch.no_grad():`, so the kept reconstructions drag their graphs along; he said he would fix and update the code
# Class: test/eval loop with grad on whose outputs are collected across batches
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn


class UnetModel(nn.Module):
    def __init__(self, chans=32):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, chans, 3, padding=1), nn.ReLU(), nn.Conv2d(chans, chans, 3, padding=1), nn.ReLU())
        self.dec = nn.Conv2d(chans, 1, 1)

    def forward(self, x):
        return self.dec(self.enc(x)) + x


def run_net(args, model, data_loader):
    model.eval()
    reconstructions = defaultdict(list)
    for it, data in enumerate(data_loader):
        input, target, mean, std, fnames, slices = data
        input = input.unsqueeze(1).to(args.device)
        with torch.no_grad():
            recons = model(input).to("cpu").squeeze(1)
        for i in range(recons.shape[0]):
            recons_i = recons[i] * std[i] + mean[i]
            reconstructions[fnames[i]].append((int(slices[i]), recons_i))
    return {
        fname: np.stack([r.detach().numpy() for _, r in sorted(slice_preds, key=lambda t: t[0])])
        for fname, slice_preds in reconstructions.items()
    }
