# Fixed twin of case 23: the running statistics are updated from detached batch mean/var
# Thread: https://github.com/bayesiains/nflows/issues/10
# Reported: unreasonable (GB-scale) RAM growth when training a flow with batch norm between layers
# Confirmed cause: `running_mean.mul_(1 - momentum).add_(mean * momentum)` with `mean = inputs.mean(0)` extends the computation graph into the buffer on every step; fixed by detaching the statistics (PR #11, merged after the maintainer reproduced the growth and verified the fix)
# Class: running-statistic buffer updated in place from tensors that require grad
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BatchNorm(nn.Module):
    """Batch-norm flow layer for flat inputs; returns (outputs, log-abs-det-Jacobian)."""

    def __init__(self, features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        constant = np.log(np.exp(1 - eps) - 1)
        self.unconstrained_weight = nn.Parameter(constant * torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.zeros(features))

    @property
    def weight(self):
        return F.softplus(self.unconstrained_weight) + self.eps

    def forward(self, inputs):
        if self.training:
            mean, var = inputs.mean(0), inputs.var(0)
            self.running_mean.mul_(1 - self.momentum).add_(mean.detach() * self.momentum)
            self.running_var.mul_(1 - self.momentum).add_(var.detach() * self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        outputs = self.weight * ((inputs - mean) / torch.sqrt(var + self.eps)) + self.bias
        logabsdet = torch.sum(torch.log(self.weight) - 0.5 * torch.log(var + self.eps)) * torch.ones(inputs.shape[0])
        return outputs, logabsdet


class AffineCoupling(nn.Module):
    def __init__(self, features, hidden, mask):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 2 * features))

    def forward(self, x):
        shift, log_scale = self.net(x * self.mask).chunk(2, dim=1)
        log_scale = torch.tanh(log_scale) * (1 - self.mask)
        y = x * self.mask + (1 - self.mask) * (x * torch.exp(log_scale) + shift)
        return y, log_scale.sum(1)


class SimpleRealNVP(nn.Module):
    def __init__(self, features=2, hidden=32, num_layers=4):
        super().__init__()
        layers = []
        for i in range(num_layers):
            mask = torch.tensor([(j + i) % 2 for j in range(features)], dtype=torch.float32)
            layers += [AffineCoupling(features, hidden, mask), BatchNorm(features)]
        self.layers = nn.ModuleList(layers)

    def log_prob(self, x):
        total = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, logabsdet = layer(x)
            total = total + logabsdet
        base = -0.5 * (x ** 2).sum(1) - 0.5 * x.shape[1] * np.log(2 * np.pi)
        return base + total


if __name__ == "__main__":
    flow = SimpleRealNVP()
    optimizer = torch.optim.Adam(flow.parameters())
    for i in range(100_000):
        x = torch.randn(1024, 2) * torch.tensor([1.0, 0.3]) + torch.tensor([0.5, -0.2])
        optimizer.zero_grad()
        loss = -flow.log_prob(x).mean()
        loss.backward()
        optimizer.step()
