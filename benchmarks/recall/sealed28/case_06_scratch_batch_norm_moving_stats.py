# Thread: https://github.com/d2l-ai/d2l-en/pull/1342
# Reported: training the from-scratch BatchNorm LeNet of the "Batch Normalization" chapter, memory is
#   never freed and accumulates every epoch until it blows up.
# Confirmed cause: batch_norm returns the updated moving_mean / moving_var computed from the batch
#   mean and variance with autograd on, and BatchNorm.forward stores them back on the module, so the
#   stored statistics keep X and each step's graph alive and chain every batch to the previous one;
#   the merged PR returns moving_mean.data / moving_var.data instead ("X will not be freed due to the
#   resident of self.moving_mean and self.moving_var in memory").
# Class: running statistics stored on the module every step with their autograd history
import torch
from torch import nn


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    if torch.is_grad_enabled():
        # training: normalise with this batch's statistics, per feature or per channel
        reduce_dims = (0,) if X.dim() == 2 else (0, 2, 3)
        mean = X.mean(dim=reduce_dims, keepdim=X.dim() == 4)
        var = (X - mean).pow(2).mean(dim=reduce_dims, keepdim=X.dim() == 4)
        X_hat = (X - mean) / (var + eps).sqrt()
        moving_mean = moving_mean * momentum + mean * (1.0 - momentum)
        moving_var = moving_var * momentum + var * (1.0 - momentum)
    else:
        # prediction: use the running statistics
        X_hat = (X - moving_mean) / (moving_var + eps).sqrt()
    Y = X_hat * gamma + beta
    return Y, moving_mean, moving_var  # leak: ANY


class BatchNorm(nn.Module):
    def __init__(self, num_features, num_dims):
        super().__init__()
        shape = (1, num_features) if num_dims == 2 else (1, num_features, 1, 1)
        self.gamma = nn.Parameter(torch.ones(shape))
        self.beta = nn.Parameter(torch.zeros(shape))
        self.moving_mean = torch.zeros(shape)
        self.moving_var = torch.ones(shape)

    def forward(self, X):
        if self.moving_mean.device != X.device:
            self.moving_mean = self.moving_mean.to(X.device)
            self.moving_var = self.moving_var.to(X.device)
        Y, self.moving_mean, self.moving_var = batch_norm(  # leak: ANY
            X, self.gamma, self.beta, self.moving_mean, self.moving_var, eps=1e-5, momentum=0.9
        )
        return Y


net = nn.Sequential(
    nn.Conv2d(1, 6, kernel_size=5), BatchNorm(6, num_dims=4), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Conv2d(6, 16, kernel_size=5), BatchNorm(16, num_dims=4), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
    nn.Linear(16 * 4 * 4, 120), BatchNorm(120, num_dims=2), nn.Sigmoid(),
    nn.Linear(120, 84), BatchNorm(84, num_dims=2), nn.Sigmoid(),
    nn.Linear(84, 10),
)


def train_ch6(net, train_iter, num_epochs, lr, device):
    net.to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=lr)
    loss = nn.CrossEntropyLoss()
    for epoch in range(num_epochs):
        net.train()
        total, n = 0.0, 0
        for X, y in train_iter:
            X, y = X.to(device), y.to(device)
            optimizer.zero_grad()
            l = loss(net(X), y)
            l.backward()
            optimizer.step()
            total += l.item() * X.shape[0]
            n += X.shape[0]
        print(f"epoch {epoch + 1}, loss {total / n:.3f}")
