# Recall case 14 (sealed14): CumulativeAverage.append keeps every per-iteration metric tensor in GPU buffers until aggregate()
# Thread: https://github.com/Project-MONAI/MONAI/pull/5380
# Reported: calling append() in the training loop grows GPU memory with each call; long loops can crash the GPU
# Confirmed cause: reviewer (myron) explains the buffers keep every appended GPU tensor and aggregate() clones them all; the running average should keep only sum/count (design discussion in a closed PR: weaker)
# Class: metric meter that stores every appended device tensor instead of a running sum
import torch
import torch.nn as nn


class CumulativeAverage:
    """Tracks the average of values appended over an epoch."""

    def __init__(self):
        self.reset()

    def reset(self):
        self._buffers = []

    def append(self, val):
        self._buffers.append(val)  # leak: ANY

    def aggregate(self):
        if not self._buffers:
            return 0.0
        return torch.stack([b.clone() for b in self._buffers]).mean().item()


def train_epoch(model, loader, optimizer, device):
    run_loss = CumulativeAverage()
    run_dice = CumulativeAverage()
    for image, label in loader:
        image, label = image.to(device), label.to(device)
        logits = model(image)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        pred = (logits.sigmoid() > 0.5).float()
        dice = 2 * (pred * label).sum() / (pred.sum() + label.sum() + 1e-5)
        run_loss.append(loss.detach())
        run_dice.append(dice)
    return run_loss.aggregate(), run_dice.aggregate()


if __name__ == "__main__":
    dev = torch.device("cuda")
    m = nn.Sequential(nn.Conv3d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv3d(16, 1, 1)).to(dev)
    opt = torch.optim.Adam(m.parameters(), 1e-4)
    data = [(torch.randn(2, 1, 96, 96, 96), (torch.rand(2, 1, 96, 96, 96) > 0.5).float()) for _ in range(1000)]
    print(train_epoch(m, data, opt, dev))
