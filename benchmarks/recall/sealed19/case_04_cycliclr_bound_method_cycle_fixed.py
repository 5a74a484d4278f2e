# Fixed twin of case 04: keep only a weak reference to the bound scale method (weakref.WeakMethod), as in the PR and in torch's CyclicLR since
# Thread: https://github.com/pytorch/pytorch/pull/85462
# Reported: when several models are trained/tested one after another in one script with CyclicLR, GPU memory of the first model is not released after model, optimizer and scheduler go out of scope, and the second model fails with CUDA out of memory
# Confirmed cause: CyclicLR.__init__ stores self._triangular_scale_fn (a bound method) in self.scale_fn, a scheduler -> bound method -> scheduler reference cycle; the scheduler holds the optimizer and so every parameter and optimizer state on the GPU until the cyclic garbage collector happens to run; the PR replaces it with weakref.WeakMethod, the form torch.optim.lr_scheduler.CyclicLR uses since
# Class: object kept alive by a reference cycle through a bound method stored on self (per-trial model/optimizer not freed)
import math
import weakref

import torch


class CyclicLR(object):
    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, mode="triangular"):
        self.optimizer = optimizer
        self.base_lrs = [base_lr for _ in optimizer.param_groups]
        self.max_lrs = [max_lr for _ in optimizer.param_groups]
        self.total_size = float(2 * step_size_up)
        self.step_ratio = 0.5
        self.mode = mode
        self._scale_fn_ref = weakref.WeakMethod(self._triangular_scale_fn)
        self.scale_mode = "cycle"
        self.last_epoch = 0

    def scale_fn(self, x):
        return self._scale_fn_ref()(x)

    def _triangular_scale_fn(self, x):
        return 1.0

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale_factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        lrs = []
        for base_lr, max_lr in zip(self.base_lrs, self.max_lrs):
            base_height = (max_lr - base_lr) * scale_factor
            lrs.append(base_lr + base_height * self.scale_fn(cycle))
        return lrs

    def step(self):
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr


def train_and_test(build_model, loader, device="cuda"):
    model = build_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    scheduler = CyclicLR(optimizer, base_lr=1e-4, max_lr=1e-2, step_size_up=100)
    for inputs, targets in loader:
        loss = torch.nn.functional.cross_entropy(model(inputs.to(device)), targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    return loss.item()


def compare_models(builders, loader):
    results = {}
    for name, build_model in builders.items():
        results[name] = train_and_test(build_model, loader)
        torch.cuda.empty_cache()
    return results
