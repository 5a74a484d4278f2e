# Fixed twin of case 12: the partial holds the class's forward and a weak reference to the module.
# Thread: https://github.com/facebookresearch/fairscale/pull/424
# Class: reference cycle through a stored bound method (module keeps a partial of itself)
import functools
import weakref

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


def _checkpointed_forward(original_forward, weak_self, offload_to_cpu, *args, **kwargs):
    module = weak_self()
    return checkpoint(original_forward, module, *args, use_reentrant=False, **kwargs)


def checkpoint_wrapper(module: nn.Module, offload_to_cpu: bool = False) -> nn.Module:
    # unbound forward + weak reference: no module -> forward -> module cycle
    module.forward = functools.partial(
        _checkpointed_forward, type(module).forward, weakref.ref(module), offload_to_cpu
    )
    return module


def build_model(width, depth, device="cuda"):
    layers = [checkpoint_wrapper(nn.Sequential(nn.Linear(width, width), nn.GELU()))
              for _ in range(depth)]
    return nn.Sequential(*layers).to(device)


def sweep(widths, data, target, steps=100, depth=24):
    results = {}
    for width in widths:
        model = build_model(width, depth)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for _ in range(steps):
            loss = nn.functional.mse_loss(model(data[width]), target[width])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        results[width] = loss.item()
        del model, opt
        torch.cuda.empty_cache()
    return results
