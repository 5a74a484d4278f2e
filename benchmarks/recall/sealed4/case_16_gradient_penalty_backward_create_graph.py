# Recall case 16 (sealed4): WGAN-GP penalty obtains input gradients with .backward(create_graph=True) and reads merged.grad
# Thread: https://github.com/akanimax/pro_gan_pytorch/pull/12
# Reported: GPU memory usage increases with each batch during ProGAN training and frequently runs out of memory
# Confirmed cause: `op.backward(gradient=ones, create_graph=True)` also writes graph-carrying .grad into every discriminator parameter (a reference cycle, pytorch#4661); the merged PR computes the penalty gradient with torch.autograd.grad(..., create_graph=True) instead (maintainer merged, another user confirmed the leak)
# Class: backward(create_graph=True) used for a gradient penalty (graph kept in .grad / reference cycle)
import torch as th
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self, ch=256):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, ch, 3, padding=1), nn.LeakyReLU(0.2), nn.AvgPool2d(2),
            nn.Conv2d(ch, ch, 3, padding=1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1),
            nn.Flatten(), nn.Linear(ch, 1),
        )

    def forward(self, x, height, alpha):
        return self.net(x)


class Generator(nn.Module):
    def __init__(self, latent=512):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, 3 * 64 * 64), nn.Tanh())

    def forward(self, z, height, alpha):
        return self.net(z).view(-1, 3, 64, 64)


class WGAN_GP:
    def __init__(self, dis, drift=0.001, use_gp=True):
        self.dis, self.drift, self.use_gp = dis, drift, use_gp

    def _gradient_penalty(self, real_samps, fake_samps, height, alpha, reg_lambda=10):
        batch_size = real_samps.shape[0]
        epsilon = th.rand((batch_size, 1, 1, 1)).to(fake_samps.device)
        merged = (epsilon * real_samps) + ((1 - epsilon) * fake_samps)
        merged.requires_grad = True
        op = self.dis(merged, height, alpha)
        op.backward(gradient=th.ones_like(op), create_graph=True)  # leak: ANY
        gradient = merged.grad
        gradient = gradient.view(gradient.shape[0], -1)
        return reg_lambda * ((gradient.norm(p=2, dim=1) - 1) ** 2).mean()

    def dis_loss(self, real_samps, fake_samps, height, alpha):
        fake_out = self.dis(fake_samps, height, alpha)
        real_out = self.dis(real_samps, height, alpha)
        loss = th.mean(fake_out) - th.mean(real_out) + self.drift * th.mean(real_out ** 2)
        if self.use_gp:
            loss += self._gradient_penalty(real_samps, fake_samps, height, alpha)
        return loss

    def gen_loss(self, fake_samps, height, alpha):
        return -th.mean(self.dis(fake_samps, height, alpha))


if __name__ == "__main__":
    device = th.device("cuda")
    gen, dis = Generator().to(device), Discriminator().to(device)
    g_opt = th.optim.Adam(gen.parameters(), lr=1e-3, betas=(0, 0.99))
    d_opt = th.optim.Adam(dis.parameters(), lr=1e-3, betas=(0, 0.99))
    loss = WGAN_GP(dis)
    for step in range(100_000):
        real = th.rand(16, 3, 64, 64, device=device) * 2 - 1
        z = th.randn(16, 512, device=device)
        fake = gen(z, 4, 1.0).detach()
        d_opt.zero_grad()
        d_loss = loss.dis_loss(real, fake, 4, 1.0)
        d_loss.backward()
        d_opt.step()
        g_opt.zero_grad()
        g_loss = loss.gen_loss(gen(z, 4, 1.0), 4, 1.0)
        g_loss.backward()
        g_opt.step()
        if step % 100 == 0:
            print(step, d_loss.item(), g_loss.item(), th.cuda.memory_allocated() / 2**20)
