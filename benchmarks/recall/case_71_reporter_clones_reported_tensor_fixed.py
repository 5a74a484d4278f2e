# Fixed twin of case 71: the reporter keeps a detached tensor, not a graph-carrying clone.
# Thread: https://github.com/pfnet/pytorch-pfn-extras/pull/49
# Class: tensors handed to a logger/reporter keep their graph
import collections

import torch
import torch.nn.functional as F


class Summary:
    def __init__(self):
        self._x = 0.0
        self._x2 = 0.0
        self._n = 0

    def add(self, value, weight=1):
        self._x += weight * value
        self._x2 += weight * value * value
        self._n += weight

    def compute_mean(self):
        return self._x / self._n


class Reporter:
    def __init__(self):
        self.observation = {}
        self.summaries = collections.defaultdict(Summary)

    def report(self, values):
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                value = value.detach()
            self.observation[key] = value
            self.summaries[key].add(value)

    def flush(self):
        means = {k: float(s.compute_mean()) for k, s in self.summaries.items()}
        self.summaries.clear()
        return means


def train(model, optimizer, train_loader, reporter, epochs, log_interval=1000, device="cuda"):
    iteration = 0
    for epoch in range(epochs):
        model.train()
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            reporter.report({"train/loss": loss})
            iteration += 1
            if iteration % log_interval == 0:
                print(epoch, iteration, reporter.flush())
