# Thread: https://github.com/Lightning-AI/torchmetrics/issues/2492 (fixed by https://github.com/Lightning-AI/torchmetrics/pull/2493)
# Reported: a custom Metric with a list state (tensors appended in update) made host memory grow
#   across epochs until the job ran out of memory, although reset() was called every epoch.
# Confirmed cause: Metric.reset() rebound each list state to a fresh [] instead of emptying it, so
#   the appended tensors were not reliably freed; the merged fix calls .clear() on list states.
# Class: metric state accumulated and not released on reset
import torch
from torch import nn


class Metric(nn.Module):
    def __init__(self):
        super().__init__()
        self._defaults = {}

    def add_state(self, name, default):
        self._defaults[name] = default
        setattr(self, name, list(default) if isinstance(default, list) else default.clone())

    def reset(self):
        for attr, default in self._defaults.items():
            if isinstance(default, torch.Tensor):
                setattr(self, attr, default.detach().clone().to(self.device))
            else:
                getattr(self, attr).clear()

    @property
    def device(self):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class DummyListMetric(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("x", default=[])

    def update(self, x=None):
        x = torch.tensor(1) if x is None else x
        self.x.append(x)

    def compute(self):
        return torch.stack(self.x).float().mean()


def run(epochs=100, steps=1000):
    metric = DummyListMetric()
    for _ in range(epochs):
        for _ in range(steps):
            metric.update(torch.randn(256))
        print(metric.compute())
        metric.reset()
