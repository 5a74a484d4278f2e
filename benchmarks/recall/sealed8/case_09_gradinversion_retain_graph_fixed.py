# Fixed twin of case 09: plain backward() in the closure and best-so-far results kept as detached CPU copies / floats
# Thread: https://github.com/Koukyosyumei/AIJack/issues/133
# Reported: "Running out of GPU resource" -- memory summary shows allocations piling up during GradInversion attacks
# Confirmed cause: the maintainer's merged fix (PR #136, https://github.com/Koukyosyumei/AIJack/pull/136, "Close #133")
#   avoids `retain_graph=True` in the closure and saves the intermediate (best) results on the CPU instead of the GPU
# Class: optimisation loop with backward(retain_graph=True) plus best-so-far tensors (with graph) kept on the device
import copy

import torch
from torch import nn


def l2(fake_gradients, received_gradients):
    return sum(((f - r) ** 2).sum() for f, r in zip(fake_gradients, received_gradients))


def total_variation(x):
    dx = torch.mean(torch.abs(x[:, :, :, :-1] - x[:, :, :, 1:]))
    dy = torch.mean(torch.abs(x[:, :, :-1, :] - x[:, :, 1:, :]))
    return dx + dy


class GradientInversion_Attack:
    def __init__(self, target_model: nn.Module, x_shape, num_iteration: int = 1000, lr: float = 0.1,
                 tv_reg_coef: float = 1e-4, device: str = "cuda", log_interval: int = 100):
        self.target_model = target_model.to(device)
        self.x_shape = x_shape
        self.num_iteration = num_iteration
        self.lr = lr
        self.tv_reg_coef = tv_reg_coef
        self.device = device
        self.log_interval = log_interval
        self.lossfunc = nn.CrossEntropyLoss()

    def _setup_closure(self, optimizer, fake_x, fake_label, received_gradients):
        def closure():
            optimizer.zero_grad()
            fake_pred = self.target_model(fake_x)
            loss = self.lossfunc(fake_pred, fake_label)
            fake_gradients = torch.autograd.grad(loss, self.target_model.parameters(), create_graph=True)
            distance = l2(fake_gradients, received_gradients)
            distance = distance + self.tv_reg_coef * total_variation(fake_x)
            distance.backward()
            return distance

        return closure

    def attack(self, received_gradients, fake_label):
        fake_x = torch.randn((fake_label.shape[0],) + tuple(self.x_shape), device=self.device, requires_grad=True)
        optimizer = torch.optim.Adam([fake_x], lr=self.lr)
        best_distance = float("inf")
        best_fake_x, best_iteration = None, 0
        for i in range(self.num_iteration):
            closure = self._setup_closure(optimizer, fake_x, fake_label, received_gradients)
            distance = optimizer.step(closure)
            if torch.isnan(distance).any().item():
                raise ValueError("stop because the calculated distance is NaN")
            if best_distance > distance.item():
                best_fake_x = fake_x.detach().cpu().clone()
                best_distance = distance.item()
                best_iteration = i
            if self.log_interval and i % self.log_interval == 0:
                print(f"iter={i}: {distance}, (best_iter={best_iteration}: {best_distance})")
        return best_fake_x


if __name__ == "__main__":
    device = "cuda"
    net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.Sigmoid(), nn.Flatten(), nn.Linear(32 * 32 * 32, 10)).to(device)
    x = torch.rand(8, 3, 32, 32, device=device)
    y = torch.randint(0, 10, (8,), device=device)
    received = [g.detach() for g in torch.autograd.grad(nn.CrossEntropyLoss()(net(x), y), net.parameters())]
    attacker = GradientInversion_Attack(net, (3, 32, 32), num_iteration=5000, device=device)
    reconstructed = attacker.attack(received, y)
    torch.save(reconstructed, "reconstructed.pt")
