# Recall case 20 (sealed4): periodic EMA sampling inside the diffusion/flow training loop runs the sampler and VAE decode with autograd on
# Thread: https://github.com/willisma/SiT/pull/43
# Reported: OOM error when sampling during training (train.py, every --sample-every steps)
# Confirmed cause: the sample-generation block (ODE sampler over the EMA model + vae.decode + gather) was not under torch.no_grad(), so it built a graph through the decoder for a full batch of samples; the merged PR simply wraps it in torch.no_grad() (another user reported the same problem)
# Class: generation / evaluation helper run with grad enabled inside the training loop
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F


class SiT(nn.Module):
    def __init__(self, ch=4, dim=768):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(ch + 1, dim, 3, padding=1), nn.SiLU(), nn.Conv2d(dim, ch, 3, padding=1))

    def forward(self, x, t, y=None):
        return self.net(torch.cat([x, t.view(-1, 1, 1, 1).expand(-1, 1, *x.shape[2:])], dim=1))


class VAEDecoder(nn.Module):
    def __init__(self, ch=4, width=256):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(ch, width, 3, padding=1), nn.SiLU(), nn.Upsample(scale_factor=8),
            nn.Conv2d(width, width, 3, padding=1), nn.SiLU(), nn.Conv2d(width, 3, 3, padding=1))

    def decode(self, z):
        return self.net(z)


@torch.no_grad()
def update_ema(ema_model, model, decay=0.9999):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.mul_(decay).add_(p.data, alpha=1 - decay)


def sample_ode(model_fn, z, num_steps=50):
    x = z
    ts = torch.linspace(0, 1, num_steps + 1, device=z.device)
    for i in range(num_steps):
        t = ts[i].expand(x.size(0))
        x = x + (ts[i + 1] - ts[i]) * model_fn(x, t)
    return x


def main(steps=400_000, sample_every=10_000, batch=256, device="cuda"):
    model = SiT().to(device)
    ema = deepcopy(model).to(device)
    for p in ema.parameters():
        p.requires_grad_(False)
    vae = VAEDecoder().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    zs = torch.randn(batch, 4, 32, 32, device=device)
    ema.eval()
    for train_steps in range(1, steps + 1):
        x1 = torch.randn(batch, 4, 32, 32, device=device)
        x0 = torch.randn_like(x1)
        t = torch.rand(batch, device=device)
        xt = t.view(-1, 1, 1, 1) * x1 + (1 - t.view(-1, 1, 1, 1)) * x0
        loss = F.mse_loss(model(xt, t), x1 - x0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        update_ema(ema, model)

        if train_steps % sample_every == 0 and train_steps > 0:
            samples = sample_ode(ema.forward, zs)  # leak: ANY
            samples = vae.decode(samples / 0.18215)  # leak: ANY
            images = (samples.clamp(-1, 1) + 1) / 2
            torch.save(images.cpu(), f"samples_{train_steps:07d}.pt")


if __name__ == "__main__":
    main()
