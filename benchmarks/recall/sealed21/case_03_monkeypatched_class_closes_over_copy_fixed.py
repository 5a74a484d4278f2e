# Fixed twin of case 03: the patched class no longer references the module; the original parameter iterator is passed to the instance and stored on it
# Thread: https://github.com/facebookresearch/higher/pull/15
# Reported: issue #6, "Memory leak when performing inner loop on a copy": running the differentiable inner loop on a fresh copy of the model for every task makes GPU memory grow task after task, even after the copy is deleted
# Confirmed cause: the merged PR explains that the MonkeyPatched class, created anew for every patched (sub)module, references the original module from its parameters() method; classes always sit in reference cycles, so the module (here the per-task GPU copy) is not freed until a cyclic GC pass; the fix stores only the parameter iterator on the instance, and the author reports no more GPU memory growth on the repro
# Class: object lifetimes - a class built per call whose method closes over a large per-call object (reference cycle keeps the model copy alive)
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

_internal_attrs = {"_parameters", "_buffers", "_modules", "_backend", "training"}


def make_functional(module, params_box, params_offset=0):
    param_names = [n for n, p in module._parameters.items() if p is not None]
    _ModuleType = module.__class__

    class MonkeyPatched(_ModuleType):
        def __init__(self, original_params):
            nn.Module.__init__(self)
            self._param_names = param_names
            self._original_params = original_params

        def parameters(self, recurse=True):
            # only used to check shapes/dtypes of the original params
            return self._original_params

    MonkeyPatched.__name__ = "InnerFunctional" + type(module).__name__
    fmodule = MonkeyPatched(module.parameters())

    for name, attr in module.__dict__.items():
        if name not in _internal_attrs:
            object.__setattr__(fmodule, name, attr)
    for name, buf in module._buffers.items():
        fmodule._buffers[name] = buf

    num_params = len(param_names)
    child_offset = params_offset + num_params
    for name, child in module._modules.items():
        child_offset, fchild = make_functional(child, params_box, child_offset)
        fmodule._modules[name] = fchild

    true_forward = type(module).forward

    def patched_forward(self, *args, **kwargs):
        for name, param in zip(self._param_names, params_box[0][params_offset:params_offset + num_params]):
            self._parameters[name] = param
        return true_forward(self, *args, **kwargs)

    setattr(MonkeyPatched, "forward", patched_forward)
    return child_offset, fmodule


class innerloop_ctx:
    def __init__(self, model, lr):
        self.model = model
        self.lr = lr

    def __enter__(self):
        self.params_box = [[p.clone() for p in self.model.parameters()]]
        _, fmodel = make_functional(self.model, self.params_box)
        return fmodel, self

    def step(self, loss):
        grads = torch.autograd.grad(loss, self.params_box[0], create_graph=True)
        self.params_box[0] = [p - self.lr * g for p, g in zip(self.params_box[0], grads)]

    def __exit__(self, *exc):
        self.params_box = None
        return False


def meta_train(model, meta_opt, tasks, inner_steps=5, inner_lr=0.01):
    for support_x, support_y, query_x, query_y in tasks:
        task_model = copy.deepcopy(model)
        meta_opt.zero_grad()
        with innerloop_ctx(task_model, inner_lr) as (fmodel, diffopt):
            for _ in range(inner_steps):
                diffopt.step(F.cross_entropy(fmodel(support_x), support_y))
            query_loss = F.cross_entropy(fmodel(query_x), query_y)
            query_loss.backward()
        for p, q in zip(model.parameters(), task_model.parameters()):
            p.grad = None if q.grad is None else q.grad.clone()
        meta_opt.step()
        del task_model, fmodel


if __name__ == "__main__":
    device = "cuda"
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 10)).to(device)
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tasks = [
        (torch.randn(25, 1024, device=device), torch.randint(10, (25,), device=device),
         torch.randn(75, 1024, device=device), torch.randint(10, (75,), device=device))
        for _ in range(1000)
    ]
    meta_train(model, meta_opt, tasks)
