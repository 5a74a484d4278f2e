# Fixed twin of case 13: validation runs with model.train(False) inside torch.no_grad() and restores train mode afterwards
# Thread: https://github.com/aiqm/torchani/pull/560
# Reported: validation used more memory and time than needed (graphs built for every validation batch)
# Confirmed cause: merged PR deactivates autograd during validation and toggles model.train(False)/(True) around it
# Class: evaluation helper called with grad on
import math

import torch
import torch.nn as nn


class AtomicNetwork(nn.Module):
    def __init__(self, aev_dim=384):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(aev_dim, 160), nn.CELU(0.1), nn.Linear(160, 128), nn.CELU(0.1), nn.Linear(128, 1))

    def forward(self, species, aevs):
        energies = self.net(aevs).squeeze(-1)
        energies = energies.masked_fill(species < 0, 0.0)
        return species, energies.sum(-1)


def aev_computer(species, coordinates):
    d = torch.cdist(coordinates, coordinates)
    feats = torch.exp(-d.unsqueeze(-1) * torch.linspace(0.5, 5.0, 384, device=d.device)).sum(2)
    return species, feats


mse_sum = nn.MSELoss(reduction="sum")


def validate(model, validation):
    total_mse = 0.0
    count = 0
    model.train(False)
    with torch.no_grad():
      for properties in validation:
        species = properties["species"].cuda()
        coordinates = properties["coordinates"].cuda().float()
        true_energies = properties["energies"].cuda().float()
        _, predicted_energies = model(aev_computer(species, coordinates))
        total_mse += mse_sum(predicted_energies, true_energies).item()
        count += predicted_energies.shape[0]
    model.train(True)
    return math.sqrt(total_mse / count)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.atomic = AtomicNetwork()

    def forward(self, species_aevs):
        return self.atomic(*species_aevs)


if __name__ == "__main__":
    model = Model().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [{"species": torch.randint(0, 4, (256, 24)), "coordinates": torch.randn(256, 24, 3),
                "energies": torch.randn(256)} for _ in range(100)]
    for epoch in range(50):
        rmse = validate(model, batches[:30])
        for props in batches:
            _, pred = model(aev_computer(props["species"].cuda(), props["coordinates"].cuda()))
            loss = mse_sum(pred, props["energies"].cuda()) / pred.shape[0]
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, rmse)
