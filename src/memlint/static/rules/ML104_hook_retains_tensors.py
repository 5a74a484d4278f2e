"""ML104 hook-retains-tensors: a forward/backward/tensor hook stores one of its tensor
arguments into a container that outlives the call.

A hook runs on every forward (or backward) pass. A forward hook that appends ``output`` to a
list keeps the output, and through its ``grad_fn`` the whole autograd graph of that forward
pass, alive for as long as the list lives: memory grows every step. With ``.detach()`` the
graph is cut, but a list that is never emptied still keeps one device tensor per call.

Hooks are usually defined before they are registered, so the rule collects what every
function stores and decides at the end of the module, once the ``register_*hook`` calls
(functions, lambdas, closures, ``functools.partial`` and callable objects) are known.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from memlint.static.facts import FunctionScope, concatenated_onto, dotted_name, names_in, storage_name
from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML101_graph_accumulation import source_of

_MODULE_HOOKS = frozenset({
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook", "register_module_forward_hook",
    "register_module_forward_pre_hook", "register_module_full_backward_hook",
})
_BACKWARD_HOOKS = frozenset({"register_full_backward_hook", "register_full_backward_pre_hook",
                             "register_backward_hook", "register_module_full_backward_hook", "register_hook"})
_TENSOR_HOOKS = frozenset({"register_hook"})
_STORING_METHODS = {"append": -1, "extend": -1, "appendleft": -1, "insert": 1}
# Methods that return (a view or copy of) the same tensor, graph included.
_SAME_TENSOR_METHODS = frozenset({
    "clone", "contiguous", "float", "half", "bfloat16", "double", "view", "reshape", "flatten", "squeeze",
    "unsqueeze", "permute", "transpose", "t", "view_as", "reshape_as", "expand", "expand_as", "cuda", "to",
    "type_as", "narrow", "select", "chunk", "split", "unbind",
})
# What the message calls the hook of each registration.
_HOOK_KINDS = {
    "register_forward_hook": "forward hook", "register_module_forward_hook": "global forward hook",
    "register_forward_pre_hook": "forward pre-hook", "register_module_forward_pre_hook": "global forward pre-hook",
    "register_full_backward_hook": "backward hook", "register_backward_hook": "backward hook",
    "register_module_full_backward_hook": "global backward hook",
    "register_full_backward_pre_hook": "backward pre-hook", "register_hook": "tensor hook",
}
_CLEARING_METHODS = frozenset({"clear", "pop", "popleft", "popitem"})


def _empty_display(value: cst.BaseExpression) -> bool:
    """``[]``, ``{}``, ``list()``, ``dict()``: a new empty container."""
    if isinstance(value, (cst.List, cst.Dict)):
        return not value.elements
    return isinstance(value, cst.Call) and not value.args and dotted_name(value.func) in ("list", "dict")


@dataclass
class _Store:
    node: cst.CSTNode
    function: FunctionScope
    keys: frozenset[tuple]  # how a register call can name the storing function
    params: tuple[str, ...]  # positional parameters, without self/cls
    param: str  # the parameter whose tensor is stored
    detached: bool
    container: str
    owner: tuple  # (scope, name) the container is bound in
    key_names: frozenset[str] | None = None  # for d[key] = value: the key's names


@dataclass
class _Registration:
    method: str
    keys: set[tuple]
    registrar: FunctionScope
    bound_keywords: set[str] = field(default_factory=set)  # functools.partial(f, name=...)
    bound_positional: int = 0


class HookRetainsTensors(Rule):
    code = "ML104"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._stores: list[_Store] = []
        self._registrations: list[_Registration] = []
        self._cleared: set[str] = set()  # containers emptied somewhere (clear(), pop(), reassigned)
        self._assigned: dict[tuple, int] = {}  # (owner, name) -> assignments
        self._removing_functions: set[int] = set()  # id() of functions calling handle.remove()
        self._scheduled = False
        self._declared: dict[int, set[str]] = {}  # id(function) -> names declared global/nonlocal

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    # ----- registrations and stores ------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            qualified = self.facts.qualified_name(func) or ""
            method = qualified.rsplit(".", 1)[-1]
            if method in _MODULE_HOOKS:
                self._register(node, method)
            return
        method = func.attr.value
        if method in _MODULE_HOOKS or method in _TENSOR_HOOKS:
            self._register(node, method)
        elif method in _STORING_METHODS:
            positional = [arg.value for arg in node.args if arg.keyword is None]
            if positional and not (method == "insert" and len(positional) < 2):
                self._store(node, func.value, positional[_STORING_METHODS[method]])
        elif method in _CLEARING_METHODS:
            name = storage_name(func.value)
            if name:
                self._cleared.add(name)
        elif method == "remove" and not node.args:
            self._removing_functions.add(id(self.facts.function))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            target = target.target
            if isinstance(target, cst.Subscript):
                root = storage_name(target)
                function = self.facts.function
                if root is not None and root.startswith("self.") and _empty_display(node.value) \
                        and function.name not in ("__init__", "<module>"):
                    self._cleared.add(root)  # reset by a method, slot by slot: self.outputs[key] = []
                    continue
                self._growing_key_store(node, target, node.value)
                continue
            name = dotted_name(target)
            if name is None:
                continue
            grown = _grown_by(node.value, name, self.facts)
            if grown is not None:
                # feats = torch.cat([feats, output]); grads = [grad_output[0]] + grads: it grows
                for element in grown:
                    self._store(node, target, element)
                continue
            function = self.facts.function
            if name in self._declared.get(id(function), ()):
                self._cleared.add(name)  # global feats; feats = []: a reset of the shared list
            key = self._owner_key(name, function, binding=True)
            self._assigned[key] = self._assigned.get(key, 0) + 1
            if name.startswith("self.") and function.name not in ("__init__", "<module>"):
                self._cleared.add(name)  # reset by a method: self.outputs = []
            if isinstance(node.value, cst.Call) and any(
                arg.keyword is not None and arg.keyword.value == "maxlen" for arg in node.value.args
            ):
                self._cleared.add(name)  # deque(maxlen=N) is bounded

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign) and isinstance(node.value, (cst.List, cst.Tuple)):
            for element in node.value.elements:  # grads += [grad_output[0]]
                self._store(node, node.target, element.value)

    def visit_Global(self, node: cst.Global) -> None:
        self._declared.setdefault(id(self.facts.function), set()).update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._declared.setdefault(id(self.facts.function), set()).update(item.name.value for item in node.names)

    def visit_Del(self, node: cst.Del) -> None:
        name = storage_name(node.target)
        if name:
            self._cleared.add(name)

    def _owner_key(self, name: str, scope, binding: bool = False) -> tuple:
        """Where ``name`` is bound, seen from ``scope``: (class, attr) for self.attr, else the
        innermost scope binding its root (so two functions' locals named ``acts`` differ).
        ``binding``: ``name`` is being assigned in ``scope``, which therefore owns it."""
        if name.startswith("self."):
            info = self.facts.class_info
            return ("class", info.name if info else "", name)
        root = name.split(".", 1)[0]
        if binding and "." not in name:
            return ("scope", id(scope), name)
        while scope is not None and root not in scope.bindings:
            scope = scope.parent
        return ("scope", id(scope) if scope is not None else 0, name)

    def _register(self, node: cst.Call, method: str) -> None:
        positional = [arg.value for arg in node.args if arg.keyword is None]
        hook = positional[0] if positional else next(
            (arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "hook"), None)
        if hook is None:
            return
        registration = _Registration(method, set(), self.facts.function)
        self._resolve(hook, registration, depth=0)
        if registration.keys:
            self._registrations.append(registration)
            self._schedule()

    def _resolve(self, expr: cst.BaseExpression, registration: _Registration, depth: int) -> None:
        """The functions a registered hook expression may run."""
        facts = self.facts
        if depth > 3:
            return
        if isinstance(expr, cst.Lambda):
            registration.keys.add(("lambda", id(expr)))
        elif isinstance(expr, cst.Name):
            registration.keys.add(("def", expr.value))
            binding = facts.lookup(expr.value)
            if binding is not None and isinstance(binding.node, cst.BaseExpression) and binding.node is not expr:
                self._resolve(binding.node, registration, depth + 1)
        elif isinstance(expr, cst.Attribute):
            registration.keys.add(("def", expr.attr.value))  # self._hook, obj.save_output
        elif isinstance(expr, cst.Call):
            qualified = facts.qualified_name(expr.func) or ""
            if qualified.endswith("partial") and expr.args:
                registration.bound_keywords |= {arg.keyword.value for arg in expr.args[1:] if arg.keyword is not None}
                registration.bound_positional += sum(1 for arg in expr.args[1:] if arg.keyword is None)
                self._resolve(expr.args[0].value, registration, depth + 1)
                return
            last = qualified.rsplit(".", 1)[-1] if qualified else (
                expr.func.attr.value if isinstance(expr.func, cst.Attribute) else "")
            if last in facts.classes:
                registration.keys.add(("call", last))  # a callable object: SaveOutput()
            elif last:
                registration.keys.add(("nested", last))  # a closure factory: make_hook(name)

    def _store(self, node: cst.CSTNode, container: cst.BaseExpression, value: cst.BaseExpression,
               key_names: frozenset[str] | None = None) -> None:
        facts = self.facts
        function = facts.function
        if function.name == "<module>" or not isinstance(function.node, (cst.FunctionDef, cst.Lambda)):
            return
        params = _positional_params(function.node)
        if not params:
            return
        name = storage_name(container)
        if name is None:
            return
        root = name.split(".", 1)[0]
        local = function.bindings.get(root)
        if local is not None and not isinstance(local.node, cst.Param):
            return  # a container created in this call: dropped when the hook returns
        source = self._tensor_source(value, function, 0)
        if source is None:
            return
        param, detached = source
        if param not in params:
            return
        owner = self._owner_key(name, function.parent if root not in function.bindings else function)
        self._stores.append(_Store(node, function, _function_keys(function), params, param, detached, name, owner,
                                   key_names))
        self._schedule()

    def _growing_key_store(self, node: cst.Assign, target: cst.Subscript, value: cst.BaseExpression) -> None:
        key_names: set[str] = set()
        for element in target.slice:
            if isinstance(element.slice, cst.Index):
                index = element.slice.value
                key_names |= names_in(index)
                if isinstance(index, cst.Call) and isinstance(index.func, cst.Name) and index.func.value == "len":
                    key_names.add("len()")
        if key_names:
            self._store(node, target.value, value, frozenset(key_names))

    def _tensor_source(self, expr: cst.BaseExpression, function: FunctionScope, depth: int) -> tuple[str, bool] | None:
        """(parameter, detached) when ``expr`` is one of the hook's arguments, a part of it, or
        a view/copy of it; None for anything else (numbers, norms, CPU copies, unknown calls)."""
        if depth > 4:
            return None
        if isinstance(expr, cst.Name):
            binding = function.bindings.get(expr.value)
            if binding is None:
                return None
            if isinstance(binding.node, cst.Param):
                return expr.value, False
            if isinstance(binding.node, cst.BaseExpression):
                return self._tensor_source(binding.node, function, depth + 1)
            return None
        if isinstance(expr, cst.Attribute):
            if expr.attr.value == "data":
                source = self._tensor_source(expr.value, function, depth + 1)
                return (source[0], True) if source else None
            if expr.attr.value in ("grad", "shape", "dtype", "device", "requires_grad", "ndim", "grad_fn"):
                return None
            return self._tensor_source(expr.value, function, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self._tensor_source(expr.value, function, depth + 1)
        if isinstance(expr, cst.IfExp):  # output[0] if isinstance(output, tuple) else output
            return (self._tensor_source(expr.body, function, depth + 1)
                    or self._tensor_source(expr.orelse, function, depth + 1))
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            if method in ("detach", "detach_"):
                source = self._tensor_source(expr.func.value, function, depth + 1)
                return (source[0], True) if source else None
            if method == "to" and any("cpu" in source_of(arg.value) for arg in expr.args):
                return None
            if method in _SAME_TENSOR_METHODS:
                return self._tensor_source(expr.func.value, function, depth + 1)
            return None
        if isinstance(expr, (cst.Tuple, cst.List)):
            found = [self._tensor_source(el.value, function, depth + 1) for el in expr.elements]
            found = [f for f in found if f is not None]
            return min(found, key=lambda f: f[1]) if found else None
        if isinstance(expr, cst.Dict):
            found = [self._tensor_source(el.value, function, depth + 1) for el in expr.elements
                     if isinstance(el, cst.DictElement)]
            found = [f for f in found if f is not None]
            return min(found, key=lambda f: f[1]) if found else None
        return None

    # ----- decision at module end ------------------------------------------------------------------
    def _decide(self) -> None:
        for store in self._stores:
            if store.container in self._cleared or self._assigned.get(store.owner, 0) >= 2:
                continue  # emptied somewhere: bounded (e.g. a feature-matching loss clears it each step)
            if store.key_names is not None and not self._growing(store):
                continue  # acts[name] = output: a bounded overwrite
            for registration in self._registrations:
                if not (registration.keys & store.keys):
                    continue
                if id(registration.registrar) in self._removing_functions:
                    continue  # registered and removed in the same function: a scoped use
                if store.param not in _tensor_params(store, registration):
                    continue
                self._report(store, registration)
                break

    def _growing(self, store: _Store) -> bool:
        counters = {"len()"} | store.function.incremented
        info = store.function.class_info
        if info is not None:
            counters |= info.incremented
        return bool(store.key_names & counters)

    def _report(self, store: _Store, registration: _Registration) -> None:
        hook = _HOOK_KINDS.get(registration.method, f"{registration.method}() hook")
        param = store.param
        container = _short(store.container)
        if store.detached:
            self.report(
                store.node,
                f"{hook} keeps one detached '{param}' per call in '{container}', which is never emptied",
                help=f"store a number ({param}.norm().item()) or a CPU copy ({param}.detach().cpu()), or clear "
                     f"'{store.container}' every step",
                needs_grad=False, severity="warning",
            )
            return
        if registration.method in _BACKWARD_HOOKS:
            message = f"{hook} keeps every step's '{param}' in '{container}', which is never emptied"
            help = (f"store a number ({param}.norm().item()) or a CPU copy ({param}.detach().cpu()), or "
                    f"overwrite a fixed key")
        else:
            message = f"{hook} keeps every '{param}' and its graph in '{container}', which is never emptied"
            help = (f"store {param}.detach() (and .cpu() for a long record) or a number, or overwrite a fixed "
                    f"key: acts[name] = {param}.detach()")
        self.report(store.node, message, help=help, needs_grad=False)

    VALID = [
        # bounded overwrite of a detached activation per layer name
        """
import torch
activations = {}
def get_activation(name):
    def hook(module, inputs, output):
        activations[name] = output.detach()
    return hook

def attach(model):
    for name, layer in model.named_children():
        layer.register_forward_hook(get_activation(name))
""",
        # storing numbers: .item(), norms, statistics
        """
import torch
class GradMonitor:
    def __init__(self, model):
        self.norms = []
        self.means = {}
        for name, p in model.named_parameters():
            p.register_hook(lambda grad: self.norms.append(grad.norm().item()))
        model.fc.register_forward_hook(self._stats)

    def _stats(self, module, inputs, output):
        self.means.setdefault("fc", []).append(output.mean().item())
""",
        # a feature-matching loss: hooks keep outputs with their graph, the list is emptied every step
        """
import torch
import torch.nn.functional as F
class PerceptualLoss(torch.nn.Module):
    def __init__(self, vgg, layers):
        super().__init__()
        self.vgg = vgg
        self.features = []
        for idx in layers:
            vgg[idx].register_forward_hook(self._save)

    def _save(self, module, inputs, output):
        self.features.append(output)

    def forward(self, x, y):
        self.features.clear()
        self.vgg(x)
        fx = list(self.features)
        self.features.clear()
        self.vgg(y)
        return sum(F.mse_loss(a, b) for a, b in zip(fx, self.features))
""",
        # registered and removed in the same function (a scoped probe), copies moved to the CPU
        """
import torch
def collect_features(model, loader):
    feats = []
    handle = model.avgpool.register_forward_hook(lambda m, i, o: feats.append(o.detach().cpu()))
    with torch.no_grad():
        for x, _ in loader:
            model(x)
    handle.remove()
    return torch.cat(feats)
""",
        # a callable object whose list is reset on every call of the wrapper (pytorch-grad-cam)
        """
import torch
class ActivationsAndGradients:
    def __init__(self, model, target_layers):
        self.model = model
        self.gradients = []
        self.activations = []
        for layer in target_layers:
            layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().detach())

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)
""",
        # a container created inside the hook, and a non-tensor argument (the module) stored
        """
import torch
seen_modules = []
def hook(module, inputs, output):
    shapes = []
    shapes.append(output)
    seen_modules.append(module)
    print([s.shape for s in shapes])

def attach(model):
    for m in model.modules():
        m.register_forward_hook(hook)
""",
        # a global list reset elsewhere (global + reassignment), and one emptied with del
        """
import torch
features = []
grads = []
def save(module, inputs, output):
    features.append(output)

def save_grad(grad):
    grads.append(grad)

def reset_records():
    global features
    features = []
    del grads[:]

def attach(model):
    model.encoder.register_forward_hook(save)
    model.encoder.weight.register_hook(save_grad)
""",
        # a deque with maxlen is bounded
        """
import torch
from collections import deque
recent = deque(maxlen=8)
def keep_recent(module, inputs, output):
    recent.append(output.detach())

def attach(model):
    model.head.register_forward_hook(keep_recent)
""",
    ]

    VALID += [
        # concatenated onto a list that a method resets every call, and CPU copies prepended
        """
import torch
class Extractor:
    def __init__(self, model, layer):
        self.model = model
        self.feats = None
        self.grads = []
        layer.register_forward_hook(self.save)
        layer.register_full_backward_hook(self.save_grad)

    def save(self, module, inputs, output):
        self.feats = output if self.feats is None else torch.cat([self.feats, output])

    def save_grad(self, module, grad_input, grad_output):
        self.grads = [grad_output[0].cpu()] + self.grads

    def __call__(self, x):
        self.feats = None
        return self.model(x)
""",
    ]

    INVALID = [
        # concatenated onto an attribute, every call (the graph of each forward kept)
        Invalid("""
import torch
class Features:
    def __init__(self, layer):
        self.feats = None
        layer.register_forward_hook(self.save)

    def save(self, module, inputs, output):
        self.feats = output if self.feats is None else torch.cat([self.feats, output])
""", line=9),
        # prepended or added to a list: grads = [grad_output[0]] + grads, grads += [...]
        Invalid("""
import torch
class Gradients:
    def __init__(self, layer):
        self.grads = []
        self.norms = []
        layer.register_full_backward_hook(self.save)

    def save(self, module, grad_input, grad_output):
        self.grads = [grad_output[0]] + self.grads
        self.norms += [grad_output[0].norm().item()]
""", line=10),
        # the classic: a forward hook appending outputs to a global list
        Invalid("""
import torch
from torch import nn
features = []
def save_features(module, inputs, output):
    features.append(output)

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
model[1].register_forward_hook(save_features)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1000):
    loss = model(torch.randn(32, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""", line=6),
        # a closure factory storing per-layer lists of raw outputs
        Invalid("""
import torch
from collections import defaultdict
def track_activations(model):
    acts = defaultdict(list)
    def make_hook(name):
        def hook(module, inputs, output):
            out = output[0] if isinstance(output, tuple) else output
            acts[name].append(out)
        return hook
    for name, module in model.named_modules():
        module.register_forward_hook(make_hook(name))
    return acts
""", line=9),
        # a lambda on a tensor hook keeping every gradient
        Invalid("""
import torch
def watch(model):
    grads = []
    for p in model.parameters():
        p.register_hook(lambda grad: grads.append(grad))
    return grads
""", line=6),
        # a callable object and functools.partial
        Invalid("""
import functools
import torch
class SaveOutput:
    def __init__(self):
        self.outputs = []

    def __call__(self, module, module_in, module_out):
        self.outputs.append(module_out)

def record(module, inputs, output, *, store):
    store.extend([output])

def attach(model):
    saver = SaveOutput()
    store = []
    for layer in model.modules():
        layer.register_forward_hook(saver)
        layer.register_full_backward_hook(functools.partial(record, store=store))
    return saver, store
""", line=9),
        Invalid("""
import functools
import torch
def record(module, grad_input, grad_output, *, store):
    store.extend([grad_output])

def attach(model, store):
    for layer in model.modules():
        layer.register_full_backward_hook(functools.partial(record, store=store))
""", line=5),
        # detached, but never emptied: a warning (one device tensor per forward pass)
        Invalid("""
import torch
class Probe(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.history = []
        self.net.encoder.register_forward_hook(self._record)

    def _record(self, module, inputs, output):
        self.history.append(output.detach())

    def forward(self, x):
        return self.net(x)
""", line=11),
        # a growing key in a method hook
        Invalid("""
import torch
class Recorder:
    def __init__(self, model):
        self.store = {}
        self.calls = 0
        model.register_forward_hook(self.hook)

    def hook(self, module, inputs, output):
        self.store[self.calls] = output
        self.calls += 1
""", line=10),
        # a list kept in a dict slot, one per layer
        Invalid("""
import torch
activations = {}

def attach(model):
    for name, layer in model.named_modules():
        def save(module, inputs, output, name=name):
            activations.setdefault(name, []).append(output)
        layer.register_forward_hook(save)
""", line=8),
    ]


def _grown_by(value: cst.BaseExpression, name: str, facts) -> list[cst.BaseExpression] | None:
    """What ``name = value`` adds to ``name`` when it is rebound to itself plus more:
    ``torch.cat([name, x])``, ``[x] + name``, ``name + [x]``; None otherwise."""
    added = concatenated_onto(value, name, facts)
    if added is not None:
        return added
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        sides = (value.left, value.right)
        if any(dotted_name(side) == name for side in sides):
            return [element.value for side in sides if isinstance(side, (cst.List, cst.Tuple))
                    for element in side.elements]
    if isinstance(value, cst.IfExp):  # feats = output if feats is None else torch.cat([feats, output])
        found = [part for branch in (value.body, value.orelse) for part in (_grown_by(branch, name, facts) or ())]
        return found or None
    return None


def _short(name: str, limit: int = 24) -> str:
    return name if len(name) <= limit else name[: limit - 3] + "..."


def _positional_params(node: cst.FunctionDef | cst.Lambda) -> tuple[str, ...]:
    params = [p.name.value for p in list(node.params.posonly_params) + list(node.params.params)]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    return tuple(params)


def _function_keys(function: FunctionScope) -> frozenset[tuple]:
    keys: set[tuple] = set()
    if isinstance(function.node, cst.Lambda):
        keys.add(("lambda", id(function.node)))
    else:
        keys.add(("def", function.name))
        if function.name == "__call__" and function.class_info is not None:
            keys.add(("call", function.class_info.name))
    scope = function.parent
    while scope is not None:
        if isinstance(scope, FunctionScope) and scope.name != "<module>":
            keys.add(("nested", scope.name))
        scope = scope.parent
    return frozenset(keys)


def _tensor_params(store: _Store, registration: _Registration) -> tuple[str, ...]:
    params = [p for p in store.params if p not in registration.bound_keywords][registration.bound_positional:]
    if registration.method in _TENSOR_HOOKS:
        return tuple(params[:1])  # hook(grad)
    return tuple(params[1:])  # hook(module, *tensors)
