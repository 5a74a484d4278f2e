# Fixed twin of case 16: the accumulated gradients are reset (zero_grad) before each create_graph backward, so .grad no longer chains old graphs
# Thread: https://github.com/pytorch/pytorch/issues/1346
# Reported: a loop that backprops once with the graph kept and then backprops through a combination of x.grad and y.grad leaked memory every iteration
# Confirmed cause: maintainer (apaszke): .grad is never detached and keeps accumulating the graphs of all iterations; detaching .grad (or calling zero_grad) frees the history and memory stays constant
# Class: .grad holding history (create_graph) accumulated across iterations without zero_grad
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.x = nn.Parameter(torch.randn(512, 512))
        self.y = nn.Parameter(torch.randn(512, 512))

    def forward(self):
        return self.x ** 2 + self.y * self.x + self.y ** 2


def step(critic, optimizer):
    z = critic()
    optimizer.zero_grad()
    z.backward(torch.ones_like(z), create_graph=True)
    grad_sum = 2 * critic.x.grad + critic.y.grad
    penalty = grad_sum[:, :-1].pow(2).mean()
    penalty.backward()
    optimizer.step()
    return penalty.item()


if __name__ == "__main__":
    critic = Critic().cuda()
    optimizer = torch.optim.SGD(critic.parameters(), lr=1e-6)
    for i in range(100000):
        value = step(critic, optimizer)
        if i % 1000 == 0:
            print(i, value, torch.cuda.memory_allocated() / 2**20)
