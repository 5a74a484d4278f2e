# Fixed twin of case 11: states are detached when they are swapped back into the batch
# Thread: https://github.com/TorchSim/torch-sim/pull/590
# Reported: autograd graph growth (memory) when running a UMA model through the autobatching swap loop
# Confirmed cause: states kept their autograd history from step to step; maintainer-merged PR detaches states in the swap loop and chunked init
# Class: state carried across loop iterations without detach
import torch
import torch.nn as nn


class ForceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, 64), nn.SiLU(), nn.Linear(64, 1))

    def forward(self, positions):
        positions = positions.requires_grad_(True)
        energy = self.mlp(positions).sum()
        forces = -torch.autograd.grad(energy, positions, create_graph=self.training)[0]
        return energy, forces


def integrate_step(model, positions, velocities, dt=1e-3):
    _, forces = model(positions)
    velocities = velocities + dt * forces
    positions = positions + dt * velocities
    return positions, velocities


def run_swap_loop(model, batches, n_steps=10000):
    finished = []
    pos, vel = batches.pop(0)
    for step in range(n_steps):
        pos, vel = integrate_step(model, pos.detach(), vel.detach())
        if step % 500 == 499 and batches:
            finished.append((pos.detach().cpu(), vel.detach().cpu()))
            pos, vel = batches.pop(0)
    return finished
