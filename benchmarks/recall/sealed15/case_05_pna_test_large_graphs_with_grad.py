# Recall case 05 (sealed15): PNA benchmark evaluates the test split of large graphs with autograd on
# Thread: https://github.com/lukecavabarrett/pna/pull/14
# Reported: OOM during testing on large graphs on machines with limited memory
# Confirmed cause: the merged PR states the cause and fix: autograd was left enabled while testing, so each test forward pass kept its graph/activations; disabling autograd during testing avoids the OOM
# Class: test loop over large graphs with grad enabled
import torch
import torch.nn as nn
import torch.nn.functional as F


class PNALayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pre = nn.Linear(2 * dim, dim)
        self.post = nn.Linear(4 * dim + dim, dim)

    def forward(self, h, adj):
        deg = adj.sum(-1, keepdim=True).clamp(min=1)
        msg = F.relu(self.pre(torch.cat([h.unsqueeze(1).expand(-1, h.size(0), -1), h.unsqueeze(0).expand(h.size(0), -1, -1)], -1)))
        msg = msg * adj.unsqueeze(-1)
        mean = msg.sum(1) / deg
        mx = msg.max(1).values
        mn = msg.min(1).values
        std = (msg.pow(2).sum(1) / deg - mean.pow(2)).clamp(min=1e-5).sqrt()
        return h + F.relu(self.post(torch.cat([h, mean, mx, mn, std], -1)))


class PNANet(nn.Module):
    def __init__(self, in_dim=16, dim=128, layers=4):
        super().__init__()
        self.embed = nn.Linear(in_dim, dim)
        self.layers = nn.ModuleList(PNALayer(dim) for _ in range(layers))
        self.readout = nn.Linear(dim, 1)

    def forward(self, x, adj):
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h, adj)
        return self.readout(h.mean(0))


def evaluate_network(model, device, data_loader):  # leak: ANY
    model.eval()
    epoch_test_mae = 0.0
    for iter, (batch_x, batch_adj, batch_targets) in enumerate(data_loader):
        batch_x, batch_adj, batch_targets = batch_x.to(device), batch_adj.to(device), batch_targets.to(device)
        batch_scores = model(batch_x, batch_adj)  # leak: ANY
        epoch_test_mae += F.l1_loss(batch_scores, batch_targets).item()
    return epoch_test_mae / (iter + 1)


if __name__ == "__main__":
    dev = torch.device("cuda")
    net = PNANet().to(dev)
    graphs = []
    for n in (2000, 3000, 4000):
        graphs.append((torch.randn(n, 16), (torch.rand(n, n) < 0.01).float(), torch.randn(1)))
    print(evaluate_network(net, dev, graphs))
