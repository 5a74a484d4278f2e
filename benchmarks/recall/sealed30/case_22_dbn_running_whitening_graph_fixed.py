# Thread: https://github.com/huangleiBuaa/IterNorm-pytorch/issues/1
# Reported: training with the DBN (decorrelated batch norm) layer leaks GPU memory until OOM
#   (torch 0.4.1).
# Confirmed cause: the running mean and running whitening matrix are updated from the batch mean
#   and the batch whitening matrix `wm`, which still carry autograd history, so every step chains
#   the new buffer onto the previous step's graph; the reporter fixed it by blending in
#   `mean.data` and `wm.data` instead.
# Class: running statistics buffer updated from tensors that carry history
import torch
import torch.nn as nn


class DBN(nn.Module):
    def __init__(self, num_features, num_groups=16, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        self.num_features = num_features
        self.num_groups = num_groups
        self.num_channels = num_features // num_groups
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        if affine:
            self.weight = nn.Parameter(torch.ones(1, num_features, 1, 1))
            self.bias = nn.Parameter(torch.zeros(1, num_features, 1, 1))
        self.register_buffer("running_mean", torch.zeros(num_groups, self.num_channels, 1))
        self.register_buffer(
            "running_projection",
            torch.eye(self.num_channels).expand(num_groups, self.num_channels, self.num_channels).clone(),
        )
        self.register_buffer("eye", torch.eye(self.num_channels))

    def forward(self, input):
        n, c, h, w = input.size()
        x = input.transpose(0, 1).contiguous().view(self.num_groups, self.num_channels, -1)
        m = x.size(-1)
        if self.training:
            mean = x.mean(-1, keepdim=True)
            self.running_mean = (1.0 - self.momentum) * self.running_mean + self.momentum * mean.data
            x_mean = x - mean
            sigma = x_mean.matmul(x_mean.transpose(1, 2)) / m + self.eps * self.eye
            u, eig, _ = torch.svd(sigma)
            scale = eig.rsqrt()
            wm = u.matmul(torch.diag_embed(scale)).matmul(u.transpose(1, 2))
            self.running_projection = (1.0 - self.momentum) * self.running_projection + self.momentum * wm.data
            y = wm.matmul(x_mean)
        else:
            x_mean = x - self.running_mean
            y = self.running_projection.matmul(x_mean)
        output = y.view(c, n, h, w).transpose(0, 1)
        if self.affine:
            output = output * self.weight + self.bias
        return output


def train(model, loader, optimizer, criterion, device):
    model.train()
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    device = torch.device("cuda")
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1),
        DBN(64, num_groups=16),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(64, 10),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))) for _ in range(100)]
    for epoch in range(10):
        train(model, data, optimizer, nn.CrossEntropyLoss(), device)
