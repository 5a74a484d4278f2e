# Recall case 11 (sealed19): piecewise-linear activation collects running mean/var from attached batch statistics during its statistics phase
# Thread: https://github.com/MrGoriay/pwlu-pytorch/issues/1
# Reported: during training the statistics collection (torch.mean / var on the activations) uses a lot of GPU memory
# Confirmed cause: in phase I the PWLA module computes mean/var of the input without detach and blends them into self.running_mean / self.running_var, so each step's running statistic carries a graph back through the previous one and through that step's activations (var keeps its input); the maintainer applied the reporter's fix, x.detach() before mean/var
# Class: running statistic carried across steps without detach
import torch
from torch import nn


class PWLA3d(nn.Module):
    def __init__(self, N=16, momentum=0.9):
        super().__init__()
        self.N = N
        self.momentum = momentum
        self.Br = nn.Parameter(torch.tensor(10.0))
        self.Bl = nn.Parameter(torch.tensor(-10.0))
        self.register_buffer("running_mean", torch.zeros(1))
        self.register_buffer("running_var", torch.ones(1))
        self.Kl = nn.Parameter(torch.tensor(0.0))
        self.Kr = nn.Parameter(torch.tensor(1.0))
        self.Yidx = nn.Parameter(nn.functional.relu(torch.linspace(-10.0, 10.0, N + 1)))

    def forward(self, x, mode):
        if mode == 1:
            d = (self.Br - self.Bl) / self.N
            idx = torch.clamp(torch.floor((x - self.Bl.item()) / d), 0, self.N - 1)
            left = self.Bl + idx * d
            mask_l = x < self.Bl
            mask_r = x >= self.Br
            mask_in = ~(mask_l | mask_r)
            y_left = self.Yidx[idx.long()]
            slope = (self.Yidx[idx.long() + 1] - y_left) / d
            return (mask_l * ((x - self.Bl) * self.Kl + self.Yidx[0])
                    + mask_r * ((x - self.Br) * self.Kr + self.Yidx[-1])
                    + mask_in * ((x - left) * slope + y_left))
        else:
            mean = x.mean([0, 1, 2, -1])  # leak: ANY
            var = x.var([0, 1, 2, -1])  # leak: ANY
            self.running_mean = self.momentum * self.running_mean + (1.0 - self.momentum) * mean  # leak: ANY
            self.running_var = self.momentum * self.running_var + (1.0 - self.momentum) * (x.shape[0] / (x.shape[0] - 1) * var)  # leak: ANY
            return nn.functional.relu(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.act1 = PWLA3d()
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.act2 = PWLA3d()
        self.head = nn.Linear(64, 10)

    def forward(self, x, mode=0):
        x = self.act1(self.conv1(x), mode)
        x = self.act2(self.conv2(x), mode)
        return self.head(x.mean((2, 3)))


def train(model, loader, optimizer, stats_epochs=5, epochs=50):
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        mode = 0 if epoch < stats_epochs else 1
        for images, labels in loader:
            loss = criterion(model(images, mode), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
