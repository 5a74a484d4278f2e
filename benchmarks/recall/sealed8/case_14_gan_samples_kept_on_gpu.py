# Recall case 14 (sealed8): periodic sample images stay on the GPU and sampling runs while last step's gradients are still allocated
# Thread: https://github.com/rosinality/alias-free-gan-pytorch/pull/17
# Reported (issue #16): rank 0 used ~4x the VRAM of the other GPUs during training, only batch size 1 fit on a 1080 Ti
# Confirmed cause: the sampling branch kept the generated grid on the GPU (until the next sample) and ran its forward
#   pass while G/D gradients from the previous backward still existed; the merged PR zeroes the grads before sampling,
#   moves the samples to the CPU immediately and drops them -- "Allows 4X increase in batchsize"; maintainer merged
# Class: results of a periodic inference pass kept on the device in a long-lived loop variable (+ stale .grad buffers)
import torch
from torch import nn
from torchvision import utils


class Generator(nn.Module):
    def __init__(self, style_dim=512, size=256):
        super().__init__()
        self.size = size
        self.net = nn.Sequential(nn.Linear(style_dim, 4 * 4 * 512), nn.Unflatten(1, (512, 4, 4)),
                                 nn.Upsample(scale_factor=size // 4), nn.Conv2d(512, 3, 3, padding=1), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, size=256):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 4, 4), nn.LeakyReLU(0.2), nn.Flatten(), nn.LazyLinear(1))

    def forward(self, x):
        return self.net(x)


def accumulate(model1, model2, decay=0.999):
    par1 = dict(model1.named_parameters())
    par2 = dict(model2.named_parameters())
    for k in par1.keys():
        par1[k].data.mul_(decay).add_(par2[k].data, alpha=1 - decay)


def train(loader, generator, discriminator, g_optim, d_optim, g_ema, device, n_iter=800000, n_sample=16):
    sample_z = torch.randn(n_sample, 512, device=device)
    for i in range(n_iter):
        real_img = next(loader).to(device)
        noise = torch.randn(real_img.shape[0], 512, device=device)
        fake_img = generator(noise)
        d_loss = nn.functional.softplus(discriminator(fake_img.detach())).mean() + \
            nn.functional.softplus(-discriminator(real_img)).mean()
        discriminator.zero_grad()
        d_loss.backward()
        d_optim.step()

        g_loss = nn.functional.softplus(-discriminator(generator(noise))).mean()
        generator.zero_grad()
        g_loss.backward()
        g_optim.step()
        accumulate(g_ema, generator)

        if i % 100 == 0:
            with torch.no_grad():
                g_ema.eval()
                sample = g_ema(sample_z)  # leak: ANY
                utils.save_image(sample, f"sample/{str(i).zfill(6)}.png", nrow=int(n_sample ** 0.5),
                                 normalize=True, value_range=(-1, 1))


def infinite(loader):
    while True:
        for batch in loader:
            yield batch


if __name__ == "__main__":
    device = "cuda"
    generator, g_ema = Generator().to(device), Generator().to(device)
    discriminator = Discriminator().to(device)
    g_optim = torch.optim.Adam(generator.parameters(), lr=0.002, betas=(0, 0.99))
    d_optim = torch.optim.Adam(discriminator.parameters(), lr=0.002, betas=(0, 0.99))
    data = torch.utils.data.DataLoader(torch.rand(1024, 3, 256, 256) * 2 - 1, batch_size=4, drop_last=True)
    train(infinite(data), generator, discriminator, g_optim, d_optim, g_ema, device)
