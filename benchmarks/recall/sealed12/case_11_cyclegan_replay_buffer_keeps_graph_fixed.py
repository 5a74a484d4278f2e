# Fixed twin of case 11: the generator output is detached before it is pushed into the replay buffer
# Thread: https://github.com/eriklindernoren/PyTorch-GAN/issues/71
# Reported: question why detach() is applied after push_and_pop instead of before; the buffer keeps the graph of stored fakes and wastes memory
# Confirmed cause: fake_A_buffer.push_and_pop(fake_A) stores slices of a non-detached generator output, so each stored image pins that batch's generator graph; the issue proposes pushing fake_A.detach() (no maintainer reply — weak)
# Class: history/replay buffer filled with tensors that still require grad
import random

import torch
import torch.nn as nn


class ReplayBuffer:
    def __init__(self, max_size=50):
        self.max_size = max_size
        self.data = []

    def push_and_pop(self, data):
        to_return = []
        for element in data:
            element = torch.unsqueeze(element, 0)
            if len(self.data) < self.max_size:
                self.data.append(element)
                to_return.append(element)
            elif random.uniform(0, 1) > 0.5:
                i = random.randint(0, self.max_size - 1)
                to_return.append(self.data[i].clone())
                self.data[i] = element
            else:
                to_return.append(element)
        return torch.cat(to_return)


def train(G_AB, G_BA, D_A, D_B, dataloader, n_epochs=200, device="cuda"):
    criterion_GAN = nn.MSELoss()
    criterion_cycle = nn.L1Loss()
    opt_G = torch.optim.Adam(list(G_AB.parameters()) + list(G_BA.parameters()), lr=2e-4, betas=(0.5, 0.999))
    opt_D_A = torch.optim.Adam(D_A.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fake_A_buffer = ReplayBuffer()
    for epoch in range(n_epochs):
        for batch in dataloader:
            real_A, real_B = batch["A"].to(device), batch["B"].to(device)
            valid = torch.ones(real_A.size(0), 1, 16, 16, device=device)
            fake = torch.zeros_like(valid)

            opt_G.zero_grad()
            fake_A = G_BA(real_B)
            loss_GAN = criterion_GAN(D_A(fake_A), valid)
            loss_cycle = criterion_cycle(G_AB(fake_A), real_B)
            (loss_GAN + 10.0 * loss_cycle).backward()
            opt_G.step()

            opt_D_A.zero_grad()
            loss_real = criterion_GAN(D_A(real_A), valid)
            fake_A_ = fake_A_buffer.push_and_pop(fake_A.detach())
            loss_fake = criterion_GAN(D_A(fake_A_), fake)
            ((loss_real + loss_fake) / 2).backward()
            opt_D_A.step()
