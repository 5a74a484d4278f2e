# Fixed twin of case 22: ema_scores is created with requires_grad=False, so the EMA update builds no autograd chain
# Thread: https://github.com/RaoFoundation/bittensor/pull/557
# Reported: GPU utilisation / memory issue in the template miner during long runs
# Confirmed cause: ema_scores was (re)created as torch.nn.Parameter(..., requires_grad=True) and updated every batch with `decay * ema_scores + (1 - decay) * scores`, so each update extended an autograd chain back to the first batch; the merged PR sets ema_scores requires_grad=False "to avoid memory leak"
# Class: running-statistic / history buffer updated with autograd enabled (never backpropagated)
import math
from types import SimpleNamespace

import torch
import torch.nn as nn


class Nucleus(nn.Module):
    def __init__(self, n_peers, dim=1024):
        super().__init__()
        self.encoder = nn.Linear(dim, dim)
        self.peer_weights = nn.Parameter(torch.ones(n_peers))

    def forward(self, inputs, peer_outputs):
        local = self.encoder(inputs)
        w = torch.softmax(self.peer_weights[: peer_outputs.size(0)], dim=0)
        remote = (w.view(-1, 1, 1) * peer_outputs).sum(0)
        loss = ((local - remote) ** 2).mean()
        # Fisher-style importance score of each peer for this batch
        scores = torch.autograd.grad(loss, self.peer_weights, retain_graph=True)[0].abs()
        return SimpleNamespace(loss=loss, scores=scores)


class Miner:
    def __init__(self, n_peers=64, device="cuda"):
        self.device = device
        self.nucleus = Nucleus(n_peers).to(device)
        self.optimizer = torch.optim.SGD(self.nucleus.parameters(), lr=0.01, momentum=0.9)
        self.stats = SimpleNamespace(
            global_step=0,
            local_epoch_loss=math.inf,
            ema_scores=torch.nn.Parameter(torch.zeros(0, device=device), requires_grad=False),
        )
        self.fisher_ema_decay = 0.995

    def run_epoch(self, n_batches, n_peers):
        total_loss = 0.0
        for _ in range(n_batches):
            inputs = torch.randn(32, 1024, device=self.device)
            peer_outputs = torch.randn(n_peers, 32, 1024, device=self.device)
            output = self.nucleus(inputs, peer_outputs)
            self.optimizer.zero_grad()
            output.loss.backward()
            self.optimizer.step()
            total_loss += output.loss.item()

            scores = output.scores
            chain_growth = scores.shape[0] - self.stats.ema_scores.shape[0]
            if chain_growth > 0:
                self.stats.ema_scores = torch.nn.Parameter(torch.cat(
                    [self.stats.ema_scores, torch.zeros([chain_growth], dtype=torch.float32, device=self.device)]),
                    requires_grad=False)
            self.stats.ema_scores = self.fisher_ema_decay * self.stats.ema_scores + (1 - self.fisher_ema_decay) * scores
            self.stats.global_step += 1
        self.stats.local_epoch_loss = total_loss / n_batches


if __name__ == "__main__":
    miner = Miner()
    for epoch in range(10_000):
        miner.run_epoch(n_batches=100, n_peers=64)
        print(epoch, miner.stats.local_epoch_loss, miner.stats.ema_scores.topk(5).indices.tolist())
