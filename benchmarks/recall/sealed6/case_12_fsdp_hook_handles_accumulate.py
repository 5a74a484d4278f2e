# Recall case 12 (sealed6): wrapper registers post-backward hooks every iteration and appends the handles to a list that is never cleared
# Thread: https://github.com/facebookresearch/fairscale/pull/1143
# Reported: hook handles (and their hook closures) kept accumulating over iterations; profiler at step 45 showed ever more handle.remove() work (before/after screenshots in the PR)
# Confirmed cause: after #1139, the post-backward hook handles were still appended to a list each iteration and removed but never dropped; merged PR clears the handles after removing them (maintainer-authored)
# Class: per-iteration hook registration whose handles/closures are retained in a growing list
import functools

import torch
from torch import nn


class FullyShardedDataParallel(nn.Module):
    def __init__(self, module: nn.Module):
        super().__init__()
        self.module = module
        self._post_backward_hook_handles = []
        self._reduce_queue = []

    def forward(self, *args, **kwargs):
        out = self.module(*args, **kwargs)
        if torch.is_grad_enabled():
            self._register_post_backward_hooks()
        return out

    def _register_post_backward_hooks(self):
        for p in self.module.parameters():
            if not p.requires_grad:
                continue
            # hook the AccumulateGrad node so we know when this param's grad is ready
            p_tmp = p.expand_as(p)
            grad_acc = p_tmp.grad_fn.next_functions[0][0]
            handle = grad_acc.register_hook(functools.partial(self._post_backward_hook, p))
            self._post_backward_hook_handles.append((grad_acc, handle))  # leak: ANY

    def _post_backward_hook(self, param, *unused):
        if param.grad is not None:
            self._reduce_queue.append(param.grad.detach())

    def _finalize_backward(self):
        for _, handle in self._post_backward_hook_handles:
            handle.remove()
        for g in self._reduce_queue:
            g.div_(1.0)  # stand-in for the reduce-scatter
        self._reduce_queue.clear()


if __name__ == "__main__":
    model = FullyShardedDataParallel(nn.Sequential(*[nn.Linear(2048, 2048) for _ in range(24)]).cuda())
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(10000):
        loss = model(torch.randn(32, 2048, device="cuda")).square().mean()
        loss.backward()
        model._finalize_backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
