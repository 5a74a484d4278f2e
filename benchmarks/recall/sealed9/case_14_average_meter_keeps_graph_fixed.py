# Fixed twin of case 14: AverageMeter.update() detaches tensor inputs before accumulating them
# Thread: https://github.com/rabbityl/lepard/issues/12
# Reported: "dataloader memory leak issue": data loader workers get killed after training for a while (host memory keeps growing)
# Confirmed cause: a later user traced it to AverageMeter.update() accumulating non-detached tensors in the training step and fixed it by detaching the input; no maintainer reply, so weaker
# Class: tensors handed to meters/reporting objects without detach
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        if torch.is_tensor(val):
            val = val.detach()
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class Matcher(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, src, tgt):
        fs, ft = self.backbone(src), self.backbone(tgt)
        return torch.einsum("bnd,bmd->bnm", fs, ft).softmax(-1)


def train_epoch(model, loader, optimizer, stats):
    for src, tgt, gt in loader:
        src, tgt, gt = src.cuda(), tgt.cuda(), gt.cuda()
        conf = model(src, tgt)
        loss = -(conf.clamp_min(1e-6).log() * gt).sum(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        stats["loss"].update(loss)
        stats["conf"].update(conf.max(-1).values.mean())


if __name__ == "__main__":
    model = Matcher().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    meters = {"loss": AverageMeter(), "conf": AverageMeter()}
    data = [(torch.randn(2, 1024, 3), torch.randn(2, 1024, 3), torch.eye(1024).expand(2, -1, -1)) for _ in range(100)]
    for epoch in range(30):
        train_epoch(model, data, opt, meters)
        print(epoch, float(meters["loss"].avg))
