# Recall case 04 (sealed10): the stand-alone evaluation script runs the segmentation network over the validation set with grad enabled
# Thread: https://github.com/mit-han-lab/spvnas/issues/108
# Reported: evaluate.py hits CUDA out of memory on SemanticKITTI although training with the same model fits
# Confirmed cause: no torch.no_grad() around inference in evaluate.py, so activations for backward are kept for every batch; fixed by the reporter's merged PR #109 adding a no_grad decorator
# Class: evaluation loop without no_grad
import argparse

import numpy as np
import torch
import torch.nn as nn


class SPVCNN(nn.Module):
    def __init__(self, in_ch=4, num_classes=19):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(in_ch, 64), nn.ReLU(), nn.Linear(64, 128), nn.ReLU())
        self.head = nn.Linear(128, num_classes)

    def forward(self, feats):
        return self.head(self.stem(feats))


class MeanIoU:
    def __init__(self, num_classes=19, ignore_label=255):
        self.num_classes = num_classes
        self.ignore_label = ignore_label
        self.inter = np.zeros(num_classes)
        self.union = np.zeros(num_classes)

    def update(self, pred, target):
        valid = target != self.ignore_label
        for c in range(self.num_classes):
            p, t = (pred == c) & valid, (target == c) & valid
            self.inter[c] += (p & t).sum().item()
            self.union[c] += (p | t).sum().item()

    def compute(self):
        return float(np.mean(self.inter / np.maximum(self.union, 1)))


def val_loader(n_scans=4071, points=120000):
    for _ in range(n_scans):
        yield torch.randn(points, 4), torch.randint(0, 19, (points,))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="SemanticKITTI_val_SPVCNN@119GMACs")
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = SPVCNN().to(device)
    model.eval()
    meter = MeanIoU()
    for feats, labels in val_loader():
        feats, labels = feats.to(device), labels.to(device)
        outputs = model(feats)  # leak: ANY
        pred = outputs.argmax(1)
        meter.update(pred, labels)
    print(args.name, "mIoU", meter.compute())


if __name__ == "__main__":
    main()
