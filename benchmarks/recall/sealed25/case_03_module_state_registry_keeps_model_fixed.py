# Fixed twin of case 03: make the module-to-state mapping a weakref.WeakKeyDictionary holding weakref.ref(state), as merged in PR #139650
# Thread: https://github.com/pytorch/pytorch/pull/139650
# Reported: with FSDP2 (fully_shard) applied, `del model` (plus gc.collect() and torch.cuda.empty_cache()) does not free the model's GPU memory, so building a new sharded model per run/config accumulates memory (a user in pytorch#114299 found that clearing torch.distributed._composable_state._module_state_mapping freed it)
# Confirmed cause: the maintainer's merged PR #139650 ("Without this, `del model` does not free memory of a module with FSDP2 applied"): the module-level dict `_module_state_mapping` held every module passed to fully_shard as a strong key and its state (which references the module, its parameter groups and their sharded storage) as a strong value, so the model could never be collected; the fix makes it a WeakKeyDictionary whose values are weakref.ref(state)
# Class: global cache/registry keeps the model (and its device tensors) alive after the user drops it
import weakref
from typing import Optional

import torch
import torch.nn as nn


class _State:
    pass


_module_state_mapping = weakref.WeakKeyDictionary()


def _insert_module_state(module: nn.Module, state: _State) -> None:
    global _module_state_mapping
    assert module not in _module_state_mapping, f"Inserting {module} more than once."
    _module_state_mapping[module] = weakref.ref(state)


def _get_module_state(module: nn.Module) -> Optional[_State]:
    global _module_state_mapping
    if isinstance(module, _State):
        return module
    if module in _module_state_mapping:
        state = _module_state_mapping[module]()
        assert state is not None, "State has already been garbage collected"
        return state
    return None


class FSDPParamGroup:
    def __init__(self, params, module, mesh):
        self.module = module
        self.mesh = mesh
        # sharded parameters live in one flat device buffer per group
        self.sharded_storage = torch.cat([p.detach().reshape(-1) for p in params]).chunk(mesh.size())[mesh.get_local_rank()].clone()


class FSDPState(_State):
    def __init__(self):
        self._module = None
        self._fsdp_param_group = None


def fully_shard(module: nn.Module, mesh):
    state = FSDPState()
    state._module = module
    state._fsdp_param_group = FSDPParamGroup(list(module.parameters()), module, mesh)
    module.__dict__["_fsdp_state"] = state
    _insert_module_state(module, state)
    return module


def sweep(configs, build_model, mesh, train_one):
    results = []
    for cfg in configs:
        model = build_model(cfg).cuda()
        for layer in model.layers:
            fully_shard(layer, mesh)
        fully_shard(model, mesh)
        results.append(train_one(model, cfg))
        del model
        torch.cuda.empty_cache()
        print(cfg, torch.cuda.memory_allocated())
    return results
