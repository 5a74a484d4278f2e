# Fixed twin of case 12: inner networks are built once outside the loop and reset/reused per task
# Thread: https://github.com/metaopt/torchopt/pull/113
# Reported: memory leak in the implicit-differentiation (iMAML omniglot) example
# Confirmed cause: maintainer explained in the merged PR: a new inner network was created in the for-loop per task; fix creates them once and reuses them
# Class: model object constructed per task inside the training loop
import gc
import torch
import torch.nn as nn
import torch.nn.functional as F


class InnerNet(nn.Module):
    def __init__(self, meta_params, n_way=5):
        super().__init__()
        self.meta_params = meta_params
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 256), nn.ReLU(), nn.Linear(256, n_way))
        self.reset_parameters(meta_params)

    def reset_parameters(self, meta_params):
        with torch.no_grad():
            for p, m in zip(self.net.parameters(), meta_params):
                p.copy_(m)

    def solve(self, x, y, steps=16, lr=0.1):
        opt = torch.optim.SGD(self.net.parameters(), lr=lr)
        for _ in range(steps):
            opt.zero_grad()
            F.cross_entropy(self.net(x), y).backward()
            opt.step()


def meta_train(meta_net, task_sampler, meta_opt, num_tasks=4, iters=1000, device="cuda"):
    meta_params = list(meta_net.parameters())
    inner_nets = list(InnerNet(meta_params).to(device) for _ in range(num_tasks))
    for it in range(iters):
        meta_opt.zero_grad()
        for task_id in range(num_tasks):
            x_s, y_s, x_q, y_q = task_sampler(device)
            inner_net = inner_nets[task_id]
            inner_net.reset_parameters(meta_params)
            inner_net.solve(x_s, y_s)
            loss = F.cross_entropy(inner_net.net(x_q), y_q)
            loss.backward()
        meta_opt.step()
        gc.collect()
