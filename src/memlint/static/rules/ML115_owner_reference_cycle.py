"""ML115 owner-reference-cycle: an object that holds device memory keeps a reference back to
itself (its own bound method, a hook capturing it), so it is freed only by the cycle
collector, or never.

Reference counting frees a tensor the moment its last reference goes; an object in a reference
cycle waits for Python's cycle collector, which runs on the count of Python allocations, not
on GPU memory, and cannot see through references held by C++ objects at all.

- **error**: a hook registered on the autograd node of a tensor the object keeps
  (``out.grad_fn.register_hook(functools.partial(clear_cache, self))`` with ``out`` stored on
  ``self``): object -> tensor -> ``grad_fn`` (C++) -> hook -> object. The collector cannot
  traverse the C++ node, so the object, the tensor and its whole graph are never freed; every
  object built this way adds one (cornellius-gp/gpytorch#2734).
- **warning**: a class that holds device state (a module, an optimizer or scheduler) and keeps
  its own bound method (``super().__init__(optimizer, self.lr_lambda)``,
  ``self.callback = self.update``, ``self.stats = Statistic(self.compute)``), built again in
  every iteration of a loop that trains (per fold, trial, task): ``del model, optimizer,
  scheduler; torch.cuda.empty_cache()`` frees nothing, each run's parameters and optimizer
  state stay on the GPU until a full collection happens to run (huggingface/transformers#1134).
- **warning**: a record of this module built with the object itself and keeping it
  (``self._extra = _TensorExtra(self)``, whose ``__init__`` stores ``self.tensor = tensor``), in a
  class built once per step (in a module's ``forward`` or a loop that runs steps) around a
  tensor with a graph: every step's wrappers, and their tensors, wait for the cycle collector
  (rwth-i6/returnn#1826). Reported where the record keeps its parent.
"""

from __future__ import annotations

from dataclasses import dataclass

import re

import libcst as cst

from memlint.static.facts import ClassInfo, FunctionScope, Graph, Kind, dotted_name, names_in, storage_name
from memlint.static.rule import Invalid, Rule

_NODE_HOOKS = frozenset({"register_hook", "register_prehook"})
_STORING_METHODS = frozenset({"append", "extend", "add", "update", "setdefault", "insert", "appendleft"})


@dataclass
class _SelfReference:
    node: cst.CSTNode
    info: ClassInfo
    method: str  # the bound method (or "self") the object keeps
    function: FunctionScope  # the method that stores it


class OwnerReferenceCycle(Rule):
    code = "ML115"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._kept_on_self: dict[int, set[str]] = {}  # id(method) -> names it stores on self
        self._node_hooks: list[tuple[cst.Call, FunctionScope, str]] = []  # (call, method, tensor root)
        self._self_references: list[_SelfReference] = []
        self._built_in_loops: list[tuple[str, object]] = []  # (class name, loop)
        # (class name, function) of constructions outside any loop: a run when a loop calls the function
        self._built_in_functions: list[tuple[str, FunctionScope]] = []
        # (class name, its stored parameters given a tensor here, built per step?) per construction
        self._constructions: list[tuple[str, frozenset[str], bool]] = []
        # a record of this module built with the object itself and keeping it (``self._extra =
        # _TensorExtra(self)``): (node, the object's class, the record's class, the method)
        self._back_references: list[tuple[cst.CSTNode, ClassInfo, str, FunctionScope]] = []
        self._scheduled = False

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    # ----- what methods store on self ----------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        function = self.facts.function
        if function.class_info is None:
            return
        for target in node.targets:
            place = storage_name(target.target)
            if place is None or not place.startswith("self."):
                continue
            self._kept_on_self.setdefault(id(function), set()).update(_top_names(node.value))
            if isinstance(target.target, cst.Attribute):
                self._note_self_reference(node, node.value, function)

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        function = facts.function
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _NODE_HOOKS and isinstance(func.value, cst.Attribute) and func.value.attr.value == "grad_fn":
                root = _root_name(func.value.value)
                if root is not None and function.class_info is not None and node.args:
                    self._node_hooks.append((node, function, root))
                    self._schedule()
                return
            if method in _STORING_METHODS and function.class_info is not None:
                place = storage_name(func.value)
                if place is not None and place.startswith("self."):
                    self._kept_on_self.setdefault(id(function), set()).update(
                        name for arg in node.args for name in _top_names(arg.value))
                return
            if method == "__init__" and function.class_info is not None and function.name == "__init__":
                # super().__init__(optimizer, self.lr_lambda): the base class keeps what it is given
                for arg in node.args:
                    self._note_self_reference(node, arg.value, function, handed=True)
                return
        if facts.loop is not None and isinstance(func, cst.Name) and func.value in facts.classes:
            self._built_in_loops.append((func.value, facts.loop))
            self._schedule()
        elif isinstance(func, cst.Name) and func.value in facts.classes and function is not facts.module_scope:
            self._built_in_functions.append((func.value, function))
            self._schedule()
        if isinstance(func, cst.Name) and func.value in facts.classes:
            self._note_construction(node, facts.classes[func.value])

    def _note_construction(self, call: cst.Call, info: ClassInfo) -> None:
        """Which parameters that the class's ``__init__`` keeps this construction hands a tensor
        with a graph (a module's output), and whether it runs once per step (in a module's
        ``forward`` or a loop that runs steps)."""
        facts = self.facts
        init = facts.find_method(info, "__init__")
        if init is None:
            return
        kept = {binding.node.value for binding in info.attributes.values() if isinstance(binding.node, cst.Name)}
        given = set()
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        for index, arg in enumerate(positional):
            if index < len(init.parameters) and init.parameters[index] in kept \
                    and facts.graph_value(arg.value).state is Graph.CARRIES:
                given.add(init.parameters[index])
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in kept \
                    and facts.graph_value(arg.value).state is Graph.CARRIES:
                given.add(arg.keyword.value)
        function = facts.function
        per_step = (function.is_per_step_method and function.name == "forward") or any(
            loop.runs_steps for loop in facts.loops_in_function())
        self._constructions.append((info.name, frozenset(given), per_step))
        self._schedule()

    def _note_self_reference(self, node: cst.CSTNode, value: cst.BaseExpression, function: FunctionScope,
                             handed: bool = False) -> None:
        """``value`` (stored on self, or handed to a base class's __init__) refers back to the
        object: a bound method of it, a partial or lambda over ``self``, or a child object of
        an outside class built with one of those."""
        info = function.class_info
        kept = self._refers_to_self(value, info)
        if kept is None and not handed and isinstance(value, cst.Call) and dotted_name(value.func) is not None \
                and not (self.facts.qualified_name(value.func) or "").startswith("weakref."):
            # (weakref.WeakMethod(self.m), weakref.ref(self): a weak reference keeps nothing)
            child = self.facts.classes.get(dotted_name(value.func))
            for arg in value.args:
                found = self._refers_to_self(arg.value, info)
                # a class of this module keeps it only if its __init__ stores that parameter;
                # an outside class is handed a callback to keep it
                if found is not None and (child is None or self._child_keeps(child, value, arg)):
                    kept = found
                    break
        if kept is not None:
            self._self_references.append(_SelfReference(node, info, kept, function))
            self._schedule()
        elif not handed and isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            child = self.facts.classes.get(value.func.value)
            kept_at = next((self._kept_at(child, value, arg) for arg in value.args
                            if isinstance(arg.value, cst.Name) and arg.value.value == "self"), None)
            if child is not None and child is not info and kept_at is not None:
                self._back_references.append((kept_at, info, child.name, function))
                self._schedule()

    def _kept_at(self, child: ClassInfo | None, call: cst.Call, arg: cst.Arg) -> cst.CSTNode | None:
        """Where ``child.__init__`` stores the parameter ``arg`` binds (``self.tensor = tensor``)."""
        if child is None or not self._child_keeps(child, call, arg):
            return None
        init = self.facts.find_method(child, "__init__")
        index = [a for a in call.args if a.keyword is None].index(arg) if arg.keyword is None else None
        parameter = arg.keyword.value if arg.keyword is not None else init.parameters[index]
        return next((binding.node for binding in child.attributes.values()
                     if isinstance(binding.node, cst.Name) and binding.node.value == parameter), None)

    def _child_keeps(self, child: ClassInfo, call: cst.Call, arg: cst.Arg) -> bool:
        """Does ``child.__init__`` store (on its ``self``) the parameter ``arg`` binds?"""
        init = self.facts.find_method(child, "__init__")
        if init is None:
            return False
        if arg.keyword is not None:
            parameter = arg.keyword.value
        else:
            index = [a for a in call.args if a.keyword is None].index(arg)
            if index >= len(init.parameters):
                return False
            parameter = init.parameters[index]
        return any(isinstance(binding.node, cst.Name) and binding.node.value == parameter
                   for binding in child.attributes.values())

    def _refers_to_self(self, value: cst.BaseExpression, info: ClassInfo) -> str | None:
        """``self.m`` for a method ``m`` of the class, or a partial/lambda over it or ``self``."""
        name = dotted_name(value)
        if name is not None and name.startswith("self.") and name.count(".") == 1:
            return name if self.facts.methods_of(info.name, name[5:]) else None  # indexed before the walk
        if isinstance(value, cst.Call) and (self.facts.qualified_name(value.func) or "").endswith(".partial"):
            for arg in value.args:
                found = self._refers_to_self(arg.value, info)
                if found is not None:
                    return found
                if isinstance(arg.value, cst.Name) and arg.value.value == "self":
                    return "self"
            return None
        if isinstance(value, cst.Lambda) and "self" in names_in(value.body):
            return "self"
        return None

    # ----- decisions -----------------------------------------------------------------------------
    def _decide(self) -> None:
        for node, function, root in self._node_hooks:
            if root != "self" and root not in self._kept_on_self.get(id(function), ()):
                continue  # the tensor is not kept by the object: no cycle through it
            hook = next(arg.value for arg in node.args)
            if not self._captures_self(hook, function):
                continue
            self.report(
                node,
                "hook on a kept tensor's grad_fn captures the object: a cycle through autograd that gc cannot free",
                help="reach the object through weakref.ref(self) inside the hook, or do not keep the tensor",
                needs_grad=False, function=function,
            )
        built = {name for name, loop in self._built_in_loops if loop.is_training_loop}
        # built by a function that trains (one run: a model, its optimizer, this object), which a
        # loop of this module calls again and again (per fold, trial, builder)
        built |= {name for name, function in self._built_in_functions
                  if (function.has_backward or function.has_optimizer_step)
                  and any(site.loops for site in self.facts.calls_into.get(id(function.node), ()))}
        reported: set[int] = set()
        for reference in self._self_references:
            info = reference.info
            if info.name not in built or id(reference.node) in reported or not self._holds_device_state(info):
                continue
            reported.add(id(reference.node))
            what = f"its own {reference.method}" if reference.method != "self" else "a reference to itself"
            self.report(
                reference.node,
                f"{info.name} keeps {what}: a reference cycle only gc frees, one per run",
                help="pass a plain function or closure that does not hold the object, or call gc.collect() after "
                     "dropping each run's objects",
                needs_grad=False, severity="warning", function=reference.function,
            )

        for node, info, record, function in self._back_references:
            built = [(given, per_step) for name, given, per_step in self._constructions if name == info.name]
            if id(node) in reported or not any(given for given, _ in built) or not any(per_step for _, per_step in built):
                continue  # no tensor seen handed to it, or not built once per step
            reported.add(id(node))
            self.report(
                node,
                f"{record} keeps the {info.name} that keeps it: a cycle only gc frees, built every step",
                help=f"keep a weakref.ref to the {info.name} here: reference counting then frees each {info.name}, "
                     "and its tensors, as soon as it is dropped",
                needs_grad=False, severity="warning", function=function,
            )

    def _captures_self(self, hook: cst.BaseExpression, function: FunctionScope, depth: int = 0) -> bool:
        info = function.class_info
        if info is not None and self._refers_to_self(hook, info) is not None:
            return True
        if isinstance(hook, cst.Name) and depth < 3:
            binding = function.bindings.get(hook.value)
            node = binding.node if binding is not None else None
            if isinstance(node, cst.FunctionDef):
                return "self" in names_in(node.body)  # a closure over self
            if isinstance(node, cst.BaseExpression):
                return self._captures_self(node, function, depth + 1)
        return False

    def _holds_device_state(self, info: ClassInfo) -> bool:
        """A module, an optimizer or LR scheduler, an object holding a module, or one holding an
        optimizer it was given (``self.optimizer.param_groups`` read: a scheduler of its own)."""
        kinds = info.kinds
        if kinds.module or kinds.optimizer or info.is_module or any(
                binding.kind is Kind.MODULE for binding in info.attributes.values()):
            return True
        node = self.facts.class_nodes.get(info.name)
        return node is not None and _READS_PARAM_GROUPS.search(self._checker.module.code_for_node(node)) is not None

    VALID = [
        # the same scheduler keeping only a weak reference to its bound method
        """
import weakref
import math
import torch

class WarmRestarts(object):
    def __init__(self, optimizer, period):
        self.optimizer = optimizer
        self.period = period
        self.step_count = 0
        self.scale_fn = weakref.WeakMethod(self._cosine)

    def _cosine(self, x):
        return 0.5 * (1 + math.cos(math.pi * x))

    def step(self):
        self.step_count += 1
        for group in self.optimizer.param_groups:
            group["lr"] = group["initial_lr"] * self.scale_fn()((self.step_count % self.period) / self.period)

def run(build_model, loader):
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = WarmRestarts(optimizer, 100)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    return loss.item()

def compare(builders, loader):
    return {name: run(build, loader) for name, build in builders.items()}
""",
        # a record that keeps a weak reference to its parent; a parse tree with parent links, built
        # once and holding no tensor
        """
import weakref
import torch
import torch.nn as nn


class _Extra:
    def __init__(self, tensor):
        self._tensor = weakref.ref(tensor)
        self.dyn_size_max = None


class Tensor:
    def __init__(self, name, raw_tensor):
        self.name = name
        self.raw_tensor = raw_tensor
        self._extra = None

    def extra(self):
        if self._extra is None:
            self._extra = _Extra(self)
        return self._extra


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.proj = nn.Linear(16, 16)

    def forward(self, targets):
        x = Tensor("emb", self.embed(targets))
        x.extra()
        return self.proj(x.raw_tensor)


class Node:
    def __init__(self, parent, label):
        self.parent = parent
        self.label = label
        self.children = []

    def add(self, label):
        child = Node(self, label)
        self.children.append(child)
        self.last = _Extra(self)
        return child
""",
        # a schedule as a closure (what transformers changed it to); a weakref in a grad_fn hook
        """
import weakref
import torch
from torch.optim.lr_scheduler import LambdaLR

def linear_warmup(optimizer, warmup, total):
    def lr_lambda(step):
        return step / max(1, warmup) if step < warmup else max(0.0, (total - step) / max(1, total - warmup))
    return LambdaLR(optimizer, lr_lambda)

class Cache:
    def __init__(self, model):
        self.model = model
        self.memo = {}

    def mean(self, x):
        out = self.model(x).mean(0)
        owner = weakref.ref(self)
        out.grad_fn.register_hook(lambda *args: owner() and owner().memo.clear())
        self.memo["mean"] = out
        return out

def cross_validate(folds, build, loader_for, epochs):
    for fold in folds:
        model = build()
        optimizer = torch.optim.AdamW(model.parameters())
        scheduler = linear_warmup(optimizer, 100, 1000)
        for x, y in loader_for(fold):
            model(x, y).backward()
            optimizer.step()
            scheduler.step()
""",
        # a bound method kept by an object built once; a grad_fn hook on a tensor not kept
        """
import functools
import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR

class WarmupSchedule(LambdaLR):
    def __init__(self, optimizer, warmup):
        self.warmup = warmup
        super().__init__(optimizer, self.lr_lambda)

    def lr_lambda(self, step):
        return min(1.0, step / self.warmup)

class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def _count(self, *args):
        self.calls += 1

    def forward(self, x):
        y = x * 2
        y.grad_fn.register_hook(self._count)
        return y

def train(model, loader, optimizer):
    scheduler = WarmupSchedule(optimizer, 500)
    for x, y in loader:
        model(x, y).backward()
        optimizer.step()
        scheduler.step()
""",
    ]

    INVALID = [
        # a scheduler of the file that holds the optimizer it was given keeps its own bound method,
        # built by a function that trains one run, which the loop over model builders calls again
        Invalid("""
import math
import torch

class WarmRestarts(object):
    def __init__(self, optimizer, period):
        self.optimizer = optimizer
        self.period = period
        self.step_count = 0
        self.scale_fn = self._cosine

    def _cosine(self, x):
        return 0.5 * (1 + math.cos(math.pi * x))

    def step(self):
        self.step_count += 1
        for group in self.optimizer.param_groups:
            group["lr"] = group["initial_lr"] * self.scale_fn((self.step_count % self.period) / self.period)

def run(build_model, loader):
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = WarmRestarts(optimizer, 100)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    return loss.item()

def compare(builders, loader):
    results = {}
    for name, build in builders.items():
        results[name] = run(build, loader)
    return results
""", line=10),
        # a wrapper built on every forward around a module's output, and a record it keeps that
        # keeps the wrapper back (returnn#1826): each step's tensors wait for the cycle collector
        Invalid("""
import torch
import torch.nn as nn


class _Extra:
    def __init__(self, tensor):
        self.tensor = tensor
        self.dyn_size_max = None


class Tensor:
    def __init__(self, name, raw_tensor):
        self.name = name
        self.raw_tensor = raw_tensor
        self._extra = None

    def extra(self):
        if self._extra is None:
            self._extra = _Extra(self)
        return self._extra


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.proj = nn.Linear(16, 16)

    def forward(self, targets):
        x = Tensor("emb", self.embed(targets))
        x.extra()
        return self.proj(x.raw_tensor)
""", line=8),
        # a cached tensor whose grad_fn hook holds its owner (gpytorch#2734)
        Invalid("""
import functools
import torch

def clear_cache(owner, *args):
    owner.cache = {}

class Posterior:
    def __init__(self, kernel, train_x, train_y):
        self.kernel, self.train_x, self.train_y = kernel, train_x, train_y
        self.cache = {}

    @property
    def weights(self):
        if "weights" not in self.cache:
            weights = torch.linalg.solve(self.kernel(self.train_x), self.train_y)
            weights.grad_fn.register_hook(functools.partial(clear_cache, self))
            self.cache["weights"] = weights
        return self.cache["weights"]
""", line=17),
        # a scheduler subclass keeping its own bound method, built per fold (transformers#1134)
        Invalid("""
import torch
from torch.optim.lr_scheduler import LambdaLR

class WarmupConstant(LambdaLR):
    def __init__(self, optimizer, warmup_steps):
        self.warmup_steps = warmup_steps
        super(WarmupConstant, self).__init__(optimizer, self.lr_lambda)

    def lr_lambda(self, step):
        return min(1.0, step / max(1, self.warmup_steps))

def cross_validate(folds, build_model, loaders):
    for fold in folds:
        model = build_model().cuda()
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
        scheduler = WarmupConstant(optimizer, 100)
        for batch in loaders[fold]:
            model(**batch).loss.backward()
            optimizer.step()
            scheduler.step()
        del model, optimizer, scheduler
""", line=8),
        # a module whose child keeps the module's bound method, built per trial
        Invalid("""
import torch
from torch import nn
from statistics_lib import RunningStatistic

class GrowingLayer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.stats = RunningStatistic(self.compute_update)

    def compute_update(self):
        return self.linear.weight.detach().pow(2).sum()

    def forward(self, x):
        return self.linear(x)

def search(widths, loader):
    for width in widths:
        layer = GrowingLayer(width).cuda()
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        for x in loader:
            layer(x).sum().backward()
            optimizer.step()
""", line=10),
    ]


_READS_PARAM_GROUPS = re.compile(r"\bself\.\w+\.param_groups\b")


def _top_names(value: cst.BaseExpression) -> set[str]:
    """The variables a stored value holds as they are: ``x``, the elements of ``(x, y)``."""
    if isinstance(value, cst.Name):
        return {value.value}
    if isinstance(value, (cst.Tuple, cst.List)):
        return {el.value.value for el in value.elements if isinstance(el.value, cst.Name)}
    if isinstance(value, cst.Dict):
        return {el.value.value for el in value.elements
                if isinstance(el, cst.DictElement) and isinstance(el.value, cst.Name)}
    return set()


def _root_name(node: cst.BaseExpression) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None
