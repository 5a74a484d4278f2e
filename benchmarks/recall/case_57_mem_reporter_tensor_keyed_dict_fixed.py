# Fixed twin of case 57: names are keyed by id(tensor) and the per-report mappings are dropped.
# Thread: https://github.com/Stonesjtu/pytorch_memlab/issues/17
# Class: diagnostic tool left on keeps references to every tensor it saw
import gc
from collections import defaultdict

import torch


class MemReporter():
    def __init__(self, model=None):
        self.tensor_name = {}
        self.device_tensor_stat = {}
        self.name_idx = 0
        if model is not None:
            for name, param in model.named_parameters():
                self.tensor_name[id(param)] = name

    def _get_tensor_name(self, tensor):
        tensor_id = id(tensor)
        if tensor_id in self.tensor_name:
            return self.tensor_name[tensor_id]
        name = type(tensor).__name__ + str(self.name_idx)
        self.tensor_name[tensor_id] = name
        self.name_idx += 1
        return name

    def collect_tensor(self):
        device_mapping = defaultdict(list)
        for obj in gc.get_objects():
            if isinstance(obj, torch.Tensor):
                device_mapping[obj.device].append(obj)
        return device_mapping

    def get_stats(self, device_mapping):
        self.device_tensor_stat.clear()
        for device, tensors in device_mapping.items():
            stats = []
            for tensor in tensors:
                numel = tensor.storage().size()
                mem = numel * tensor.element_size()
                stats.append((self._get_tensor_name(tensor), tuple(tensor.size()), numel, mem))
            self.device_tensor_stat[device] = stats

    def report(self, verbose=False):
        device_mapping = self.collect_tensor()
        self.get_stats(device_mapping)
        del device_mapping
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
