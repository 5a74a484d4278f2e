# Recall case 24 (sealed): a module picks its implementation by storing one of its own bound methods
# Thread: https://github.com/pytorch/pytorch/issues/128211
# Reported: creating modules of this class in a loop (each with a registered buffer) grows GPU
#   memory, although each instance goes out of scope; without the buffer, or without the
#   `self.which_foo = self.foo` line, it does not.
# Confirmed cause: the maintainers (albanD): "`self.which_foo = self.foo` is the line that
#   creates the cycle" -- the instance holds a bound method that holds the instance, so
#   reference counting never frees it and its buffers wait for the cycle collector; "adding a
#   gc.collect() will make the memory usage go down as expected".
# Class: reference cycle through a bound method stored on the instance
import torch
import torch.nn as nn


class Featurizer(nn.Module):
    def __init__(self, size, mode="fast", device="cuda"):
        super().__init__()
        self.register_buffer("table", torch.randn(size, size, device=device))
        if mode == "fast":
            self.which_foo = self.foo  # leak: ANY
        else:
            self.which_foo = self.foo_exact

    def foo(self, x):
        return x @ self.table

    def foo_exact(self, x):
        return (x.double() @ self.table.double()).float()

    def forward(self, x):
        return self.which_foo(x)


def featurize_all(batches, size=4096, mode="fast", device="cuda"):
    outputs = []
    for batch in batches:
        featurizer = Featurizer(size, mode=mode, device=device)
        with torch.no_grad():
            outputs.append(featurizer(batch.to(device)).cpu())
    return outputs
