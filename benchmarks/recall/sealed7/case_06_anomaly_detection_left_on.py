# Recall case 06 (sealed7): torch.autograd.set_detect_anomaly(True) is switched on at import time of a shared utils module
# Thread: https://github.com/stanford-iprl-lab/nerf_shared/issues/10
# Reported: NeRF training runs at ~6 it/s; turning anomaly detection off brings it to ~9 it/s
# Confirmed cause: the debug-only anomaly mode was left enabled globally in utils.py (every op records a traceback for backward checks); maintainers turned it off and closed the issue
# Class: debugging/runtime tool left enabled for the whole training run
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.autograd.set_detect_anomaly(True)  # leak: ANY

img2mse = lambda x, y: torch.mean((x - y) ** 2)


class NeRF(nn.Module):
    def __init__(self, D=8, W=256, input_ch=63, input_ch_views=27):
        super().__init__()
        self.pts_linears = nn.ModuleList([nn.Linear(input_ch, W)] + [nn.Linear(W, W) for _ in range(D - 1)])
        self.views_linear = nn.Linear(W + input_ch_views, W // 2)
        self.alpha_linear = nn.Linear(W, 1)
        self.rgb_linear = nn.Linear(W // 2, 3)
        self.input_ch = input_ch

    def forward(self, x):
        pts, views = torch.split(x, [self.input_ch, x.shape[-1] - self.input_ch], dim=-1)
        h = pts
        for layer in self.pts_linears:
            h = F.relu(layer(h))
        alpha = self.alpha_linear(h)
        h = F.relu(self.views_linear(torch.cat([h, views], -1)))
        return torch.cat([torch.sigmoid(self.rgb_linear(h)), alpha], -1)


def train(model, rays, targets, iters=200000):
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    for i in range(iters):
        idx = torch.randint(0, rays.shape[0], (1024,), device=rays.device)
        rgb = model(rays[idx])[..., :3]
        loss = img2mse(rgb, targets[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
