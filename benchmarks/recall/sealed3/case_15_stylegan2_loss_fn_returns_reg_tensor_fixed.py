# Fixed twin of case 15: GAN loss helpers return their regularisation terms as graph-carrying tensors for the stats
# Thread: https://github.com/adriansahlman/stylegan2_pytorch/pull/11
# Reported: CUDA memory issues during loss.backward() while training StyleGAN2
# Confirmed cause: the computation graph of the losses was being saved each iteration through the values returned for
#   reporting; changing those loss functions to return plain scalars solved it (PR merged by the maintainer)
# Class: loss helper's second value (only used for logging) returned as a tensor and accumulated
import torch
import torch.nn as nn
import torch.nn.functional as F


def G_logistic_ns(G, D, latents):
    fakes = G(latents)
    loss = F.softplus(-D(fakes)).mean()
    return loss, None


def D_logistic_r1(G, D, latents, reals, r1_gamma=10.0):
    reals = reals.detach().requires_grad_(True)
    with torch.no_grad():
        fakes = G(latents)
    real_scores = D(reals)
    fake_scores = D(fakes)
    loss = F.softplus(fake_scores).mean() + F.softplus(-real_scores).mean()
    grad = torch.autograd.grad(real_scores.sum(), reals, create_graph=True)[0]
    reg = grad.pow(2).flatten(1).sum(1).mean() * (r1_gamma * 0.5)
    loss = loss + reg
    return loss, reg.item()


class Generator(nn.Module):
    def __init__(self, z=512):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z, 4 * 4 * 512), nn.Unflatten(1, (512, 4, 4)),
                                 nn.Upsample(scale_factor=16), nn.Conv2d(512, 3, 3, padding=1))

    def forward(self, z):
        return torch.tanh(self.net(z))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 256, 3, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(256, 512, 3, 2, 1),
                                 nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1))

    def forward(self, x):
        return self.net(x)


class Trainer:
    def __init__(self, device, log_interval=500):
        self.device = device
        self.G, self.D = Generator().to(device), Discriminator().to(device)
        self.G_opt = torch.optim.Adam(self.G.parameters(), lr=2e-3, betas=(0, 0.99))
        self.D_opt = torch.optim.Adam(self.D.parameters(), lr=2e-3, betas=(0, 0.99))
        self.log_interval = log_interval
        self.stats = {"G_loss": 0.0, "D_loss": 0.0, "D_reg": 0.0}

    def step(self, reals):
        latents = torch.randn(reals.size(0), 512, device=self.device)
        d_loss, d_reg = D_logistic_r1(self.G, self.D, latents, reals)
        self.D_opt.zero_grad()
        d_loss.backward()
        self.D_opt.step()
        g_loss, _ = G_logistic_ns(self.G, self.D, latents)
        self.G_opt.zero_grad()
        g_loss.backward()
        self.G_opt.step()
        self.stats["G_loss"] += g_loss.item()
        self.stats["D_loss"] += d_loss.item()
        self.stats["D_reg"] += d_reg

    def train(self, n_steps):
        for it in range(1, n_steps + 1):
            self.step(torch.rand(16, 3, 64, 64, device=self.device) * 2 - 1)
            if it % self.log_interval == 0:
                print({k: float(v) / self.log_interval for k, v in self.stats.items()})
                self.stats = {k: 0.0 for k in self.stats}


if __name__ == "__main__":
    Trainer("cuda" if torch.cuda.is_available() else "cpu").train(100000)
