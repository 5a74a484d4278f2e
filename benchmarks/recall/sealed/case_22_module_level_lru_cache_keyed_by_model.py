# Recall case 22 (sealed): a module-level lru_cache takes the model as its argument
# Thread: https://github.com/meta-pytorch/torchtune/issues/904
# Reported: in cross-validation, every fold starts at a higher GPU usage than the previous one;
#   nothing the user does frees it, and later folds run out of memory.
# Confirmed cause: the reporter's minimal reproduction, fixed by the maintainers in PR #907
#   ("Remove usage of LRU cache from peft_utils"): `get_adapter_params` and `_get_base_model_params` are
#   decorated with `@functools.lru_cache()`, so every model passed in becomes a cache key (and
#   its adapter parameters a cached value) and stays referenced by the global cache after the
#   caller drops it.
# Class: a global cache keyed by the model (the cache keeps every model alive)
import functools
from typing import Dict

import torch
from torch import nn


@functools.lru_cache()  # leak: ANY
def get_adapter_params(model: nn.Module) -> Dict[str, nn.Parameter]:
    adapter_params = {}
    for k, v in model.named_modules():
        if hasattr(v, "adapter_params") and callable(v.adapter_params):
            current_adapter_params = v.adapter_params()
            for n, p in v.named_parameters(recurse=True):
                if n in current_adapter_params:
                    full_key = f"{k}.{n}" if k else n
                    adapter_params.update({full_key: p})
                    current_adapter_params.remove(n)
    return adapter_params


def set_trainable_params(model: nn.Module, adapter_params: Dict[str, nn.Parameter]) -> None:
    for k, v in model.named_parameters():
        v.requires_grad_(k in adapter_params)


def cross_validate(build_lora_model, folds, loader_for, device="cuda"):
    scores = []
    for cfg in folds:
        model = build_lora_model(cfg).to(device)
        adapter_params = get_adapter_params(model)
        set_trainable_params(model, adapter_params)
        optimizer = torch.optim.AdamW(adapter_params.values(), lr=cfg["lr"])
        for tokens, labels in loader_for(cfg):
            logits = model(tokens.to(device))
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.to(device).flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scores.append(loss.item())
        del model, optimizer, adapter_params
        torch.cuda.empty_cache()
    return scores
