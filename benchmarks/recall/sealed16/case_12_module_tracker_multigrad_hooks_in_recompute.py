# Recall case 12 (sealed16): global module-forward hooks of a module tracker register multi-grad hooks on every call, including the forward recomputation of checkpointed blocks during backward
# Thread: https://github.com/pytorch/pytorch/pull/139214
# Reported: running an FSDP/activation-checkpointed model under FlopCounterMode (which uses ModuleTracker) leaks memory step after step; with the fixed tracker memory stays flat at ~0.35 GiB over 700+ iterations
# Confirmed cause: PR author's root cause in the thread: ModuleTracker registers a multi-grad hook in its pre-/post-forward hooks, and these hooks also run during activation checkpointing in the backward direction, registering multi-grad hooks on the recomputed tensors that are never called; the extended ModTracker only registers them during the forward pass
# Class: hooks registered on every call (in backward recompute) that never fire and keep their tensors alive
import weakref

import torch
import torch.nn as nn
from torch.autograd.graph import register_multi_grad_hook
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from torch.utils._pytree import tree_flatten
from torch.utils.checkpoint import checkpoint


class ModuleTracker:
    def __init__(self):
        self.parents = {"Global"}
        self._names = weakref.WeakKeyDictionary()
        self._handles = []

    def _name(self, mod):
        if mod not in self._names:
            self._names[mod] = type(mod).__name__ + str(len(self._names))
        return self._names[mod]

    def _enter(self, name):
        def fn(*args):
            self.parents.add(name)
        return fn

    def _leave(self, name):
        def fn(*args):
            self.parents.discard(name)
        return fn

    @staticmethod
    def _grad_tensors(obj):
        flat, _ = tree_flatten(obj)
        return [t for t in flat if isinstance(t, torch.Tensor) and t.requires_grad]

    def _fw_pre_hook(self, mod, inputs):
        name = self._name(mod)
        self._enter(name)()
        tensors = self._grad_tensors(inputs)
        if tensors:
            register_multi_grad_hook(tensors, self._leave(name))  # leak: ANY

    def _fw_post_hook(self, mod, inputs, outputs):
        name = self._name(mod)
        self._leave(name)()
        tensors = self._grad_tensors(outputs)
        if tensors:
            register_multi_grad_hook(tensors, self._enter(name))  # leak: ANY

    def __enter__(self):
        self._handles = [
            register_module_forward_pre_hook(self._fw_pre_hook),
            register_module_forward_hook(self._fw_post_hook),
        ]
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()


class Block(nn.Module):
    def __init__(self, dim=4096):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x):
        return x + self.ff(x)


def train(steps=1000):
    blocks = nn.ModuleList(Block() for _ in range(4)).cuda()
    opt = torch.optim.AdamW(blocks.parameters())
    with ModuleTracker():
        for i in range(steps):
            x = torch.randn(64, 4096, device="cuda")
            for blk in blocks:
                x = checkpoint(blk, x, use_reentrant=False)
            x.sum().backward()
            opt.step()
            opt.zero_grad()
            if i % 100 == 0:
                print(i, torch.cuda.memory_allocated() / 2**30)
