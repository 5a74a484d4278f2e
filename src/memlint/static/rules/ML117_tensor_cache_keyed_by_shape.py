"""ML117 tensor-cache-keyed-by-shape: a dict on an object caches a tensor under a key made from
a shape or a length (``self.cache[seq_len] = freqs``), and nothing ever evicts an entry.

Rotary and positional tables, attention masks and grids are often memoised per input size.
With a key per sequence length (or image size, or offset), every new length adds a tensor that
stays on the device for the life of the object: autoregressive decoding sees a new length at
every step, variable-length batches a new one every few batches, and the cache grows by a table
each time, until decoding slows to a crawl or memory runs out
(lucidrains/rotary-embedding-torch#15). The usual fix keeps one table for the longest size seen
and slices it for shorter ones.

Flagged (warning): ``self.<cache>[key] = value`` in a method, where

- ``self.<cache>`` is a dict the class creates (``{}``, ``dict()``, ``OrderedDict()``) and never
  empties, reassigns outside ``__init__``, pops from or checks the size of (``len(...)``);
- ``value`` is a tensor (a ``torch`` operator's result, a tensor method such as ``.detach()``,
  ``.cos()``, or a name bound to one);
- ``key`` is made from a shape or a length: ``x.shape[...]``, ``x.size(...)``, ``len(x)``,
  names bound to those, or a parameter of the method that the class's own calls fill with one
  (``self.forward(seq, cache_key=f"freqs:{seq_len}")``).

Also flagged (warning): a module-level function memoised without a size limit
(``@functools.cache``, ``@lru_cache(maxsize=None)``) that returns a tensor made on a device it
is given, and that this module calls with a size (``causal_mask(x.size(1), x.device)``).

Not flagged: keys from devices, dtypes, names or configuration (a few values), shapes of the
model's own parameters or their gradients (``p.grad.shape`` for ``p`` in ``group["params"]`` or
``model.parameters()``, ``self.fc.weight.shape``) or of anything computed only from the object's
own state and not from what the method is handed (``layer.weight`` for ``layer`` in
``self.convs``): a fixed set of keys, a cache that is
bounded or cleared, a single tensor replaced when a longer one is needed, a memoised function
building CPU tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import ClassInfo, FunctionScope, dotted_name, names_in, storage_name
from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML108_cache_keeps_graph import is_unbounded_cache
from memlint.static.rules.ML114_tensor_stored_on_ctx import is_torch_operator

# Methods whose result is a tensor (whatever the receiver, in practice).
_TENSOR_METHODS = frozenset({
    "detach", "clone", "contiguous", "cos", "sin", "exp", "float", "half", "bfloat16", "to", "cuda", "view",
    "reshape", "expand", "unsqueeze", "squeeze", "repeat", "permute", "transpose", "masked_fill", "triu", "tril",
    "type_as", "new_zeros", "new_ones", "new_full", "new_empty", "outer", "matmul", "flatten",
})
# Methods whose result is not a tensor.
_NOT_TENSORS = frozenset({"item", "tolist", "size", "dim", "numel", "numpy", "get", "keys", "items", "values"})
_EVICTING = frozenset({"pop", "popitem", "clear", "__delitem__"})
_DICT_MAKERS = frozenset({"dict", "OrderedDict", "collections.OrderedDict", "defaultdict", "collections.defaultdict"})


@dataclass
class _Store:
    node: cst.Assign
    cache: str  # "self.cache"
    key: cst.BaseExpression
    value: cst.BaseExpression
    function: FunctionScope


class TensorCacheKeyedByShape(Rule):
    code = "ML117"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._stores: list[_Store] = []
        self._evicted: set[tuple[int, str]] = set()  # (id(ClassInfo), "self.cache") emptied, bounded or reset
        self._created: set[tuple[int, str]] = set()  # (id(ClassInfo), "self.cache") made a dict in __init__
        # (id(ClassInfo), method) -> calls of ``self.method(...)`` in the class, with their function
        self._self_calls: dict[tuple[int, str], list[tuple[cst.Call, FunctionScope]]] = {}
        # module-level functions memoised without a size limit: (def, its cache decorator)
        self._cached_functions: list[tuple[cst.FunctionDef, cst.Decorator]] = []
        self._calls_by_name: dict[str, list[tuple[cst.Call, FunctionScope]]] = {}
        self._scheduled = False

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    # ----- memoised functions ------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.facts.scope is not self.facts.module_scope:
            return  # methods: ML108's
        for decorator in node.decorators:
            func = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            qualified = self.facts.qualified_name(func) or ""
            if qualified in ("functools.lru_cache", "functools.cache") and is_unbounded_cache(node, qualified.rsplit(".")[-1]):
                self._cached_functions.append((node, decorator))
                self._schedule()

    # ----- the class's caches ------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        function = self.facts.function
        info = function.class_info
        if info is None:
            return
        for target in node.targets:
            target = target.target
            name = dotted_name(target)
            if name is not None and name.startswith("self.") and name.count(".") == 1:
                if function.name == "__init__" and self._makes_dict(node.value):
                    self._created.add((id(info), name))
                else:
                    self._evicted.add((id(info), name))  # reset (or replaced) by a method
            elif isinstance(target, cst.Subscript):
                cache = dotted_name(target.value)
                if cache is not None and cache.startswith("self.") and cache.count(".") == 1 \
                        and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
                    self._stores.append(_Store(node, cache, target.slice[0].slice.value, node.value, function))
                    self._schedule()

    def visit_Del(self, node: cst.Del) -> None:
        info = self.facts.class_info
        cache = storage_name(node.target)
        if info is not None and cache is not None:
            self._evicted.add((id(info), cache))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and self._cached_functions:
            self._calls_by_name.setdefault(func.value, []).append((node, self.facts.function))
        info = self.facts.class_info
        if info is None:
            return
        if isinstance(func, cst.Attribute):
            receiver = dotted_name(func.value)
            if receiver is not None and receiver.startswith("self.") and func.attr.value in _EVICTING:
                self._evicted.add((id(info), receiver))
            elif receiver == "self":
                self._self_calls.setdefault((id(info), func.attr.value), []).append((node, self.facts.function))
        elif isinstance(func, cst.Name) and func.value == "len" and node.args:
            cache = dotted_name(node.args[0].value)
            if cache is not None and cache.startswith("self."):
                self._evicted.add((id(info), cache))  # a size check: bounded by hand

    def _makes_dict(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Dict) and not value.elements:
            return True
        return isinstance(value, cst.Call) and (self.facts.qualified_name(value.func) or "") in _DICT_MAKERS

    # ----- decisions -----------------------------------------------------------------------------
    def _decide(self) -> None:
        self._decide_cached_functions()
        reported: set[tuple[int, str]] = set()
        for store in self._stores:
            info = store.function.class_info
            key = (id(info), store.cache)
            if key in reported or key not in self._created or key in self._evicted:
                continue
            if not self._is_tensor(store.value, store.function, 0):
                continue
            size = self._size_in(store.key, store.function, info, 0)
            if size is None:
                continue
            reported.add(key)
            self.report(
                store.node,
                f"'{store.cache}' gains a tensor for every new {size} and nothing evicts it",
                help="cache one tensor for the largest size seen and slice it for shorter ones, or bound the cache",
                needs_grad=False, severity="warning", function=store.function,
            )

    def _decide_cached_functions(self) -> None:
        for node, decorator in self._cached_functions:
            scope = self.facts.function_scopes.get(id(node))
            if scope is None or not any(self._is_tensor(value, scope, 0) for value in _returned(node.body)):
                continue
            if not _on_given_device(node.body, scope):
                continue  # a CPU table: bounded by the longest size, and not the accelerator's memory
            size = next((found for call, caller in self._calls_by_name.get(node.name.value, ())
                         for arg in call.args if (found := self._size_in(arg.value, caller, caller.class_info, 0))),
                        None)
            if size is None:
                continue
            self.report(
                decorator,
                f"'{node.name.value}()' caches a tensor for every new {size}, without a size limit",
                help="bound the cache (lru_cache(maxsize=8)), or build one tensor for the largest size and slice it",
                needs_grad=False, severity="warning", function=scope,
            )

    def _is_tensor(self, value: cst.BaseExpression, function: FunctionScope, depth: int) -> bool:
        if depth > 3:
            return False
        if isinstance(value, cst.Call):
            func = value.func
            if is_torch_operator(self.facts.qualified_name(func) or ""):
                return True
            if not isinstance(func, cst.Attribute) or func.attr.value in _NOT_TENSORS:
                return False
            # x.triu(1).bool(): a tensor method, or a method of a tensor
            return func.attr.value in _TENSOR_METHODS or self._is_tensor(func.value, function, depth + 1)
        if isinstance(value, (cst.Tuple, cst.List)):
            return any(self._is_tensor(el.value, function, depth + 1) for el in value.elements)
        if isinstance(value, cst.Name):
            return any(self._is_tensor(stored, function, depth + 1)
                       for stored in function.stored_values.get(value.value, ()))
        return False

    def _size_in(self, key: cst.BaseExpression, function: FunctionScope, info: ClassInfo | None,
                 depth: int) -> str | None:
        """"length" or "size" when ``key`` is made from a size, else None."""
        if depth > 3:
            return None
        stack: list[cst.CSTNode] = [key]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute) and node.attr.value == "shape":
                if self._fixed_shapes(node.value, function):
                    continue  # the model's own weight shapes: a fixed set of keys
                return "size"
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value == "size":
                    if self._fixed_shapes(func.value, function):
                        continue
                    return "size"
                if isinstance(func, cst.Name) and func.value == "len":
                    return "length"
            if isinstance(node, cst.Name):
                name = node.value
                if name in function.parameters:
                    found = self._size_from_callers(function, name, info, depth + 1)
                    if found is not None:
                        return found
                    continue
                for stored in function.stored_values.get(name, ()):
                    found = self._size_in(stored, function, info, depth + 1)
                    if found is not None:
                        return found
                continue
            if isinstance(node, (cst.Lambda, cst.SimpleString, cst.Integer, cst.Float)):
                continue
            stack.extend(node.children)
        return None

    def _fixed_shapes(self, value: cst.BaseExpression, function: FunctionScope) -> bool:
        """Does ``value`` come from a fixed set of shapes: a parameter of a model, or state the
        object holds (``l.weight_normalized`` for ``l`` in ``self.all_conv_layers``), nothing the
        method is handed (its inputs, which change from call to call)?"""
        return self._a_weight(value, function, 0) or self._only_from_own_state(value, function, 0)

    def _only_from_own_state(self, value: cst.BaseExpression, function: FunctionScope, depth: int) -> bool:
        """Is every name ``value`` is computed from the object itself (``self...``), a constant, or
        a local bound (by an assignment or a ``for``) only from those? A parameter of the method,
        a name not bound here, or a chain too long to follow: no."""
        if depth > 4:
            return False
        roots = {name.split(".", 1)[0] for name in names_in(value)} - {"self", "range", "len", "zip", "enumerate"}
        for root in roots:
            if root in function.parameters:
                return False
            loops = self._fors_binding(function, root)
            stored = function.stored_values.get(root, ())
            if not loops and not stored:
                return False
            if not all(self._only_from_own_state(loop.iter, function, depth + 1) for loop in loops):
                return False
            if not all(self._only_from_own_state(each, function, depth + 1) for each in stored):
                return False
        return True

    def _fors_binding(self, function: FunctionScope, name: str) -> list[cst.For]:
        """The ``for`` statements of ``function`` whose target binds ``name`` (its loops, as the
        engine recorded them)."""
        return [loop.node for loop in self.facts.loop_of_node.values()
                if loop.scope is function and isinstance(loop.node, cst.For) and name in loop.target_names]

    def _a_weight(self, value: cst.BaseExpression, function: FunctionScope, depth: int) -> bool:
        """Is ``value`` a parameter (or its gradient, or its data) of a model: ``self.fc.weight``,
        ``p.grad`` for ``p`` in ``group["params"]`` or ``model.parameters()``, a name bound to one?
        Shapes taken from there come from a fixed set, whatever the inputs."""
        while isinstance(value, cst.Attribute) and value.attr.value in ("data", "grad"):
            value = value.value
        if isinstance(value, cst.Attribute):
            return value.attr.value in ("weight", "bias")
        if not isinstance(value, cst.Name) or depth > 3:
            return False
        name = value.value
        if any(_iterates_parameters(loop.iter) for loop in self._fors_binding(function, name)):
            return True
        stored = function.stored_values.get(name, ())
        return bool(stored) and all(self._a_weight(each, function, depth + 1) for each in stored)

    def _size_from_callers(self, function: FunctionScope, parameter: str, info: ClassInfo | None,
                           depth: int) -> str | None:
        """What the class's own calls ``self.<method>(...)`` pass for ``parameter``."""
        if info is None:
            return None
        index = function.parameters.index(parameter)
        for call, caller in self._self_calls.get((id(info), function.name), ()):
            argument = next((arg.value for arg in call.args if arg.keyword is not None
                             and arg.keyword.value == parameter), None)
            positional = [arg for arg in call.args if arg.keyword is None]
            if argument is None and index < len(positional) and not any(arg.star for arg in positional[:index + 1]):
                argument = positional[index].value
            if argument is not None:
                found = self._size_in(argument, caller, info, depth)
                if found is not None:
                    return found
        return None

    VALID = [
        # keyed by the model's own weight shapes (an optimizer's projection per parameter shape,
        # a buffer per layer): a fixed set of keys, whatever the inputs
        """
import torch
class Projector:
    def __init__(self, model):
        self.model = model
        self.ortho = {}
        self.bases = {}

    def project(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad.shape not in self.ortho:
                    self.ortho[grad.shape] = torch.randn(grad.shape[0], 8, device=grad.device)

    def fit(self):
        for name, w in self.model.named_parameters():
            self.bases[w.size()] = torch.zeros(w.size(), device=w.device)
        self.bases[self.model.fc.weight.shape] = torch.eye(4)
""",
        # keyed by the shapes of layers the object holds (a power iteration per weight shape)
        """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.convs = nn.ModuleList(layers)
        self.u = {}

    def spectral_loss(self):
        weights = {}
        for layer in self.convs:
            w = layer.weight.view(layer.weight.size(0), -1)
            weights.setdefault(w.shape, []).append(w)
        for shape in weights:
            stacked = torch.stack(weights[shape])
            if shape not in self.u:
                self.u[shape] = F.normalize(torch.randn(stacked.shape[0], stacked.shape[1]), dim=1)
""",
        # one table for the longest length, sliced; a cache keyed by device and dtype
        """
import torch
from torch import nn
class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.cached = None
        self.by_device = {}

    def table(self, seq_len):
        if self.cached is None or self.cached.shape[0] < seq_len:
            t = torch.arange(seq_len, device=self.inv_freq.device)
            self.cached = torch.outer(t, self.inv_freq)
        return self.cached[:seq_len]

    def on(self, x):
        key = (x.device, x.dtype)
        if key not in self.by_device:
            self.by_device[key] = self.inv_freq.to(x.device, x.dtype)
        return self.by_device[key]
""",
        # keyed by length, but bounded by hand
        """
import torch
from torch import nn
class Masks(nn.Module):
    def __init__(self, limit=8):
        super().__init__()
        self.masks = {}
        self.limit = limit

    def forward(self, x):
        n = x.shape[1]
        if n not in self.masks:
            if len(self.masks) >= self.limit:
                self.masks.pop(next(iter(self.masks)))
            self.masks[n] = torch.ones(n, n, device=x.device).triu(1).bool()
        return self.masks[n]
""",
    ]

    VALID += [
        # a memoised mask with a size limit; an unbounded one called with a constant
        """
import functools
import torch
@functools.lru_cache(maxsize=8)
def causal_mask(n, device):
    return torch.ones(n, n, device=device).triu(1).bool()

@functools.cache
def window(size):
    return torch.hann_window(size)

def attend(scores):
    spectrum = torch.stft(scores.flatten(), 512, window=window(512), return_complex=True)
    return scores.masked_fill(causal_mask(scores.size(-1), scores.device), float("-inf")), spectrum
""",
    ]

    INVALID = [
        # an unbounded memoised mask, called with every sequence length
        Invalid("""
import functools
import torch
@functools.cache
def causal_mask(n, device):
    return torch.ones(n, n, device=device).triu(1).bool()

def attend(scores):
    return scores.masked_fill(causal_mask(scores.size(-1), scores.device), float("-inf"))
""", line=4),
        # a causal mask per sequence length, never evicted
        Invalid("""
import torch
from torch import nn
class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.heads = heads
        self.mask_cache = {}

    def mask(self, x):
        seq_len = x.size(1)
        if seq_len not in self.mask_cache:
            self.mask_cache[seq_len] = torch.ones(seq_len, seq_len, device=x.device).triu(1).bool()
        return self.mask_cache[seq_len]
""", line=14),
        # the key built by the caller from a length (rotary-embedding-torch#15)
        Invalid("""
import torch
from torch import nn
class RotaryEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.freqs = nn.Parameter(torch.randn(dim // 2), requires_grad=False)
        self.cache = dict()

    def forward(self, t, cache_key=None):
        if cache_key is not None and cache_key in self.cache:
            return self.cache[cache_key]
        freqs = torch.einsum("i,j->ij", t.float(), self.freqs)
        if cache_key is not None:
            self.cache[cache_key] = freqs.detach()
        return freqs

    def rotate(self, q, offset=0):
        seq_len = q.shape[-2]
        freqs = self.forward(torch.arange(seq_len, device=q.device) + offset, cache_key=f"{seq_len}:{offset}")
        return q * freqs.cos() + q.roll(1, -1) * freqs.sin()
""", line=15),
    ]


def _returned(body: cst.BaseSuite) -> list[cst.BaseExpression]:
    """The values a function's ``return`` statements hand back (nested functions left out)."""
    found: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Return) and node.value is not None:
            found.append(node.value)
            continue
        stack.extend(node.children)
    return found


def _on_given_device(body: cst.BaseSuite, function: FunctionScope) -> bool:
    """Does the function make its tensors on a device it is given (``device=device``,
    ``.to(device)``, ``.cuda()``)?"""
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
                return True
            for arg in node.args:
                given = isinstance(arg.value, cst.Name) and arg.value.value in function.parameters
                if given and ((arg.keyword is not None and arg.keyword.value == "device")
                              or (isinstance(func, cst.Attribute) and func.attr.value == "to")):
                    return True
        stack.extend(node.children)
    return False


# What a loop over a model's parameters iterates: ``model.parameters()``, ``named_parameters()``,
# ``state_dict().items()``, ``group["params"]``, ``optimizer.param_groups``.
_PARAMETER_ITERABLES = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "state_dict",
                                  "param_groups"})


def _iterates_parameters(iterable: cst.BaseExpression) -> bool:
    stack: list[cst.CSTNode] = [iterable]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Attribute) and node.attr.value in _PARAMETER_ITERABLES:
            return True
        if isinstance(node, cst.SimpleString) and node.evaluated_value == "params":
            return True
        if isinstance(node, (cst.Lambda, cst.FunctionDef)):
            continue
        stack.extend(node.children)
    return False
