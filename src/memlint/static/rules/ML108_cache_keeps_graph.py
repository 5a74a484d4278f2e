"""ML108 cache-keeps-graph: ``functools.lru_cache`` / ``functools.cache`` over a module's output,
or on a module's method.

A memoising cache keeps every result and every argument of every call it remembers, for as
long as the function exists (the process, for a module-level function or a method): up to
``maxsize`` entries (128 by default), without limit for ``functools.cache`` /
``lru_cache(maxsize=None)``.

- A cached function whose result is computed by a module with autograd on keeps each
  remembered result's autograd graph, and with it the activations of that forward pass, and
  hands the same graph back on the next call (a second backward through it then fails, or
  the parameters it saw are stale).
- A cached method keeps ``self`` in every key: a module's instances (and all their
  parameters and buffers, on the GPU) are never freed, even after ``del model``, and tensor
  arguments stay alive with them. The same holds for a cached function taking a module.

Flagged: a cached function or method that returns a graph-carrying value (a module call
outside ``no_grad``) — error; a cached method of an ``nn.Module`` class — warning; a cached
function with a parameter named as a module (``model``, ``encoder``...) — warning; a
``__getitem__`` cached without a size limit (every sample stays in memory) — warning. The
caches are ``functools.lru_cache``, ``functools.cache`` and wrappers of them with the same
class-level cache (transformers' ``compile_compatible_method_lru_cache``). Not flagged:
caches of shapes, ints, strings, or constant tensors built from plain arguments (a cached
causal mask or position table in a module-level function), static and class methods of other
classes, cached computations under ``torch.no_grad()`` that take no module. Also flagged
(warning): an unbounded cache on a method of any class that computes tensors from its object's
attributes (``self._mean.mean(dim=0)``), or whose instances hold tensors (an attribute bound to
``torch.empty(n, device=device)``, ``{k: torch.randn(...) ...}``), whatever the method returns:
the cache keeps every instance and its tensors.
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import MODULE_METHODS, MODULE_NAME_SUFFIXES, MODULE_NAME_WORDS, ClassScope, Graph, descendants, dotted_name
from memlint.static.rule import Invalid, Rule
from memlint.static.tensor_api import TENSOR_API

_CACHES = frozenset({"functools.lru_cache", "functools.cache"})
# Wrappers of lru_cache with the same class-level cache (transformers' pytorch_utils).
_CACHE_SUFFIXES = ("compile_compatible_method_lru_cache",)
_UNBOUNDED = 1 << 62
# Below this many entries a cache of graphs is bounded: a warning, not a leak.
_SMALL_CACHE = 32


class CacheKeepsGraph(Rule):
    code = "ML108"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        cached = next(((d, name) for d in node.decorators if (name := self._cache_name(d.decorator)) is not None),
                      None)
        if cached is None:
            return
        # Reported on the decorator: it is what the fix removes or changes.
        decorator, cache = cached
        facts = self.facts
        parent = facts.scope
        others = {dotted_name(d.decorator) for d in node.decorators}
        is_method = isinstance(parent, ClassScope) and not others & {"staticmethod", "classmethod"}
        info = parent.info if isinstance(parent, ClassScope) else None

        def decide() -> None:
            scope = facts.function_scopes.get(id(node))
            if scope is None:
                return
            name = f"{info.name}.{node.name.value}" if info is not None else node.name.value
            if scope.return_graph is Graph.CARRIES:
                size = _maxsize(node, cache)
                if size is not None and size < _SMALL_CACHE:
                    # A few entries: bounded, but the same graph comes back for the same key.
                    self.report(
                        decorator,
                        f"'{name}()' caches up to {size} module output(s) and their graphs",
                        help="do not cache module outputs, or compute them under torch.no_grad(): a cached graph is "
                             "stale, and a second backward through it may fail",
                        function=scope, severity="warning",
                    )
                    return
                self.report(
                    decorator,
                    f"'{name}()' caches module outputs: every cached entry keeps its autograd graph alive",
                    help="do not cache module outputs: cache plain values (shapes, masks), or compute them under "
                         "torch.no_grad()",
                    function=scope,  # dropped if the function is only called under no_grad
                )
                return
            if is_method and node.name.value == "__getitem__" and is_unbounded_cache(node, cache):
                self.report(
                    decorator,
                    f"'{name}' is cached without a size limit: every sample stays in memory",
                    help="drop the cache, or bound it (lru_cache(maxsize=...))",
                    needs_grad=False, severity="warning",
                )
                return
            if is_method and info is not None and info.is_module:
                if _maxsize(node, cache) == 1:
                    return  # one entry: the instance that called last, which its caller holds anyway
                self.report(
                    decorator,
                    f"'{name}' is cached with @{cache}, which keeps every {info.name} alive",
                    help="cache a module-level function of plain arguments, or compute the value once in __init__",
                    needs_grad=False, severity="warning",
                )
                return
            if is_method and info is not None and is_unbounded_cache(node, cache) and (
                    _computes_tensors_of_self(node, facts) or _holds_tensors(info, facts)):
                # functools' own warning: the cache holds self in every key (flake8-bugbear B019)
                self.report(
                    decorator,
                    f"@{cache} on '{node.name.value}' keeps every {info.name} and its tensors alive",
                    help="cache the value on the instance (compute it once and keep it in an attribute)",
                    needs_grad=False, severity="warning",
                )
                return
            module_param = next((p.name.value for p in node.params.params
                                 if p.name.value != "self" and _names_a_module(p)
                                 and (_annotated_module(p) or _used_as_a_module(node, p.name.value))), None)
            if module_param is not None:
                self.report(
                    decorator,
                    f"'{name}()' is cached with @{cache} and takes '{module_param}': the cache keeps the module alive",
                    help="pass plain values, or store the result on the module",
                    needs_grad=False, severity="warning",
                )

        self.at_module_exit(decide)

    def _cache_name(self, decorator: cst.BaseExpression) -> str | None:
        func = decorator.func if isinstance(decorator, cst.Call) else decorator
        qualified = self.facts.qualified_name(func) or ""
        if qualified in _CACHES or qualified.endswith(_CACHE_SUFFIXES):
            return qualified.rsplit(".", 1)[-1]
        return None

    VALID = [
        # a module's method cached with one entry: it holds the last instance that called it (its
        # caller holds it anyway) and a mask built from plain arguments
        """
import functools
import torch
from torch import nn
class JointAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    @functools.lru_cache(maxsize=1)
    def attention_mask(self, length, device):
        return torch.ones(length, length, device=device).triu(1).bool()

    def forward(self, x):
        mask = self.attention_mask(x.shape[1], x.device)
        return self.proj(x).masked_fill(mask[None, :, :, None].any(-1, keepdim=True), 0)
""",
        # a parameter named "model" that is a choice key (a string or a tuple of strings), only
        # compared: the cache keeps strings, not a module
        """
from functools import lru_cache

import torch

TTS_MODELS = {}


@lru_cache(maxsize=1000)
def infer(ref_text, gen_text, model, seed):
    if model == "F5-TTS":
        ema_model = TTS_MODELS["f5"]
    elif model[0] == "Custom":
        ema_model = TTS_MODELS[model[1]]
    torch.manual_seed(seed)
    return ema_model.sample(ref_text + gen_text).cpu().numpy()
""",
        # an unbounded cache on a method of a class that holds no tensors: names and numbers only
        """
import functools

class Vocabulary:
    def __init__(self, tokens):
        self.tokens = list(tokens)

    @functools.lru_cache(None)
    def index(self, token):
        return self.tokens.index(token)
""",
        # a causal mask of a plain size
        """
import functools
import torch
@functools.lru_cache(maxsize=8)
def causal_mask(n, device):
    return torch.triu(torch.ones(n, n, dtype=torch.bool, device=device), diagonal=1)
""",
        # shapes and strings
        """
from functools import cache
import torch
@cache
def conv_output_size(size, kernel, stride, padding):
    return (size + 2 * padding - kernel) // stride + 1

@cache
def layer_name(index):
    return f"layers.{index}"
""",
        # a static method; a cached method of a class that is not a module
        """
import functools
import torch
from torch import nn
class Rotary(nn.Module):
    @staticmethod
    @functools.lru_cache(maxsize=None)
    def frequencies(dim, base=10000.0):
        return 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))

class Vocab:
    @functools.lru_cache(maxsize=None)
    def lookup(self, token):
        return self.table.get(token, 0)

class Frames:
    @functools.lru_cache(maxsize=16)
    def __getitem__(self, i):
        return self.decode(i)
""",
    ]

    VALID += [
        # a cached function of an identifier, not a module
        """
from functools import lru_cache
import torch
@lru_cache(maxsize=128)
def is_base_model(model_id: str) -> bool:
    return model_id.endswith("-base")
""",
    ]

    INVALID = [
        # an unbounded cache on a method returning a string: it still keeps every instance, and
        # each instance holds a device buffer
        Invalid("""
import functools
import torch

class GraphLowering:
    def __init__(self, graph_id, device):
        self.graph_id = graph_id
        self.workspace = torch.empty(1 << 24, device=device)

    @functools.lru_cache(None)
    def constant_name(self, name):
        return f"graph{self.graph_id}_{name}"
""", line=10),
        # an unbounded cache on a method of an object that holds tensors: every posterior built
        # (one per step) stays alive in the cache's keys, with its tensors
        Invalid("""
from functools import lru_cache
import torch
class Posterior:
    def __init__(self, mean, variance):
        self._mean, self._variance = mean, variance

    @property
    @lru_cache(maxsize=None)
    def mixture_mean(self):
        return self._mean.mean(dim=-3)
""", line=9),
        # a learned position embedding whose forward is cached with a few entries (warning)
        Invalid("""
import functools
import torch
from torch import nn
class LearnedPositionEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.rows = nn.Embedding(50, dim)

    @functools.lru_cache(maxsize=1)
    def forward(self, height, device):
        return self.rows(torch.arange(height, device=device))
""", line=10),
        # a Dataset's __getitem__ cached without limit
        Invalid("""
from functools import lru_cache
import torch
from torch.utils.data import Dataset
class AudioDataset(Dataset):
    @lru_cache(maxsize=None)
    def __getitem__(self, i):
        return torch.load(self.paths[i], map_location="cpu")
""", line=6),
        # a cached module output
        Invalid("""
import functools
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(512, 512)

    @functools.lru_cache(maxsize=128)
    def encode_prompt(self, prompt_ids):
        return self.proj(prompt_ids)
""", line=10),
        # a module-level cache over a model call
        Invalid("""
from functools import lru_cache
import torch
model = torch.nn.Linear(16, 16)

@lru_cache(maxsize=None)
def features(x):
    return model(x)
""", line=6),
        # a cached method of a module, no graph (warning)
        Invalid("""
import functools
import torch
from torch import nn
class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)

    @functools.cache
    def mask(self, n):
        return torch.ones(n, n).tril()
""", line=10),
        # a cached function taking the model
        Invalid("""
import functools
import torch
@functools.lru_cache(maxsize=32)
def embed_labels(encoder, labels):
    with torch.no_grad():
        return encoder(labels)
""", line=4),
    ]


# Tensor methods whose names containers and strings share: no evidence of a tensor.
_AMBIGUOUS_METHODS = frozenset({"values", "index", "split", "count", "copy", "get", "items", "keys", "item",
                                "tolist", "numpy", "type", "to", "join", "format", "strip", "lower", "upper"})


def _computes_tensors_of_self(function: cst.FunctionDef, facts) -> bool:
    """Does the method compute tensors from its object's attributes (``self._mean.mean(dim=0)``,
    ``torch.distributions.Normal(loc=self.mixture_mean, ...)``): instances hold tensors."""
    found = False

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in TENSOR_API \
                    and func.attr.value not in _AMBIGUOUS_METHODS \
                    and (dotted_name(func.value) or "").startswith("self."):
                found = True
            elif (facts.qualified_name(func) or "").startswith("torch.") and any(
                    (dotted_name(arg.value) or "").startswith("self.") for arg in node.args):
                found = True

    function.body.visit(_Calls())
    return found


# torch functions that allocate a tensor: an attribute bound to one holds memory (on its device).
_ALLOCATING = frozenset(f"torch.{name}" for name in (
    "empty", "zeros", "ones", "full", "randn", "rand", "randint", "tensor", "arange", "linspace", "eye", "as_tensor",
    "from_numpy", "stack", "cat", "load"))


def _holds_tensors(info, facts) -> bool:
    """Do the class's instances hold tensors: an attribute bound (in any method) to what a
    torch allocator returns (``self.workspace = torch.empty(n, device=device)``, also inside a
    dict or list: ``self.constants = {k: torch.randn(...) for k in names}``)?"""
    found = False

    class _Allocations(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            found = found or facts.qualified_name(node.func) in _ALLOCATING

    for binding in info.attributes.values():
        if isinstance(binding.node, cst.BaseExpression):
            binding.node.visit(_Allocations())
            if found:
                return True
    return False


def is_unbounded_cache(function: cst.FunctionDef, cache: str) -> bool:
    """``@functools.cache`` or ``@lru_cache(maxsize=None)``."""
    return cache == "cache" or _maxsize(function, cache) == _UNBOUNDED


def _maxsize(function: cst.FunctionDef, cache: str) -> int | None:
    """The cache's ``maxsize``: an int, ``_UNBOUNDED``, or None when not a literal (128 when not given)."""
    if cache == "cache":
        return _UNBOUNDED
    for decorator in function.decorators:
        call = decorator.decorator
        if isinstance(call, cst.Call):
            for index, arg in enumerate(call.args):
                if (arg.keyword is not None and arg.keyword.value == "maxsize") or (arg.keyword is None and index == 0):
                    if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                        return _UNBOUNDED
                    return int(arg.value.evaluated_value) if isinstance(arg.value, cst.Integer) else None
    return 128


def _annotated_module(param: cst.Param) -> bool:
    annotation = param.annotation
    return annotation is not None and "Module" in (dotted_name(annotation.annotation) or "")


def _used_as_a_module(function: cst.FunctionDef, name: str) -> bool:
    """Does the body call ``name`` (``model(x)``) or a module's method on it (``model.eval()``,
    ``model.generate(...)``)? A parameter named ``model`` that is only compared with strings (a
    model choice key) is no module."""
    for call in (node for node in descendants(function.body) if isinstance(node, cst.Call)):
        func = call.func
        if isinstance(func, cst.Name) and func.value == name:
            return True
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name \
                and func.attr.value in _MODULE_USE:
            return True
    return False


_MODULE_USE = MODULE_METHODS | {"generate"}


def _names_a_module(param: cst.Param) -> bool:
    """A parameter annotated as a module, or named as one (``model``, ``encoder``, ``teacher_model``;
    not ``model_id`` or ``model_name``)."""
    annotation = param.annotation
    if annotation is not None and "Module" in (dotted_name(annotation.annotation) or ""):
        return True
    name = param.name.value.lower()
    return name in MODULE_NAME_WORDS or name.endswith(MODULE_NAME_SUFFIXES)
