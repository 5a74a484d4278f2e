# Recall case 07 (sealed14): per-batch losses are summed into epoch totals as tensors, so every batch's graph stays alive
# Thread: https://github.com/boschresearch/Continuous-Recurrent-Units/pull/4
# Reported: high memory usage during training that eventually hangs the system
# Confirmed cause: losses kept without .item() hold their computation graphs; the PR author's fix stores the values only (PR closed, not shown merged: weaker)
# Class: epoch loss / metric accumulation with tensors that carry the graph
import torch
import torch.nn as nn


class CRU(nn.Module):
    def __init__(self, obs_dim=24, lat_dim=30):
        super().__init__()
        self.enc = nn.GRU(obs_dim, lat_dim, batch_first=True)
        self.dec_mean = nn.Linear(lat_dim, obs_dim)
        self.dec_var = nn.Linear(lat_dim, obs_dim)

    def forward(self, obs):
        h, _ = self.enc(obs)
        return self.dec_mean(h), nn.functional.softplus(self.dec_var(h)) + 1e-4


def gaussian_nll(mean, var, target):
    return 0.5 * (torch.log(var) + (target - mean) ** 2 / var).mean()


def train_epoch(model, loader, optimizer, device):
    epoch_ll, epoch_mse = 0, 0
    for obs, target in loader:
        obs, target = obs.to(device), target.to(device)
        mean, var = model(obs)
        loss = gaussian_nll(mean, var, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_ll += loss  # leak: ANY
        epoch_mse += nn.functional.mse_loss(mean, target)  # leak: ANY
    return epoch_ll / len(loader), epoch_mse / len(loader)


if __name__ == "__main__":
    dev = torch.device("cuda")
    m = CRU().to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    data = [(torch.randn(50, 150, 24), torch.randn(50, 150, 24)) for _ in range(400)]
    for epoch in range(100):
        print(epoch, train_epoch(m, data, opt, dev))
