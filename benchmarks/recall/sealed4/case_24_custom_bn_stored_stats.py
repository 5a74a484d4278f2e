# Recall case 24 (sealed4): custom (class-conditional) batch-norm writes its stored mean/var buffers by slice assignment from graph-carrying statistics
# Thread: https://github.com/facebookresearch/synsin/pull/20
# Reported: using the ResNetEncoder/ResNetDecoder models leaks about 7 MB/s of CPU memory; training crashes after a couple of days
# Confirmed cause: `self.stored_mean[:] = self.stored_mean * (1 - momentum) + mean * momentum` is not protected from autograd and extends the graph on every bn.forward(); the merged PR (maintainers jcjohnson/oawiles: "indeed looks like a bug") wraps the updates in torch.no_grad()
# Class: running-statistic buffer updated (slice assignment) from tensors that require grad
import torch
import torch.nn as nn
import torch.nn.functional as F


def manual_bn(x, gain, bias, eps=1e-5):
    mean = x.mean(dim=[0, 2, 3], keepdim=True)
    var = x.var(dim=[0, 2, 3], keepdim=True, unbiased=False)
    out = (x - mean) * torch.rsqrt(var + eps) * gain + bias
    return out, mean.squeeze(), var.squeeze()


class bn(nn.Module):
    def __init__(self, num_channels, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("stored_mean", torch.zeros(num_channels))
        self.register_buffer("stored_var", torch.ones(num_channels))
        self.accumulate_standing = False

    def forward(self, x, gain, bias):
        if self.training:
            out, mean, var = manual_bn(x, gain, bias, eps=self.eps)
            self.stored_mean[:] = self.stored_mean * (1 - self.momentum) + mean * self.momentum  # leak: ANY
            self.stored_var[:] = self.stored_var * (1 - self.momentum) + var * self.momentum  # leak: ANY
            return out
        mean = self.stored_mean.view(1, -1, 1, 1)
        var = self.stored_var.view(1, -1, 1, 1)
        return (x - mean) * torch.rsqrt(var + self.eps) * gain + bias


class ccbn(nn.Module):
    """Class-conditional BN: gain and bias predicted from a conditioning vector."""

    def __init__(self, output_size, input_size=128):
        super().__init__()
        self.gain = nn.Linear(input_size, output_size)
        self.bias = nn.Linear(input_size, output_size)
        self.bn = bn(output_size)

    def forward(self, x, y):
        gain = (1 + self.gain(y)).view(y.size(0), -1, 1, 1)
        bias = self.bias(y).view(y.size(0), -1, 1, 1)
        return self.bn(x, gain, bias)


class ResNetBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.bn1, self.bn2 = ccbn(ch), ccbn(ch)
        self.conv1, self.conv2 = nn.Conv2d(ch, ch, 3, padding=1), nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x, y):
        h = self.conv1(F.relu(self.bn1(x, y)))
        return x + self.conv2(F.relu(self.bn2(h, y)))


class ResNetDecoder(nn.Module):
    def __init__(self, ch=64, n_blocks=8):
        super().__init__()
        self.inp = nn.Conv2d(64, ch, 3, padding=1)
        self.blocks = nn.ModuleList([ResNetBlock(ch) for _ in range(n_blocks)])
        self.out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, feats, y):
        h = self.inp(feats)
        for block in self.blocks:
            h = block(h, y)
        return torch.tanh(self.out(h))


if __name__ == "__main__":
    device = "cuda"
    decoder = ResNetDecoder().to(device)
    opt = torch.optim.Adam(decoder.parameters(), lr=1e-4)
    for it in range(1_000_000):
        feats = torch.randn(4, 64, 256, 256, device=device)
        y = torch.randn(4, 128, device=device)
        target = torch.rand(4, 3, 256, 256, device=device) * 2 - 1
        loss = F.l1_loss(decoder(feats, y), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
