"""What the user's variables hold: tensors, and the autograd graph behind them.

Roots are the variables of the user's frames (locals, and the globals of the
user's modules) at a step boundary. From each root we walk containers (list,
tuple, dict, set, deque), ``nn.Module`` attributes and instances of the user's
own classes, so ``outputs.append(out)`` or ``self.cache[i] = y`` are found under
the names ``outputs`` and ``model.cache``. Indices are dropped from names: a list
that grows keeps one name.

The graph signal counts autograd nodes reachable through ``grad_fn`` and
``next_functions``: ``total_loss += loss`` leaves tensor bytes flat (backward
frees the saved tensors) but adds nodes every step.
"""

from __future__ import annotations

import collections
import sys
import types
from dataclasses import dataclass

import torch

from memlint.dynamic.usercode import UserFiles

# Bounds that keep one scan cheap even when a script holds a big dataset in a global.
MAX_OBJECTS_PER_ROOT = 20_000
MAX_DEPTH = 6
MAX_NODES_PER_HOLDER = 200_000

_SKIP_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
               str, bytes, int, float, complex, bool, type(None))
_MODULE_SKIP_ATTRS = {"_parameters", "_buffers", "_non_persistent_buffers_set", "training"}


@dataclass(frozen=True)
class HolderKey:
    """A variable (or attribute path under one) in one function of the user's code."""

    name: str
    function: str
    path: str
    first_line: int


def frame_roots(frames, is_user: UserFiles) -> list[tuple[HolderKey, object]]:
    """(holder, value) for every variable of the user's frames and modules."""
    roots: list[tuple[HolderKey, object]] = []
    seen_globals: set[int] = set()
    for frame in frames:
        code = frame.f_code
        if code.co_name != "<module>":
            roots.extend(namespace_roots(frame.f_locals, code.co_name, code.co_filename, code.co_firstlineno))
        module_globals = frame.f_globals
        if id(module_globals) not in seen_globals:
            seen_globals.add(id(module_globals))
            filename = module_globals.get("__file__") or code.co_filename
            if is_user(filename):
                roots.extend(namespace_roots(module_globals, "<module>", filename, 1))
    return roots


def namespace_roots(namespace, function: str, path: str, first_line: int):
    """(holder, value) for the variables of one namespace worth scanning (no modules, functions, numbers)."""
    for name, value in list(namespace.items()):
        if name.startswith("__") or isinstance(value, _SKIP_TYPES):
            continue
        yield HolderKey(name, function, path, first_line), value


def walk_tensors(value, name: str, is_user: UserFiles):
    """Yield (name path, tensor) for tensors reachable from ``value``."""
    stack = [(value, name, 0)]
    seen: set[int] = set()
    budget = MAX_OBJECTS_PER_ROOT
    while stack and budget > 0:
        obj, path, depth = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        budget -= 1
        if isinstance(obj, torch.Tensor):
            yield path, obj
            continue
        if depth >= MAX_DEPTH or isinstance(obj, _SKIP_TYPES):
            continue
        if isinstance(obj, (list, tuple, set, frozenset, collections.deque)):
            stack.extend((item, path, depth + 1) for item in obj)
        elif isinstance(obj, dict):
            stack.extend((item, path, depth + 1) for item in obj.values())
        elif isinstance(obj, torch.nn.Module):
            for attr, item in vars(obj).items():
                if attr == "_modules":
                    stack.extend((sub, f"{path}.{sub_name}", depth + 1) for sub_name, sub in item.items())
                elif attr not in _MODULE_SKIP_ATTRS and not attr.startswith("_"):
                    stack.append((item, f"{path}.{attr}", depth + 1))
        elif hasattr(obj, "__dict__") and is_user(_class_file(type(obj))):
            stack.extend((item, f"{path}.{attr}", depth + 1) for attr, item in vars(obj).items())


def _class_file(cls) -> str:
    """The file a class was defined in ("" when unknown), to walk only the user's classes."""
    module = sys.modules.get(cls.__module__)
    return getattr(module, "__file__", None) or ""


def graph_nodes(roots, is_user: UserFiles) -> tuple[int, dict[HolderKey, int]]:
    """Distinct autograd nodes reachable from all roots, and per holder."""
    everything: set = set()
    per_holder: dict[HolderKey, int] = {}
    for key, value in roots:
        holder_nodes: dict[str, set] = {}
        for path, tensor in walk_tensors(value, key.name, is_user):
            grad_fn = tensor.grad_fn
            if grad_fn is not None:
                _reach(grad_fn, holder_nodes.setdefault(path, set()))
        for path, nodes in holder_nodes.items():
            if nodes:
                holder = HolderKey(path, key.function, key.path, key.first_line)
                per_holder[holder] = per_holder.get(holder, 0) + len(nodes)
                everything |= nodes
    return len(everything), per_holder


def _reach(start, seen: set) -> None:
    stack = [start]
    while stack and len(seen) < MAX_NODES_PER_HOLDER:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                stack.append(child)


def storage_holders(roots, wanted: set[int], is_user: UserFiles) -> dict[int, HolderKey]:
    """For storage ids in ``wanted``: the first variable (path) found holding them."""
    found: dict[int, HolderKey] = {}
    for key, value in roots:
        for path, tensor in walk_tensors(value, key.name, is_user):
            try:
                storage_id = id(tensor.untyped_storage())
            except (RuntimeError, NotImplementedError):
                continue
            if storage_id in wanted and storage_id not in found:
                found[storage_id] = HolderKey(path, key.function, key.path, key.first_line)
    return found
