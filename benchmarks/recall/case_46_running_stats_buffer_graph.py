# Recall case 46: a hand-written BatchNorm updates its running statistics with autograd on
# Thread: https://github.com/pytorch/pytorch/issues/20275
# Reported: CPU/system memory grows ~7 MB per second with a custom batch-norm layer, until a
#   64 GB machine runs out overnight.
# Confirmed cause: SsnL: "that `running_mean` update is exactly your problem. You keep extending
#   the graph": `self.running_mean = m * mean + (1 - m) * self.running_mean` chains every
#   step's graph onto the buffer; ptrblck's fix runs the update under `torch.no_grad()`.
# Class: a running average kept on the module, updated outside no_grad
import torch
from torch import nn


class MyBatchNorm2d(nn.BatchNorm2d):
    def forward(self, input):
        exponential_average_factor = 0.0
        if self.training and self.track_running_stats:
            self.num_batches_tracked += 1
            exponential_average_factor = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
        if self.training:
            mean = input.mean([0, 2, 3])
            var = input.var([0, 2, 3], unbiased=False)
            n = input.numel() / input.size(1)
            self.running_mean = exponential_average_factor * mean + (1 - exponential_average_factor) * self.running_mean  # leak: ANY
            self.running_var = exponential_average_factor * var * n / (n - 1) + (1 - exponential_average_factor) * self.running_var  # leak: ANY
        else:
            mean = self.running_mean
            var = self.running_var
        input = (input - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + self.eps)
        if self.affine:
            input = input * self.weight[None, :, None, None] + self.bias[None, :, None, None]
        return input


def train(model, loader, optimizer, criterion, epochs):
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
