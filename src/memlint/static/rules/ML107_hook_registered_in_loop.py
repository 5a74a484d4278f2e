"""ML107 hook-registered-in-loop: a hook is registered on the same module or tensor on every
iteration of a loop (or every call of ``forward``/``training_step``) and never removed.

``register_forward_hook`` and friends add the hook to the module's hook dictionary and return
a handle; the hook stays until ``handle.remove()``. Registering it inside the batch loop adds
one more hook to the same module every step: each forward runs all of them (step time grows),
and each hook keeps what it captures (a closure, a bound object, the tensors it stores), so
memory grows too. Grad-CAM and feature-extraction scripts are the usual place: a
``GradCAM(model, layer)`` object built per image registers its hooks in ``__init__``.

Flagged (error):

- a ``register_*hook`` call in a loop whose receiver is the same object on every iteration
  (not computed from the loop's own variables; a submodule picked by an inner loop over
  ``model.modules()`` counts as the same), with no ``remove()`` in that loop; for a loop that
  does not walk data or steps, also the hook itself must be the same every iteration (a loop
  over hook functions is a setup loop);
- building an object of a class of this module whose ``__init__`` registers hooks (directly
  or through the objects it builds) in such a loop, when the class does not remove them in
  ``__del__`` and the loop does not remove them (a method of the object that calls
  ``remove()``, or ``with Cls(...) as cam:`` when ``__exit__`` removes them);
- calling a function of this module that registers hooks on what it is given and never
  removes them, in such a loop;
- a registration on ``self``'s submodules (or a global) in ``forward``/``training_step``,
  which run every step.

Not flagged: a handle removed in the same iteration (directly, in ``finally``, through a
helper or a method that calls ``remove()``), hooks registered once before the loop, a
registration under a condition that changes per iteration (``if step == 0:``,
``if self.handle is None:``), a ``with`` helper that removes on exit (``with
layer.register_forward_hook(fn):``, a ``@contextmanager`` that removes in ``finally``),
hooks on a tensor or module created in the same iteration (they die with it), registration
loops over layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import FunctionScope, Loop, dotted_name, names_in
from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML101_graph_accumulation import source_of

_MODULE_HOOKS = frozenset({
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook", "register_module_forward_hook",
    "register_module_forward_pre_hook", "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook", "register_module_backward_hook",
})
_TENSOR_HOOKS = frozenset({"register_hook", "register_post_accumulate_grad_hook"})
# Methods a class runs once per step.
_PER_STEP_METHODS = frozenset({"forward", "training_step", "train_step", "validation_step", "test_step",
                               "predict_step", "compute_loss", "step"})
# Calls whose result is the object they were given a part of (an alias, not a new object).
_LOOKUPS = frozenset({"getattr", "get_submodule", "get_parameter", "get"})


@dataclass
class _Site:
    node: cst.Call
    kind: str  # "register" | "construct" | "call"
    function: FunctionScope
    loops: tuple[Loop, ...]  # enclosing loops of the function, outermost first
    ifs: tuple[tuple[cst.BaseExpression, Loop | None], ...]  # enclosing if tests in the function
    receiver: cst.BaseExpression | None  # the hooked object (register)
    hook: cst.BaseExpression | None  # the hook callable (register)
    args: tuple[cst.BaseExpression, ...]  # arguments (construct/call)
    callee: str  # method name (register), class or function name
    with_item: bool = False


class HookRegisteredInLoop(Rule):
    code = "ML107"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._ifs: list[tuple[cst.If, FunctionScope, Loop | None]] = []
        self._with_items: set[int] = set()
        self._sites: list[_Site] = []
        # id(function) -> registrations in it: (names in the hooked object, under a state guard)
        self._registrations: dict[int, list[tuple[frozenset[str] | None, bool]]] = {}
        self._hooks_hold_self: set[int] = set()  # id() of methods registering a hook bound to self
        self._loops_removing: dict[int, bool] = {}  # id(loop) -> does an iteration remove hooks?
        self._scheduled = False

    # ----- structure ---------------------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self._ifs.append((node, self.facts.function, self.facts.loop))

    def leave_If(self, node: cst.If) -> None:
        if self._ifs and self._ifs[-1][0] is node:
            self._ifs.pop()

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if isinstance(item.item, cst.Call):
                self._with_items.add(id(item.item))

    # ----- calls -------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        function = facts.function
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        loops = tuple(facts.loops_in_function()) if facts.loop is not None else ()
        if method is None:
            qualified = facts.qualified_name(func) or ""
            last = qualified.rsplit(".", 1)[-1]
            if last in _MODULE_HOOKS and qualified.startswith("torch."):  # global module hooks
                self._registration(node, last, None, function, loops)
            elif loops and isinstance(func, cst.Name):
                self._add_site(node, "call" if func.value not in facts.classes else "construct", function, loops,
                               None, None, func.value)
            return
        if method in _MODULE_HOOKS or method in _TENSOR_HOOKS:
            self._registration(node, method, func.value, function, loops)
        elif loops and dotted_name(func) is not None:
            self._add_site(node, "call", function, loops, None, None, dotted_name(func))

    def _registration(self, node: cst.Call, method: str, receiver: cst.BaseExpression | None,
                      function: FunctionScope, loops: tuple[Loop, ...]) -> None:
        names = frozenset(names_in(receiver)) if receiver is not None else None
        guarded = any(if_function is function and _is_state_test(test.test, function, self.facts.module_scope)
                      for test, if_function, _ in self._ifs)
        self._registrations.setdefault(id(function), []).append((names, guarded))
        positional = [arg.value for arg in node.args if arg.keyword is None]
        hook = positional[0] if positional else None
        if hook is not None and "self" in names_in(hook):
            self._hooks_hold_self.add(id(function))
        if loops or (function.class_info is not None and function.name in _PER_STEP_METHODS):
            self._add_site(node, "register", function, loops, receiver, hook, method)

    def _add_site(self, node, kind, function, loops, receiver, hook, callee) -> None:
        ifs = tuple((if_node.test, loop) for if_node, if_function, loop in self._ifs if if_function is function)
        args = tuple(arg.value for arg in node.args)
        self._sites.append(_Site(node, kind, function, loops, ifs, receiver, hook, args, callee))
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    # ----- decisions, once the module is walked --------------------------------------------------
    def _decide(self) -> None:
        for site in self._sites:
            site.with_item = id(site.node) in self._with_items
            if site.kind == "register":
                self._decide_registration(site)
            elif site.kind == "construct":
                self._decide_construction(site)
            else:
                self._decide_call(site)

    def _decide_registration(self, site: _Site) -> None:
        if site.with_item:
            return  # with module.register_forward_hook(fn): removed on exit
        what = source_of(site.receiver, 40) if site.receiver is not None else "every module"
        if not site.loops:
            # forward()/training_step(): a hook on self's submodules (or a global) per call
            root = _root(site.receiver) if site.receiver is not None else None
            function = site.function
            if site.ifs or self._removes(function):
                return
            if root is not None and root != "self" and (root in function.bindings or root in function.inputs):
                return  # an input or a local: a tensor or module of this call
            self.report(
                site.node,
                f"'{what}' gets one more hook ({site.callee}) on every call of {function.name}(), never removed",
                help=f"register it once in __init__, or remove the handle before {function.name}() returns",
            )
            return
        loop = self._repeating_loop(site, site.receiver, [site.hook] if site.hook is not None else [])
        if loop is None:
            return
        self.report(
            site.node,
            f"'{what}' gets one more hook ({site.callee}) every iteration, never removed",
            help="register it once before the loop, or keep the handle and call handle.remove() in the same "
                 "iteration (in a finally)",
        )

    def _decide_construction(self, site: _Site) -> None:
        cls = self.facts.classes.get(site.callee)
        init = self.facts.find_method(cls, "__init__") if cls is not None else None
        if init is None or not self._registers(init, 3):
            return
        deleter = self.facts.find_method(cls, "__del__")
        if deleter is not None and self._removes(deleter) and not self._hooks_hold(cls):
            return  # hooks removed when the object is dropped at the next iteration
        exit_method = self.facts.find_method(cls, "__exit__")
        if site.with_item and exit_method is not None and self._removes(exit_method):
            return
        if self._repeating_loop(site, None, list(site.args), needs_all=True) is None:
            return
        self.report(
            site.node,
            f"{site.callee}(...) registers hooks in __init__ every iteration and never removes them",
            help="build it once before the loop, or remove its hooks in the same iteration (a with block or its "
                 "release method)",
        )

    def _hooks_hold(self, cls) -> bool:
        """Does the class register hooks bound to its own instances (``self.save``)? The module
        then keeps every instance alive, so ``__del__`` never runs (pytorch-grad-cam#88)."""
        return any(id(method) in self._hooks_hold_self for method in cls.methods.values())

    def _decide_call(self, site: _Site) -> None:
        targets = self.facts.callee_scopes(site.callee, site.function)
        if len(targets) != 1:
            return
        target = targets[0]
        if target.class_info is not None and target.name == "__init__":
            return  # super().__init__ / a constructor: handled as a construction
        if not self._registers(target, 2) or self._removes(target):
            return
        if self._repeating_loop(site, None, list(site.args), needs_all=True) is None:
            return
        self.report(
            site.node,
            f"{site.callee.rsplit('.', 1)[-1]}() registers hooks every iteration and never removes them",
            help="register them once before the loop, or remove the handles after each call",
        )

    def _repeating_loop(self, site: _Site, receiver: cst.BaseExpression | None,
                        others: list[cst.BaseExpression], needs_all: bool = False) -> Loop | None:
        """The innermost enclosing loop in which the hooked object is the same every iteration,
        whose iterations all register (no condition that changes) and none removes; None if
        there is none. ``others`` (the hook, the arguments) must be the same every iteration
        too unless the loop walks data or steps; with ``needs_all`` at least one of them must
        be (the hooked object is among them)."""
        for index in range(len(site.loops) - 1, -1, -1):
            loop = site.loops[index]
            inner = site.loops[index + 1:]
            if receiver is not None and self._varies(receiver, loop, inner):
                continue
            fixed = [not self._varies(other, loop, inner) for other in others if names_in(other)]
            per_step = loop.iterates_data or loop.walks_steps or loop.is_training_loop
            if needs_all and not any(fixed):
                continue
            if not per_step and not all(fixed):
                continue
            if any(self._varies(test, loop, inner) for test, if_loop in site.ifs
                   if if_loop is loop or if_loop in inner):
                return None  # registers on some iterations only
            if self._loop_removes(loop, site.function):
                return None
            return loop
        return None

    def _varies(self, node: cst.BaseExpression, loop: Loop, inner: tuple[Loop, ...], depth: int = 0) -> bool:
        """Does ``node`` change from one iteration of ``loop`` to the next? Names bound in the
        iteration do, unless they are the target of an inner loop over something that does not
        (``for m in model.modules()``) or an alias of something that does not."""
        bound = loop.bound_this_iteration
        for name in names_in(node):
            parts = name.split(".")
            prefixes = {".".join(parts[: i + 1]) for i in range(len(parts))}
            hit = prefixes & bound
            if not hit:
                continue
            root = parts[0]
            if root in loop.target_names:
                return True
            source = next((l for l in inner if root in l.target_names and isinstance(l.node, cst.For)), None)
            if source is not None and depth < 4:
                if self._varies(source.node.iter, loop, inner, depth + 1):
                    return True
                continue
            binding = loop.scope.bindings.get(root) if root in hit else None
            value = binding.node if binding is not None else None
            if depth < 4 and isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):
                if self._varies(value, loop, inner, depth + 1):
                    return True
                continue
            if (depth < 4 and isinstance(value, cst.Call) and _last(value.func) in _LOOKUPS
                    and not self._varies(value, loop, inner, depth + 1)):
                continue
            return True
        return False

    def _loop_removes(self, loop: Loop, function: FunctionScope) -> bool:
        """Does an iteration of ``loop`` remove hooks: ``handle.remove()``, or a call of a
        function or method of this module that does? (A walk of the loop's body, done only for
        loops that register.)"""
        known = self._loops_removing.get(id(loop))
        if known is not None:
            return known
        removes = False
        stack: list[cst.CSTNode] = [loop.node.body]
        while stack and not removes:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value == "remove" and not node.args:
                    removes = True
                    break
                callee = dotted_name(func)
                if callee is not None:
                    callee = self.facts.qualified_name(func) or callee
                    removes = any(self._removes(scope) for scope in self.facts.callee_scopes(callee, function))
            stack.extend(node.children)
        self._loops_removing[id(loop)] = removes
        return removes

    def _removes(self, function: FunctionScope) -> bool:
        return any(callee.rsplit(".", 1)[-1] == "remove" for callee in self.facts.calls_made(function))

    def _registers(self, function: FunctionScope, depth: int, seen: set[int] | None = None) -> bool:
        """Does ``function`` register hooks on something it was given (a parameter, an
        attribute of ``self`` set from one, a global), not under a state guard, directly or
        through this module's code? Hooks on an object's own submodules die with it."""
        seen = seen if seen is not None else set()
        if id(function) in seen:
            return False
        seen.add(id(function))
        for names, guarded in self._registrations.get(id(function), ()):
            if not guarded and (names is None or any(self._given(name, function) for name in names)):
                return True
        if depth:
            for callee in function.callees:
                for scope in self.facts.callee_scopes(callee, function):
                    if self._registers(scope, depth - 1, seen):
                        return True
        return False

    def _given(self, name: str, function: FunctionScope) -> bool:
        """Does ``name`` (in ``function``) refer to something from outside the call?"""
        root = name.split(".", 1)[0]
        if root == "self":
            info = function.class_info
            if "." not in name or info is None:
                return False
            # self.model = model / self.layer = model.layer4: given; self.body = nn.Linear(...): its own
            binding = info.attributes.get("self." + name.split(".")[1])
            return binding is not None and isinstance(binding.node, (cst.Name, cst.Attribute, cst.Subscript))
        if root in function.inputs or root not in function.bindings:
            return True
        return function.derives_from([root], function.inputs)

    VALID = [
        # handle removed in the same iteration
        """
import torch
def explain(model, loader):
    maps = []
    for images, _ in loader:
        feats = {}
        handle = model.layer4.register_forward_hook(lambda m, i, o: feats.update(out=o.detach()))
        model(images)
        handle.remove()
        maps.append(feats["out"].mean(1).cpu())
    return maps
""",
        # removed in finally; several handles removed through a helper
        """
import torch
def remove_all(handles):
    for h in handles:
        h.remove()

def extract(model, loader, layers):
    out = []
    for batch in loader:
        handles = [model.get_submodule(name).register_forward_hook(save) for name in layers]
        try:
            model(batch)
        finally:
            remove_all(handles)
    return out
""",
        # registered once before the loop
        """
import torch
def train(model, loader, optimizer):
    activations = {}
    model.encoder.register_forward_hook(lambda m, i, o: activations.__setitem__("enc", o.detach()))
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
""",
        # a with helper that removes the hook on exit; RemovableHandle as a context manager
        """
import contextlib
import torch

@contextlib.contextmanager
def capture(layer, store):
    handle = layer.register_forward_hook(lambda m, i, o: store.append(o.detach().cpu()))
    try:
        yield store
    finally:
        handle.remove()

def features(model, loader):
    feats = []
    for x in loader:
        with capture(model.avgpool, feats):
            model(x)
        with model.fc.register_forward_pre_hook(lambda m, args: None):
            model(x)
    return feats
""",
        # hooks on tensors made in the iteration die with them
        """
import torch
def train(model, loader, optimizer):
    for x, y in loader:
        out = model(x)
        out.register_hook(lambda g: g.clamp(-1, 1))
        loss = (out - y).pow(2).mean()
        loss.backward()
        optimizer.step()
""",
        # a registration loop over layers; a loop over hook functions
        """
import torch
from torch import nn
def attach(model, hook, extra_hooks):
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            module.register_forward_hook(hook)
    for fn in extra_hooks:
        model.register_forward_hook(fn)
""",
        # registered once, under a condition that changes
        """
import torch
def train(model, loader, optimizer, hook):
    handle = None
    for step, batch in enumerate(loader):
        if handle is None:
            handle = model.decoder.register_forward_hook(hook)
        if step == 0:
            model.encoder.register_forward_hook(hook)
        model(batch).loss.backward()
        optimizer.step()
""",
        # a new model per fold: its hooks die with it
        """
import torch
def cross_validate(folds, build, train, hook):
    for fold in folds:
        model = build()
        model.head.register_forward_hook(hook)
        train(model, fold)
""",
        # a CAM class that removes its hooks in __del__ (pytorch-grad-cam's BaseCAM)
        """
import torch
class ActivationsAndGradients:
    def __init__(self, model, target_layers):
        self.handles = []
        for layer in target_layers:
            self.handles.append(layer.register_forward_hook(self.save_activation))

    def save_activation(self, module, inputs, output):
        self.activations = output.detach()

    def release(self):
        for handle in self.handles:
            handle.remove()

class GradCAM:
    def __init__(self, model, target_layers):
        self.model = model
        self.activations_and_grads = ActivationsAndGradients(model, target_layers)

    def __del__(self):
        self.activations_and_grads.release()

def run(model, images, layer):
    for image in images:
        cam = GradCAM(model, [layer])
        cam(image)
""",
        # a constructor whose hooks are removed by a method called in the same iteration
        """
import torch
class FeatureExtractor:
    def __init__(self, model, layer):
        self.feats = None
        self.handle = layer.register_forward_hook(self.hook)

    def hook(self, module, inputs, output):
        self.feats = output.detach()

    def close(self):
        self.handle.remove()

def extract(model, loader):
    out = []
    for batch in loader:
        extractor = FeatureExtractor(model, model.layer3)
        model(batch)
        out.append(extractor.feats.cpu())
        extractor.close()
    return out
""",
        # a model per fold whose __init__ hooks its own submodules: they die with it
        """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Linear(width, width)
        self.feats = None
        self.body.register_forward_hook(self._keep)

    def _keep(self, module, inputs, output):
        self.feats = output.detach()

def cross_validate(folds, width, train):
    for fold in folds:
        model = Net(width)
        train(model, fold)
""",
        # idempotent registration: the helper checks its own state first
        """
import torch
class Probe:
    def __init__(self):
        self.handle = None

    def attach(self, layer):
        if self.handle is None:
            self.handle = layer.register_forward_hook(self.record)

    def record(self, module, inputs, output):
        pass

def train(model, loader, optimizer, probe):
    for batch in loader:
        probe.attach(model.layer1)
        model(batch).loss.backward()
        optimizer.step()
""",
    ]

    INVALID = [
        # the grad-cam loop: a forward and a backward hook per image, never removed
        Invalid("""
import torch
def grad_cam(model, loader, target_layer):
    cams = []
    for images, labels in loader:
        acts, grads = {}, {}
        target_layer.register_forward_hook(lambda m, i, o: acts.__setitem__("a", o))
        target_layer.register_full_backward_hook(lambda m, gi, go: grads.__setitem__("g", go[0]))
        out = model(images)
        out.gather(1, labels[:, None]).sum().backward()
        cams.append((acts["a"] * grads["g"].mean((2, 3), keepdim=True)).sum(1).detach().cpu())
    return cams
""", line=7),
        # handles kept, but removed only after the loop
        Invalid("""
import torch
def features(model, dataloader, save):
    handles = []
    for batch in dataloader:
        handles.append(model.backbone.layer4.register_forward_hook(save))
        model(batch)
    for h in handles:
        h.remove()
""", line=6),
        # a submodule picked by an inner loop over the model's modules, every step
        Invalid("""
import torch
from torch import nn
def train(model, loader, optimizer, record):
    for x, y in loader:
        for name, module in model.named_modules():
            if isinstance(module, nn.ReLU):
                module.register_forward_hook(record)
        model(x).sum().backward()
        optimizer.step()
""", line=8),
        # a constructor that registers hooks, built per image
        Invalid("""
import torch
class GradCAM:
    def __init__(self, model, layer):
        self.model = model
        layer.register_forward_hook(self.save_activation)
        layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, inputs, output):
        self.activations = output

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = grad_output[0]

def explain_all(model, images):
    heatmaps = []
    for image in images:
        cam = GradCAM(model, model.layer4)
        score = model(image[None]).max()
        score.backward()
        heatmaps.append((cam.activations * cam.gradients).sum(1).detach().cpu())
    return heatmaps
""", line=18),
        # a helper that registers and never removes, called per batch
        Invalid("""
import torch
def add_probe(model, store):
    model.head.register_forward_hook(lambda m, i, o: store.append(o.detach().cpu()))

def evaluate(model, val_loader):
    store = []
    with torch.no_grad():
        for batch in val_loader:
            add_probe(model, store)
            model(batch)
    return store
""", line=10),
        # __del__ removes the hooks, but the hooks are bound methods: the module keeps the object,
        # so __del__ never runs (pytorch-grad-cam#88)
        Invalid("""
import torch
class CAM:
    def __init__(self, model, layer):
        self.model = model
        self.handle = layer.register_forward_hook(self.save)

    def save(self, module, inputs, output):
        self.output = output.detach()

    def __del__(self):
        self.handle.remove()

def heatmaps(model, images):
    out = []
    for image in images:
        cam = CAM(model, model.layer4)
        model(image[None])
        out.append(cam.output.mean(1).cpu())
    return out
""", line=17),
        # a parameter hook inside the optimisation loop
        Invalid("""
import torch
def train(model, loader, optimizer):
    for step in range(10_000):
        x, y = next(loader)
        for p in model.parameters():
            p.register_hook(lambda g: g.clamp_(-1.0, 1.0))
        model(x, y).backward()
        optimizer.step()
""", line=7),
        # forward registers a hook on a submodule every call
        Invalid("""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 8)
        self.feats = None

    def _keep(self, module, inputs, output):
        self.feats = output.detach()

    def forward(self, x):
        self.body.register_forward_hook(self._keep)
        return self.body(x)
""", line=14),
    ]


def _root(node: cst.BaseExpression) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript)) or (
            isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        node = node.func.value if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


def _last(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


def _is_state_test(test: cst.BaseExpression, function: FunctionScope, module_scope: FunctionScope) -> bool:
    """Does an ``if`` test check state kept across calls (``self.handle is None``, a global
    flag), as an idempotent registration does?"""
    names = names_in(test)
    for name in names:
        root = name.split(".", 1)[0]
        if (root == "self" and ("." in name or names & {"getattr", "hasattr"})) or (
                root not in function.bindings and root in module_scope.bindings and function is not module_scope):
            return True
    return False
