# Recall case 01 (sealed5): line-search training loop keeps every loss tensor (with graph) returned by the closure
# Thread: https://github.com/StanfordASL/neural-network-lyapunov/pull/140
# Reported: memory kept growing while training the Lyapunov function with the line-search steepest-descent routine
# Confirmed cause: the losses list stored the loss tensors themselves (each holding its autograd graph); merged PR by the maintainer makes the closure return only the loss and stores float values
# Class: per-iteration loss tensors appended to a history list
import torch
import torch.nn as nn


class LyapunovNet(nn.Module):
    def __init__(self, dim=4, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def lyapunov_loss(model, states, next_states):
    v = model(states)
    v_next = model(next_states)
    positivity = torch.relu(-v + 1e-3 * states.norm(dim=1, keepdim=True)).mean()
    decrease = torch.relu(v_next - v + 1e-3).mean()
    return positivity + decrease


def train_line_search_sd(model, states, next_states, max_iter=2000, lr=1e-2):
    params = list(model.parameters())
    losses = []

    def closure():
        for p in params:
            p.grad = None
        loss = lyapunov_loss(model, states, next_states)
        loss.backward()
        return loss

    for it in range(max_iter):
        loss = closure()
        losses.append(loss)  # leak: ANY
        with torch.no_grad():
            step = lr
            for _ in range(10):
                for p in params:
                    p.sub_(step * p.grad)
                if lyapunov_loss(model, states, next_states).item() < losses[-1]:
                    break
                for p in params:
                    p.add_(step * p.grad)
                step *= 0.5
    return losses


if __name__ == "__main__":
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model = LyapunovNet().to(dev)
    x = torch.randn(4096, 4, device=dev)
    x_next = 0.9 * x + 0.01 * torch.randn_like(x)
    hist = train_line_search_sd(model, x, x_next)
    print(len(hist))
