# Recall case 16 (sealed10): during training, the generator produces the periodic sample grid with autograd recording
# Thread: https://github.com/akanimax/msg-gan-v1/pull/3
# Reported: large GPU memory consumption from the image samples generated during training (issue #2 of the repo)
# Confirmed cause: sample generation at feedback/checkpoint time ran the generator with gradients tracked; the merged PR wraps it in torch.no_grad() ("Don't store gradients during inference"), approved and run by the maintainer
# Class: generation/inference inside the training loop with grad on
import os

import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, latent_size=512, depth=7):
        super().__init__()
        layers = [nn.ConvTranspose2d(latent_size, 256, 4), nn.LeakyReLU(0.2)]
        for _ in range(depth - 2):
            layers += [nn.Upsample(scale_factor=2), nn.Conv2d(256, 256, 3, padding=1), nn.LeakyReLU(0.2)]
        layers += [nn.Conv2d(256, 3, 1)]
        self.net = nn.Sequential(*layers)

    def forward(self, z):
        return torch.tanh(self.net(z.view(z.size(0), -1, 1, 1)))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.AdaptiveAvgPool2d(8), nn.Flatten(), nn.Linear(3 * 64, 1))

    def forward(self, x):
        return self.net(x)


class MSG_GAN:
    def __init__(self, device):
        self.gen = Generator().to(device)
        self.dis = Discriminator().to(device)
        self.device = device
        self.g_opt = torch.optim.Adam(self.gen.parameters(), 3e-4)
        self.d_opt = torch.optim.Adam(self.dis.parameters(), 3e-4)

    def train_step(self, real):
        z = torch.randn(real.size(0), 512, device=self.device)
        fake = self.gen(z)
        d_loss = nn.functional.softplus(self.dis(fake.detach())).mean() + nn.functional.softplus(-self.dis(real)).mean()
        self.d_opt.zero_grad(); d_loss.backward(); self.d_opt.step()
        g_loss = nn.functional.softplus(-self.dis(fake)).mean()
        self.g_opt.zero_grad(); g_loss.backward(); self.g_opt.step()
        return d_loss.item(), g_loss.item()

    def create_grid(self, fixed_input, sample_dir, epoch):
        samples = self.gen(fixed_input)  # leak: ANY
        os.makedirs(sample_dir, exist_ok=True)
        torch.save(samples.detach().cpu(), os.path.join(sample_dir, f"gen_{epoch}.pt"))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    gan = MSG_GAN(device)
    fixed_input = torch.randn(64, 512, device=device)
    for epoch in range(200):
        for _ in range(50):
            gan.train_step(torch.randn(16, 3, 128, 128, device=device))
        gan.create_grid(fixed_input, "samples", epoch)
