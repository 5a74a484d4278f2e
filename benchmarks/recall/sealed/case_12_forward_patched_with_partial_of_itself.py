# Recall case 12 (sealed): an activation-checkpoint wrapper patches module.forward with a partial
#   over the module's own bound forward
# Thread: https://github.com/facebookresearch/fairscale/pull/424
# Reported: (fairscale #412) not all CUDA memory is freed when a model wrapped with
#   `checkpoint_wrapper` is deleted; with PyTorch's own `checkpoint()` it is.
# Confirmed cause: the maintainers' merged PR: `module.forward = functools.partial(
#   _checkpointed_forward, module.forward, ...)` creates "a ref cycle: m -> m.forward -> m. When
#   such cycle exists, gc won't collect the module when the module is freed. That causes GPU
#   memory [to be] leaked." Fixed by passing the unbound `type(module).forward` and a
#   `weakref.ref(module)` into the partial.
# Class: reference cycle through a stored bound method (module keeps a partial of itself)
import functools

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


def _checkpointed_forward(original_forward, offload_to_cpu, *args, **kwargs):
    return checkpoint(original_forward, *args, use_reentrant=False, **kwargs)


def checkpoint_wrapper(module: nn.Module, offload_to_cpu: bool = False) -> nn.Module:
    module.forward = functools.partial(_checkpointed_forward, module.forward, offload_to_cpu)  # leak: ANY
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
