# Fixed twin of case 02: SpareNet runner feeds the raw loss tensors into its AverageMeter objects every iteration
# Thread: https://github.com/microsoft/SpareNet/issues/12
# Reported: CUDA OOM after ~2 epochs, GPU memory rising slowly and steadily (and huge host RAM in issue #6)
# Confirmed cause: the losses (not their values) were accumulated for visualization in the meters, so every
#   iteration's graph stayed referenced; the reporter traced it, the maintainer agreed ("makes full sense") and
#   updated the code so the update operations take items (issue #6 points to this fix)
# Class: meter/statistics object updated with tensors that still carry grad history
import torch
import torch.nn as nn


class AverageMeter(object):
    def __init__(self, items=None):
        self.items = items
        self.n_items = 1 if items is None else len(items)
        self.reset()

    def reset(self):
        self._val = [0] * self.n_items
        self._sum = [0] * self.n_items
        self._count = [0] * self.n_items

    def update(self, values):
        if type(values).__name__ == "list":
            for idx, v in enumerate(values):
                self._val[idx] = v
                self._sum[idx] += v
                self._count[idx] += 1
        else:
            self._val[0] = values
            self._sum[0] += values
            self._count[0] += 1

    def avg(self, idx=None):
        if idx is None:
            return [self._sum[i] / self._count[i] for i in range(self.n_items)]
        return self._sum[idx] / self._count[idx]


def chamfer(a, b):
    d = torch.cdist(a, b)
    return d.min(dim=2)[0].mean() + d.min(dim=1)[0].mean()


class SpareNetGenerator(nn.Module):
    def __init__(self, n_points=2048):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, 128), nn.ReLU(), nn.Linear(128, 1024))
        self.coarse = nn.Linear(1024, 512 * 3)
        self.refine = nn.Linear(1024, n_points * 3)
        self.n_points = n_points

    def forward(self, partial):
        feat = self.encoder(partial).max(dim=1)[0]
        coarse = self.coarse(feat).view(-1, 512, 3)
        refine = self.refine(feat).view(-1, self.n_points, 3)
        return coarse, refine


class SpareNetRunner(object):
    def __init__(self, device):
        self.device = device
        self.net = SpareNetGenerator().to(device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-4)
        self.losses = AverageMeter(["CoarseLoss", "RefineLoss"])

    def train_step(self, partial, gt):
        coarse, refine = self.net(partial)
        coarse_loss = chamfer(coarse, gt)
        refine_loss = chamfer(refine, gt)
        loss = coarse_loss + refine_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.losses.update([coarse_loss.item() * 1000, refine_loss.item() * 1000])

    def run_epoch(self, n_iters=2000):
        self.losses.reset()
        for _ in range(n_iters):
            partial = torch.rand(8, 1024, 3, device=self.device)
            gt = torch.rand(8, 2048, 3, device=self.device)
            self.train_step(partial, gt)
        return self.losses.avg()


if __name__ == "__main__":
    runner = SpareNetRunner("cuda" if torch.cuda.is_available() else "cpu")
    for epoch in range(150):
        print(epoch, runner.run_epoch())
