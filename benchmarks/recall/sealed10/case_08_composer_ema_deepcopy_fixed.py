# Fixed twin of case 08: only the averaged trainable tensors are kept, and weights are swapped in place at eval
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
        self.ema_params = None

    @torch.no_grad()
    def fit_start(self, model):
        self.ema_params = [p.detach().clone() for p in model.parameters() if p.requires_grad]

    def _trainable(self, model):
        return [p for p in model.parameters() if p.requires_grad]

    @torch.no_grad()
    def batch_end(self, model):
        for ema_p, p in zip(self.ema_params, self._trainable(model)):
            ema_p.mul_(self.decay).add_(p, alpha=1 - self.decay)

    @torch.no_grad()
    def _swap(self, model):
        for ema_p, p in zip(self.ema_params, self._trainable(model)):
            tmp = p.detach().clone()
            p.copy_(ema_p)
            ema_p.copy_(tmp)
            del tmp

    def eval_start(self, model):
        self._swap(model)

    def eval_end(self, model):
        self._swap(model)


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
