# Recall case 57: a memory reporter keys its bookkeeping dicts by the tensors it reports
# Thread: https://github.com/Stonesjtu/pytorch_memlab/issues/17
# Reported: calling the memory reporter (periodically, inside a training loop) itself leaks
#   memory.
# Confirmed cause: the maintainer: "The `tensor_name` and `tensor_device` mapping dict maintains a
#   reference to the key / value tensor, which prevents python collecting unused tensors"; every
#   tensor alive at any `report()` stays alive for the reporter's lifetime. Fixed in PR #18
#   (names keyed by `id(tensor)`, per-report mappings rebuilt and dropped).
# Class: diagnostic tool left on keeps references to every tensor it saw
import gc
from collections import defaultdict

import torch


class MemReporter():
    def __init__(self, model=None):
        self.tensor_name = {}
        self.device_mapping = defaultdict(list)
        self.device_tensor_stat = {}
        self.name_idx = 0
        if model is not None:
            for name, param in model.named_parameters():
                self.tensor_name[param] = name

    def _get_tensor_name(self, tensor):
        if tensor in self.tensor_name:
            return self.tensor_name[tensor]
        name = type(tensor).__name__ + str(self.name_idx)
        self.tensor_name[tensor] = name  # leak: ANY
        self.name_idx += 1
        return name

    def collect_tensor(self):
        objects = gc.get_objects()
        tensors = [obj for obj in objects if isinstance(obj, torch.Tensor)]
        for t in tensors:
            self.device_mapping[t.device].append(t)  # leak: ANY

    def get_stats(self):
        self.device_tensor_stat.clear()
        for device, tensors in self.device_mapping.items():
            stats = []
            for tensor in tensors:
                numel = tensor.storage().size()
                mem = numel * tensor.element_size()
                stats.append((self._get_tensor_name(tensor), tuple(tensor.size()), numel, mem))
            self.device_tensor_stat[device] = stats

    def report(self, verbose=False):
        self.collect_tensor()
        self.get_stats()
        for device, stats in self.device_tensor_stat.items():
            total = sum(s[3] for s in stats)
            print(f"Storage on {device}: {total / 1024 ** 2:.2f}M")
            if verbose:
                for name, size, numel, mem in stats:
                    print(f"{name:<40}{str(size):>20}{mem / 1024 ** 2:>10.2f}M")


def train(model, loader, optimizer, criterion, report_every=100):
    reporter = MemReporter(model)
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % report_every == 0:
            reporter.report()
