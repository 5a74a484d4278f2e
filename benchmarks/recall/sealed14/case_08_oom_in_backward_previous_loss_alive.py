# Recall case 08 (sealed14): after an OOM interrupts backward, the failed step's loss (and its half-freed graph) stays alive while the next batch runs
# Thread: https://github.com/pytorch/pytorch/issues/82218
# Reported: OOM during backward() leads to memory that is never reclaimed; later batches keep OOMing
# Confirmed cause: maintainer (albanD): the interrupted backward leaves the autograd buffers attached to `loss`, and the loop keeps that variable alive until the next compute_loss returns, so two graphs coexist; clean up the temporaries (del loss/outputs) before continuing
# Class: catch OOM around forward/backward, skip the batch, but keep references to loss/outputs from the failed step
import gc
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(*[nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.ReLU()) for _ in range(12)])
        self.stem = nn.Conv2d(3, 64, 3, padding=1)
        self.head = nn.Linear(64, 100)

    def forward(self, x):
        return self.head(self.body(self.stem(x)).mean((2, 3)))


def compute_loss(model, batch, device):
    x, y = batch
    out = model(x.to(device))
    return nn.functional.cross_entropy(out, y.to(device))


def train(model, opt, loader, device):
    n_oom = 0
    for batch in loader:
        try:
            loss = compute_loss(model, batch, device)
            opt.zero_grad()
            loss.backward()
            opt.step()
        except torch.cuda.OutOfMemoryError:
            n_oom += 1
            opt.zero_grad(set_to_none=True)
            gc.collect()
            torch.cuda.empty_cache()
            continue  # leak: ANY
    return n_oom


if __name__ == "__main__":
    dev = torch.device("cuda")
    m = Net().to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    sizes = [64, 512, 64, 1024, 64]
    loader = [(torch.randn(s, 3, 128, 128), torch.randint(0, 100, (s,))) for s in sizes * 20]
    print("oom steps:", train(m, opt, loader, dev))
