# Fixed twin of case 24: the module keeps the choice as a plain value and dispatches in forward,
#   so it holds no bound method of itself (removing the line the maintainer named as the cycle;
#   the thread's other remedy, gc.collect() after each instance, is not used here).
# Thread: https://github.com/pytorch/pytorch/issues/128211
# Class: reference cycle through a bound method stored on the instance
import torch
import torch.nn as nn


class Featurizer(nn.Module):
    def __init__(self, size, mode="fast", device="cuda"):
        super().__init__()
        self.register_buffer("table", torch.randn(size, size, device=device))
        self.mode = mode

    def foo(self, x):
        return x @ self.table

    def foo_exact(self, x):
        return (x.double() @ self.table.double()).float()

    def forward(self, x):
        if self.mode == "fast":
            return self.foo(x)
        return self.foo_exact(x)


def featurize_all(batches, size=4096, mode="fast", device="cuda"):
    outputs = []
    for batch in batches:
        featurizer = Featurizer(size, mode=mode, device=device)
        with torch.no_grad():
            outputs.append(featurizer(batch.to(device)).cpu())
    return outputs
