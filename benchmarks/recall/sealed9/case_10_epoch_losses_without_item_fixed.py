# Fixed twin of case 10: the epoch list stores loss.item() floats instead of graph-carrying tensors
# Thread: https://github.com/pytorch/pytorch/issues/64586
# Reported: "Memory leak in torch.autograd.grad": memory increased after every epoch until it ran out
# Confirmed cause: the reporter found the losses were kept as tensors and that adding .item() fixed it (maintainers questioned it being a leak; reporter closed after the fix)
# Class: loss tensors (with graph) accumulated in a list across an epoch
import torch
import torch.nn as nn


class PINN(nn.Module):
    def __init__(self, width=256, depth=6):
        super().__init__()
        layers = [nn.Linear(2, width), nn.Tanh()]
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.Tanh()]
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, xt):
        return self.net(xt)


def physics_loss(model, xt):
    xt = xt.requires_grad_(True)
    u = model(xt)
    du = torch.autograd.grad(u, xt, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    u_x, u_t = du[:, :1], du[:, 1:]
    return ((u_t + u * u_x) ** 2).mean()


def train(model, loader, epochs, device):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = []
    for epoch in range(epochs):
        epoch_losses = []
        for (xt,) in loader:
            loss = physics_loss(model, xt.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_losses.append(loss.item())
        history.append(sum(epoch_losses) / len(epoch_losses))
        print(f"epoch {epoch}: {float(history[-1]):.4e}")
    return history


if __name__ == "__main__":
    dev = torch.device("cuda")
    points = [(torch.rand(8192, 2),) for _ in range(200)]
    train(PINN().to(dev), points, epochs=50, device=dev)
