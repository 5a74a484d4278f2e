# Recall case 03 (sealed3): tensor-train fitting keeps every iteration's loss tensor in loss_history
# Thread: https://github.com/rballester/tntorch/pull/19
# Reported: fitting a 100x100 picture froze a 12 GB machine within ~1000 iterations
# Confirmed cause: "every added loss used to be a full computational graph" in loss_history; merged PR stores
#   plain numbers instead (PR merged by the maintainer)
# Class: loss tensor appended to a history list that lives for the whole optimisation
import time

import torch


class TT:
    """Minimal tensor-train: a list of 3-way cores."""

    def __init__(self, shape, rank, device):
        ranks = [1] + [rank] * (len(shape) - 1) + [1]
        self.cores = [torch.randn(ranks[i], shape[i], ranks[i + 1], device=device, requires_grad=True)
                      for i in range(len(shape))]

    def full(self):
        out = self.cores[0]
        for core in self.cores[1:]:
            out = torch.einsum("...a,abc->...bc", out, core)
        return out.squeeze(0).squeeze(-1)


def optimize(tensors, loss_function, optimizer=torch.optim.Adam, tol=1e-4, max_iter=10000, print_freq=500):
    params = []
    for t in tensors:
        params.extend(t.cores)
    opt = optimizer(params)
    loss_history = []
    start = time.time()
    iteration = 0
    while True:
        opt.zero_grad()
        loss = loss_function(*tensors)
        if not isinstance(loss, (tuple, list)):
            loss = [loss]
        loss_history.append(loss)  # leak: ANY
        total = sum(loss)
        total.backward()
        opt.step()
        iteration += 1
        if len(loss_history) >= 2:
            delta = abs(float(sum(loss_history[-2])) - float(sum(loss_history[-1])))
            if delta < tol:
                break
        if iteration % print_freq == 0:
            print("iter", iteration, "loss", float(total), "time", round(time.time() - start, 1))
        if iteration >= max_iter:
            break
    return loss_history


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    picture = torch.rand(100, 100, device=device)
    t = TT([100, 100], rank=30, device=device)
    history = optimize([t], lambda x: torch.mean((x.full() - picture) ** 2), tol=0, max_iter=20000)
    print(len(history))
