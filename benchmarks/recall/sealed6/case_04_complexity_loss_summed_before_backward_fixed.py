# Fixed twin of case 04: the error loss is backpropagated first (freeing its graph), then the complexity loss is computed and backpropagated on its own
# Thread: https://github.com/numenta/nupic.research/pull/358
# Reported: complexity-loss experiments were memory-constrained because the stored forward graph used nearly all GPU memory while the complexity loss was being computed
# Confirmed cause: error loss and complexity loss were added and backpropagated together, so both graphs coexisted; merged PR backpropagates the error loss first (freeing its graph) and then computes/backpropagates the complexity loss (author profiled the run)
# Class: a second (regularisation) loss is computed and kept alongside the main graph instead of being backpropagated separately
import math

import torch
import torch.nn.functional as F
from torch import nn


class HardConcreteLinear(nn.Linear):
    """Linear layer with L0 gates; regularization() builds per-weight tensors."""

    def __init__(self, in_features, out_features, droprate_init=0.5, temperature=2 / 3):
        super().__init__(in_features, out_features)
        self.loga = nn.Parameter(torch.full_like(self.weight, math.log(1 - droprate_init) - math.log(droprate_init)))
        self.temperature = temperature

    def regularization(self):
        limit_a, limit_b = -0.1, 1.1
        shift = self.temperature * math.log(-limit_a / limit_b)
        p_active = torch.sigmoid(self.loga - shift)
        return p_active.sum()

    def forward(self, x):
        u = torch.rand_like(self.loga).clamp(1e-6, 1 - 1e-6)
        s = torch.sigmoid((torch.log(u) - torch.log(1 - u) + self.loga) / self.temperature)
        gate = (s * 1.2 - 0.1).clamp(0, 1)
        return F.linear(x, self.weight * gate, self.bias)


def l0_complexity_loss(model, weight=1e-4):
    return weight * sum(m.regularization() for m in model.modules() if isinstance(m, HardConcreteLinear))


def train_model(model, loader, optimizer, device, criterion=F.cross_entropy, complexity_loss_fn=None,
                batches_in_epoch=None):
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        if batches_in_epoch is not None and batch_idx >= batches_in_epoch:
            break
        data, target = data.to(device, non_blocking=True), target.to(device, non_blocking=True)
        optimizer.zero_grad()
        output = model(data)
        error_loss = criterion(output, target)
        error_loss.backward()
        del error_loss, output
        if complexity_loss_fn is not None:
            complexity_loss = complexity_loss_fn(model)
            complexity_loss.backward()
        optimizer.step()


if __name__ == "__main__":
    device = torch.device("cuda")
    model = nn.Sequential(HardConcreteLinear(3072, 4096), nn.ReLU(), HardConcreteLinear(4096, 4096), nn.ReLU(),
                          HardConcreteLinear(4096, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.utils.data.TensorDataset(torch.randn(8192, 3072), torch.randint(0, 10, (8192,)))
    loader = torch.utils.data.DataLoader(data, batch_size=256, shuffle=True)
    for epoch in range(5):
        train_model(model, loader, opt, device, complexity_loss_fn=l0_complexity_loss)
