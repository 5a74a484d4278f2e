# Fixed twin of case 20: __exit__ clears both handle lists after removing the hooks (the merged PR).
# Thread: https://github.com/EleutherAI/bergson/pull/55
# Reported: gradient collection gets slower and slower with every step (issue #42 of the repository).
# Confirmed cause: the merged PR: `GradientCollector` accumulated the handles of the hooks it
#   registers on each use in `self._fwd_hooks` and `self._bwd_hooks`; `handle.remove()` detaches the
#   hook but does not shrink the list, so the lists (and the time spent removing) grow every step;
#   the fix clears the lists after removing the hooks.
# Class: hook handles (and their closures) accumulated in lists on a long-lived object, per step
from functools import partial

import torch
import torch.nn as nn


class GradientCollector:
    def __init__(self, model: nn.Module, target_modules, projection_dim=16):
        self.model = model
        self.target_modules = set(target_modules)
        self.projection_dim = projection_dim
        self._fwd_hooks = []
        self._bwd_hooks = []
        self.grads = {}

    def __enter__(self):
        for name, module in self.model.named_modules():
            if name in self.target_modules:
                self._fwd_hooks.append(module.register_forward_hook(partial(self._save_input, name=name)))
                self._bwd_hooks.append(module.register_full_backward_hook(partial(self._process_grad, name=name)))
        return self

    def _save_input(self, module, inputs, output, name):
        module._collector_input = inputs[0].detach()

    def _process_grad(self, module, grad_input, grad_output, name):
        x = module._collector_input
        g = grad_output[0]
        per_sample = torch.einsum("b...o,b...i->boi", g, x).flatten(1)
        self.grads[name] = per_sample[:, : self.projection_dim].float().cpu()
        del module._collector_input

    def __exit__(self, exc_type, exc, tb):
        for handle in self._fwd_hooks:
            handle.remove()
        for handle in self._bwd_hooks:
            handle.remove()
        self._fwd_hooks.clear()
        self._bwd_hooks.clear()
        return False


def collect_gradients(model, loader, target_modules, device="cuda"):
    collector = GradientCollector(model, target_modules)
    all_grads = []
    for batch in loader:
        inputs, labels = batch["input_ids"].to(device), batch["labels"].to(device)
        with collector:
            logits = model(inputs)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
            loss.backward()
        model.zero_grad(set_to_none=True)
        all_grads.append(torch.cat([collector.grads[n] for n in sorted(collector.grads)], dim=1))
    return torch.cat(all_grads)
