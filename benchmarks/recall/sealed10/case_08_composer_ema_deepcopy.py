# Recall case 08 (sealed10): the EMA algorithm deep-copies the whole (DDP-wrapped) model on the device, twice
# Thread: https://github.com/mosaicml/composer/pull/1941
# Reported: EMA needed 2x the model parameters in extra device memory, duplicated non-trainable parameters, and deep-copied the DDP-wrapped model
# Confirmed cause: EMA kept a full `copy.deepcopy(state.model)` for the averaged weights plus another full copy of the training weights for swapping at eval; the merged refactor keeps only the averaged trainable tensors and swaps in place (extra memory 2x -> 1x), reviewed by a maintainer
# Class: deepcopy of the model on the device kept as a long-lived attribute
import copy

import torch
import torch.nn as nn


class EMA:
    def __init__(self, half_life=0.999):
        self.decay = half_life
        self.ema_model = None
        self.training_model = None

    def fit_start(self, model):
        self.ema_model = copy.deepcopy(model)  # leak: ANY
        self.training_model = copy.deepcopy(model)  # leak: ANY

    @torch.no_grad()
    def batch_end(self, model):
        for ema_p, p in zip(self.ema_model.parameters(), model.parameters()):
            ema_p.mul_(self.decay).add_(p, alpha=1 - self.decay)

    @torch.no_grad()
    def eval_start(self, model):
        for tp, p in zip(self.training_model.parameters(), model.parameters()):
            tp.copy_(p)
        for p, ema_p in zip(model.parameters(), self.ema_model.parameters()):
            p.copy_(ema_p)

    @torch.no_grad()
    def eval_end(self, model):
        for p, tp in zip(model.parameters(), self.training_model.parameters()):
            p.copy_(tp)


def build_model():
    layers = [nn.Linear(4096, 4096) for _ in range(8)]
    frozen = nn.Embedding(50000, 1024)
    frozen.weight.requires_grad_(False)
    return nn.Sequential(frozen, nn.Linear(1024, 4096), *layers)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = build_model().to(device)
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    ema = EMA()
    ema.fit_start(model)
    for step in range(1000):
        x = torch.randint(0, 50000, (32,), device=device)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.batch_end(model)
        if step % 200 == 0:
            ema.eval_start(model)
            ema.eval_end(model)
