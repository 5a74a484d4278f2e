# Fixed twin of case 10: uses independent `if` branches so remove_hooks("both") also removes the backward hooks
# Thread: https://github.com/Prisma-Multimodal/ViT-Prisma/issues/188
# Reported: memory leak when running EAP-IG style attribution with HookedViT: every run adds hooks and memory keeps growing
# Confirmed cause: remove_hooks used `if dir in (fwd, both) ... elif dir in (bwd, both)`, so with dir="both" the backward-hook branch never runs and bwd hooks are never removed; closed with the fix merged in "Fix: Memory leak" (PR #201), same logic as TransformerLens
# Class: hooks registered per call are never removed (handle.remove() skipped), each keeping captured activations/gradients alive
from typing import List

import torch
import torch.nn as nn


class LensHandle:
    def __init__(self, hook, is_permanent=False, context_level=None):
        self.hook = hook
        self.is_permanent = is_permanent
        self.context_level = context_level


class HookPoint(nn.Module):
    """Identity module that exposes an activation for forward/backward hooks."""

    def __init__(self):
        super().__init__()
        self.fwd_hooks: List[LensHandle] = []
        self.bwd_hooks: List[LensHandle] = []
        self.name = None

    def add_hook(self, hook, dir="fwd", is_permanent=False, level=None):
        if dir == "fwd":
            def full_hook(module, module_input, module_output):
                return hook(module_output, hook=self)
            handle = self.register_forward_hook(full_hook)
            self.fwd_hooks.append(LensHandle(handle, is_permanent, level))
        elif dir == "bwd":
            def full_hook(module, grad_input, grad_output):
                return hook(grad_output[0], hook=self)
            handle = self.register_full_backward_hook(full_hook)
            self.bwd_hooks.append(LensHandle(handle, is_permanent, level))
        else:
            raise ValueError(f"Invalid dir {dir}")

    def remove_hooks(self, dir="fwd", including_permanent=False, level=None):
        def _remove_hooks(handles):
            output_handles = []
            for handle in handles:
                if including_permanent or ((not handle.is_permanent) and (level is None or handle.context_level == level)):
                    handle.hook.remove()
                else:
                    output_handles.append(handle)
            return output_handles

        if dir == "fwd" or dir == "both":
            self.fwd_hooks = _remove_hooks(self.fwd_hooks)
        if dir == "bwd" or dir == "both":
            self.bwd_hooks = _remove_hooks(self.bwd_hooks)
        if dir not in ("fwd", "bwd", "both"):
            raise ValueError(f"Invalid direction {dir}")

    def forward(self, x):
        return x


class Block(nn.Module):
    def __init__(self, d=768, n_heads=12):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, n_heads, batch_first=True)
        self.hook_attn_out = HookPoint()
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.hook_mlp_out = HookPoint()

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.hook_attn_out(self.attn(h, h, h, need_weights=False)[0])
        return x + self.hook_mlp_out(self.mlp(self.ln2(x)))


class HookedViT(nn.Module):
    def __init__(self, depth=12, d=768, n_classes=1000):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 16, 16)
        self.blocks = nn.ModuleList([Block(d) for _ in range(depth)])
        self.head = nn.Linear(d, n_classes)
        for name, m in self.named_modules():
            if isinstance(m, HookPoint):
                m.name = name

    def hook_points(self):
        return [m for m in self.modules() if isinstance(m, HookPoint)]

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x.mean(1))


def edge_attribution_scores(model, clean, corrupted, label):
    """One EAP-style run: cache activation differences (fwd) and gradients (bwd) at every hook point."""
    acts, grads = {}, {}

    def save_act(t, hook):
        acts[hook.name] = t.detach()

    def save_grad(g, hook):
        grads[hook.name] = g.detach()

    for hp in model.hook_points():
        hp.add_hook(save_act, dir="fwd")
        hp.add_hook(save_grad, dir="bwd")

    logits = model(clean)
    logits[:, label].sum().backward()

    for hp in model.hook_points():
        hp.remove_hooks(dir="both")
    return {k: (acts[k] * grads[k]).sum().item() for k in acts if k in grads}


if __name__ == "__main__":
    model = HookedViT().cuda()
    for step in range(500):
        clean = torch.randn(16, 3, 224, 224, device="cuda")
        corrupted = torch.randn_like(clean)
        scores = edge_attribution_scores(model, clean, corrupted, label=3)
        model.zero_grad(set_to_none=True)
        print(step, len(scores), torch.cuda.memory_allocated() / 2**20)
