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
  ``remove()``, or ``with Cls(...) as cam:`` when ``__exit__`` removes them); in any loop
  (one over settings too) when the object is only bound to a local name the next iteration
  rebinds (its hooks outlive it on what it hooked);
- calling a function of this module that registers hooks on what it is given and never
  removes them, in such a loop: reported at the registration when the function makes it
  itself (the handle to keep and remove), at the call when it is deeper in what it calls;
- a method hooking a module its object was given (``self.target_layer``) without removing
  the handle before it returns, called in such a loop on the same object: reported at the
  registration;
- a registration on ``self``'s submodules (or a global) in ``forward``/``training_step``,
  which run every step, or a call there of a method of this module that registers such hooks;
- a registration in a function that is itself registered as a hook (it runs on every forward
  or backward pass), on an object that outlives the call, directly or through a helper of this
  module, whose handle is dropped or kept in a place the hook does not empty (handle flow:
  where each registration's result goes, and which places a ``.remove()`` takes handles from).

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
from typing import Callable

import libcst as cst

from memlint.static.facts import FunctionScope, Loop, collection_name, dotted_name, names_in, storage_name
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
# How often a function registered as a hook runs, by the registration that installs it.
_HOOK_ROLES = {
    "register_forward_hook": "a forward hook", "register_forward_pre_hook": "a forward pre-hook",
    "register_full_backward_hook": "a backward hook", "register_backward_hook": "a backward hook",
    "register_full_backward_pre_hook": "a backward pre-hook", "register_hook": "a tensor hook",
    "register_module_forward_hook": "a global forward hook", "register_module_forward_pre_hook":
    "a global forward pre-hook", "register_module_full_backward_hook": "a global backward hook",
}
# Methods putting their argument into the receiver (a list of handles).
_STORING = frozenset({"append", "extend", "appendleft", "insert", "add"})
# Where a handle goes when it is returned to the caller.
_RETURNED = "<return>"


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
    bound_to: frozenset[str] = frozenset()  # the names the call's result is assigned to


class HookRegisteredInLoop(Rule):
    code = "ML107"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._ifs: list[tuple[cst.If, FunctionScope, Loop | None]] = []
        self._with_items: set[int] = set()
        self._sites: list[_Site] = []
        # id(function) -> registrations in it: (names in the hooked object, under a state guard, the call)
        self._registrations: dict[int, list[tuple[frozenset[str] | None, bool, cst.Call]]] = {}
        self._removing_methods: dict[str, bool] = {}  # see _only_removing_method
        # id() of a registration or call -> the place its result (a handle, handles) is kept in
        # (``handles``, ``self.handle``): None when it is dropped, _RETURNED when returned.
        # A call missing here hands its result on some other way (taken as managed).
        self._destinations: dict[int, str | None] = {}
        self._removed: dict[int, set[str]] = {}  # id(function) -> places whose handles it removes
        # calls handing places to a callee, which may remove them: (function, callee, places)
        self._handed: list[tuple[FunctionScope, str, frozenset[str]]] = []
        self._hooks: list[tuple[FunctionScope, cst.BaseExpression, str]] = []  # (registrar, hook, method)
        self._state_tested: set[int] = set()  # id() of functions with an ``if`` on state kept across calls
        self._reported: set[int] = set()  # id() of registrations reported
        self._hooks_hold_self: set[int] = set()  # id() of methods registering a hook bound to self
        self._loops_removing: dict[int, bool] = {}  # id(loop) -> does an iteration remove hooks?
        self._scheduled = False

    # ----- structure ---------------------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        function = self.facts.function
        self._ifs.append((node, function, self.facts.loop))
        if _is_state_test(node.test, function, self.facts.module_scope):
            self._state_tested.add(id(function))

    def leave_If(self, node: cst.If) -> None:
        if self._ifs and self._ifs[-1][0] is node:
            self._ifs.pop()

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if isinstance(item.item, cst.Call):
                self._with_items.add(id(item.item))

    # ----- where handles go --------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        place = storage_name(node.targets[0].target) if len(node.targets) == 1 else None
        if place is not None:
            for call in _calls_in(node.value):
                self._destinations[id(call)] = place

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self._destinations[id(node.value)] = None  # the result is dropped

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            for call in _calls_in(node.value):
                self._destinations[id(call)] = _RETURNED

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
            elif isinstance(func, cst.Name):
                self._note_handed(node, function, func.value)
                if loops:
                    self._add_site(node, "call" if func.value not in facts.classes else "construct", function,
                                   loops, None, None, func.value, self._checker.assign_targets)
            return
        if method in _MODULE_HOOKS or method in _TENSOR_HOOKS:
            if not self._own_method(func.value, method):
                self._registration(node, method, func.value, function, loops)
            return
        if method == "remove" and not node.args:
            self._removed.setdefault(id(function), set()).update(self._handle_places(func.value))
            return
        if method in _STORING:
            place = storage_name(func.value)
            if place is not None:
                for arg in node.args:
                    for call in _calls_in(arg.value):
                        self._destinations[id(call)] = place
        callee = dotted_name(func)
        if callee is not None and function is not facts.module_scope:
            self._note_handed(node, function, callee)
            # every call of a function: it may run per step (forward) or per forward pass (a hook)
            self._add_site(node, "call", function, loops, None, None, callee)
        elif loops and callee is not None:
            self._add_site(node, "call", function, loops, None, None, callee)

    def _own_method(self, receiver: cst.BaseExpression, method: str) -> bool:
        """``self.register_hook(hook, name)`` in a class that is no module and defines that method
        itself, here or in a base of the project (a trainer's own hook list): not PyTorch's."""
        facts = self.facts
        info = facts.class_info
        if not (isinstance(receiver, cst.Name) and receiver.value == "self") or info is None or info.is_module:
            return False
        if facts.methods_of(info.name, method):
            return True
        owner = facts.project_instance_class(receiver)
        project = facts.project
        return owner is not None and project is not None and project.method_owner(owner, method) is not None

    def _note_handed(self, node: cst.Call, function: FunctionScope, callee: str) -> None:
        places = frozenset(place for arg in node.args if (place := storage_name(arg.value)) is not None)
        if places:
            self._handed.append((function, callee, places))

    def _handle_places(self, receiver: cst.BaseExpression) -> set[str]:
        """The places a ``.remove()`` call takes its handle from: ``handle``, ``handles`` for
        ``handles.pop().remove()`` and ``for h in handles: h.remove()``, what a name was bound to."""
        name = collection_name(receiver)
        if name is None:
            return set()
        places = {name}
        for loop in self.facts.loops_in_function():
            if name in loop.target_names and isinstance(loop.node, cst.For):
                inner = collection_name(loop.node.iter)
                if inner is not None:
                    places.add(inner)
        binding = self.facts.lookup(name) if "." not in name else None
        if binding is not None and isinstance(binding.node, cst.BaseExpression):
            inner = collection_name(binding.node)
            if inner is not None:
                places.add(inner)
        return places

    def _registration(self, node: cst.Call, method: str, receiver: cst.BaseExpression | None,
                      function: FunctionScope, loops: tuple[Loop, ...]) -> None:
        names = frozenset(names_in(receiver)) if receiver is not None else None
        if method in _TENSOR_HOOKS and isinstance(receiver, cst.Name) and _computed_here(receiver.value, function):
            names = frozenset()  # a tensor this call computed: its hook dies with it, nothing given is hooked
        guarded = any(if_function is function and _is_state_test(test.test, function, self.facts.module_scope)
                      for test, if_function, _ in self._ifs)
        self._registrations.setdefault(id(function), []).append((names, guarded, node))
        positional = [arg.value for arg in node.args if arg.keyword is None]
        hook = positional[0] if positional else None
        if hook is not None:
            self._hooks.append((function, hook, method))
            if "self" in names_in(hook):
                self._hooks_hold_self.add(id(function))
        # every registration: the function it is in may turn out to run per step or per forward pass
        self._add_site(node, "register", function, loops, receiver, hook, method)

    def _add_site(self, node, kind, function, loops, receiver, hook, callee, bound_to=frozenset()) -> None:
        ifs = tuple((if_node.test, loop) for if_node, if_function, loop in self._ifs if if_function is function)
        args = tuple(arg.value for arg in node.args)
        self._sites.append(_Site(node, kind, function, loops, ifs, receiver, hook, args, callee,
                                 bound_to=frozenset(bound_to)))
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    # ----- decisions, once the module is walked --------------------------------------------------
    def _decide(self) -> None:
        per_call = self._per_call_functions()
        for site in self._sites:
            site.with_item = id(site.node) in self._with_items
            role = per_call.get(id(site.function))
            if role is not None and role != _PER_STEP and self._decide_per_call(site, role):
                continue
            if site.kind == "register":
                if site.loops or role == _PER_STEP:
                    self._decide_registration(site)
            elif not site.loops:
                if role == _PER_STEP and site.kind == "call":
                    self._decide_per_call(site, role)
            elif site.kind == "construct":
                self._decide_construction(site)
            elif not (role == _PER_STEP and self._decide_per_call(site, role)):
                self._decide_call(site)

    # ----- functions that run on every step or forward pass --------------------------------------
    def _per_call_functions(self) -> dict[int, str]:
        """id() of the functions that run again and again -> what runs them: the hook functions
        registered in this module (every forward or backward of what they hook), and the
        per-step methods of classes (``forward``, ``training_step``)."""
        found: dict[int, str] = {}
        for scope in self.facts.function_scopes.values():
            if scope.class_info is not None and scope.name in _PER_STEP_METHODS:
                found[id(scope)] = _PER_STEP
        for registrar, hook, method in self._hooks:
            scope = self._hook_function(hook, registrar)
            if scope is not None and id(scope) not in found:
                found[id(scope)] = _HOOK_ROLES.get(method, "a hook")
        return found

    def _hook_function(self, hook: cst.BaseExpression, registrar: FunctionScope) -> FunctionScope | None:
        """The ``def`` a registration installs: a function or nested function by name,
        ``self.method``, the function of a ``functools.partial``."""
        if isinstance(hook, cst.Call) and (self.facts.qualified_name(hook.func) or "").endswith(".partial") \
                and hook.args and hook.args[0].keyword is None:
            hook = hook.args[0].value
        if isinstance(hook, cst.Name):
            binding = registrar.lookup(hook.value)
            node = binding.node if binding is not None else None
            return self.facts.function_scopes.get(id(node)) if isinstance(node, cst.FunctionDef) else None
        name = dotted_name(hook)
        if name is not None and name.startswith("self.") and name.count(".") == 1 and registrar.class_info:
            return self.facts.find_method(registrar.class_info, name[5:])
        return None

    def _decide_per_call(self, site: _Site, role: str) -> bool:
        """A registration (or a call of a function of this module that registers) in a function
        that runs per step or per forward pass, on an object that outlives the call, whose
        handle is not removed in the same call: report it, and say so."""
        function = site.function
        if site.with_item or site.ifs:
            return False
        if site.kind == "register":
            if role == _PER_STEP or id(function) in self._state_tested:
                return False  # per-step methods: see _decide_registration
            if site.receiver is None or not self._persistent(site.receiver, function) \
                    or not self._handles_kept(site.node, function):
                return False
            what = source_of(site.receiver, 40)
            self.report(
                site.node,
                f"'{what}' gets one more hook on every call of {function.name}() ({role})",
                help="remove the handle before the hook returns, or register it once, outside the hook",
            )
            return True
        if site.kind != "call":
            return False
        for target in self.facts.callee_scopes(site.callee, function):
            if target is function or target.name == "__init__" or self._removes(target) \
                    or id(target) in self._state_tested:
                continue
            registrations = [call for names, guarded, call in self._registrations.get(id(target), ())
                             if not guarded and self._persistent(call.func.value if isinstance(call.func, cst.Attribute)
                                                                 else call.func, target, site.node, function)]
            if not registrations:
                continue
            handed_back = any(self._destinations.get(id(call), "") == _RETURNED or
                              self._destinations.get(id(call)) in target.returned_names for call in registrations)
            if handed_back and not self._handles_kept(site.node, function):
                continue
            name = site.callee.rsplit(".", 1)[-1]
            when = "every step" if role == _PER_STEP else role
            self.report(
                site.node,
                f"{name}() adds hooks on every call of {function.name}() ({when}), never removed",
                help="remove the previous call's handles first (for h in handles: h.remove()), or register the "
                     "hooks once",
            )
            return True
        return False

    def _persistent(self, node: cst.BaseExpression, function: FunctionScope, call: cst.Call | None = None,
                    caller: FunctionScope | None = None, depth: int = 0) -> bool:
        """Is the object ``node`` names (in ``function``) the same on every call: ``self``'s,
        a global, a closure variable, an element of one, or an argument that is so in ``caller``
        (``call`` being the call of ``function`` there)? Not an argument of a hook or per-step
        method (a tensor of this call), nor what the call builds."""
        root = _root(node)
        if root is None or depth > 3:
            return False
        if root in ("self", "cls"):
            return True
        for loop in self.facts.loop_of_node.values():
            if loop.scope is function and root in loop.target_names and isinstance(loop.node, cst.For):
                return self._persistent(loop.node.iter, function, call, caller, depth + 1)
        binding = function.bindings.get(root)
        if binding is None:
            return True  # a global or a variable of an enclosing function: the same every call
        if isinstance(binding.node, cst.Param):
            if call is None or caller is None:
                return False
            argument = _argument(call, function, root)
            return argument is not None and self._persistent(argument, caller, None, None, depth + 1)
        value = binding.node
        if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)) or (
                isinstance(value, cst.Call) and _last(value.func) in _LOOKUPS):
            return self._persistent(value, function, call, caller, depth + 1)
        return False

    def _handles_kept(self, node: cst.Call, function: FunctionScope) -> bool:
        """Does the handle (or handles) ``node`` returns outlive this call of ``function``
        without being removed in it: dropped, or kept in a place no ``.remove()`` here empties?"""
        if id(node) not in self._destinations:
            return False  # handed on some other way: taken as managed
        place = self._destinations[id(node)]
        if place is None:
            return True
        if place == _RETURNED:
            return False
        if place in self._removed.get(id(function), ()):
            return False
        if place.startswith("self.") and function.class_info is not None and any(
                place in self._removed.get(id(method), ()) for method in function.class_info.methods.values()):
            return False  # self._handle removed by another method (a paired hook may do it every call)
        for handed_by, callee, places in self._handed:
            if handed_by is function and place in places and any(
                    self._removes(scope) for scope in self.facts.callee_scopes(callee, function)):
                return False
        return not any(place in self._removed.get(id(scope), ())
                       for callee in function.callees for scope in self.facts.callee_scopes(callee, function))

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
        if self._repeating_loop(site, None, list(site.args), needs_all=True,
                                any_loop=self._dropped_next_iteration(site)) is None:
            return
        self.report(
            site.node,
            f"{site.callee}(...) registers hooks in __init__ every iteration and never removes them",
            help="build it once before the loop, or remove its hooks in the same iteration (a with block or its "
                 "release method)",
        )

    @staticmethod
    def _dropped_next_iteration(site: _Site) -> bool:
        """Is the object built bound only to local names that the next iteration rebinds (not
        stored, appended or returned)? Its hooks then outlive it on the object it hooked: the
        loop is not setting up one hook per item, whatever it walks over."""
        names = site.bound_to - {"self", "cls"}
        if not names or any("." in name for name in names):
            return False
        function = site.function
        kept: set[str] = set()
        for place, values in function.stored_values.items():
            for value in values:
                if "." in place:
                    kept |= names_in(value)  # self.cam = cam, or anything made from it
                elif isinstance(value, cst.Name):
                    kept.add(value.value)  # cams.append(cam), other = cam (not logits = cam(x))
                elif isinstance(value, (cst.Tuple, cst.List, cst.Set)):
                    kept |= {e.value.value for e in value.elements if isinstance(e.value, cst.Name)}
        return not (names & (kept | function.returned_names))

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
        if not self._registers(target, 3) or self._removes(target):
            return
        own = self._own_attribute_registrations(target) if isinstance(site.node.func, cst.Attribute) else []
        if own:
            # explainer.attribute(image) per image: the method hooks a layer its object was given,
            # the same on every call while the object is; the fix belongs in the method
            if self._repeating_loop(site, None, [site.node.func.value], needs_all=True) is not None:
                for call in own:
                    self._report_own_registration(call, target)
            return
        if self._repeating_loop(site, None, list(site.args), needs_all=True) is None:
            return
        direct = self._given_registrations(target, lambda name: True)
        if direct:
            # grad_cam(model, ...) per batch, hooking the layer it is given: reported where the
            # hook is registered (the handle to keep and remove), as for a method
            for call in direct:
                self._report_own_registration(call, target)
            return
        self.report(
            site.node,
            f"{site.callee.rsplit('.', 1)[-1]}() registers hooks every iteration and never removes them",
            help="register them once before the loop, or remove the handles after each call",
        )

    def _repeating_loop(self, site: _Site, receiver: cst.BaseExpression | None,
                        others: list[cst.BaseExpression], needs_all: bool = False, any_loop: bool = False) -> Loop | None:
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
            per_step = any_loop or loop.iterates_data or loop.walks_steps or loop.is_training_loop
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
        calls = self.facts.calls_made(function)
        return any(callee.rsplit(".", 1)[-1] == "remove" for callee in calls) or any(
            self._only_removing_method(callee) for callee in calls if "." in callee)

    def _only_removing_method(self, callee: str) -> bool:
        """``module_hook.close()`` on an object whose class cannot be read here, when every class
        of this module with a method of that name removes hooks in it (``self.hook.remove()``)."""
        method = callee.rsplit(".", 1)[-1]
        if method == "remove" or callee.startswith("self."):
            return False
        found = self._removing_methods.get(method)
        if found is None:
            scopes = [scope for info in self.facts.classes.values()
                      if (scope := self.facts.find_method(info, method)) is not None]
            found = self._removing_methods[method] = bool(scopes) and all(
                any(name.rsplit(".", 1)[-1] == "remove" for name in self.facts.calls_made(scope, depth=1))
                for scope in scopes)
        return found

    def _registers(self, function: FunctionScope, depth: int, seen: set[int] | None = None) -> bool:
        """Does ``function`` register hooks on something it was given (a parameter, an
        attribute of ``self`` set from one, a global), not under a state guard, directly or
        through this module's code? Hooks on an object's own submodules die with it."""
        seen = seen if seen is not None else set()
        if id(function) in seen:
            return False
        seen.add(id(function))
        for names, guarded, _ in self._registrations.get(id(function), ()):
            if not guarded and (names is None or any(self._given(name, function) for name in names)):
                return True
        if depth:
            for callee in function.callees:
                for scope in self.facts.callee_scopes(callee, function):
                    if self._registers(scope, depth - 1, seen):
                        return True
        return False

    def _own_attribute_registrations(self, method: FunctionScope) -> list[cst.Call]:
        """The registrations of ``method``, not under a state guard, on something its object
        was given (``self.target_layer`` set from a constructor argument), whose handles the
        call does not remove."""
        if method.class_info is None or id(method) in self._state_tested:
            return []
        return [call for call in self._given_registrations(method, lambda name: name.startswith("self."))
                if self._handles_kept(call, method)]

    def _given_registrations(self, function: FunctionScope, wanted: "Callable[[str], bool]") -> list[cst.Call]:
        """The registrations ``function`` makes itself, not under a state guard nor as a ``with``
        item, on something it was given (see _given) whose name ``wanted`` accepts."""
        return [call for names, guarded, call in self._registrations.get(id(function), ())
                if not guarded and names is not None and id(call) not in self._with_items
                and any(wanted(name) and self._given(name, function) for name in names)]

    def _report_own_registration(self, call: cst.Call, method: FunctionScope) -> None:
        if id(call) in self._reported:
            return
        self._reported.add(id(call))
        func = call.func
        what = source_of(func.value, 40) if isinstance(func, cst.Attribute) else "every module"
        registration = func.attr.value if isinstance(func, cst.Attribute) else "hook"
        self.report(
            call,
            f"'{what}' gets one more hook ({registration}) on every call of {method.name}(), never removed",
            help=f"keep the handle and remove it before {method.name}() returns (in a finally), or register the "
                 f"hook once in __init__",
            function=method, needs_grad=False,
        )

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
        # a training function called every step scales the gradients of tensors it computes
        # (an unrolled dynamics model, the weighted loss): those hooks die with the step's graph
        """
import torch

def update_weights(model, optimizer, batch, unroll_steps):
    obs, actions, targets = batch
    hidden = model.initial_state(obs)
    loss = 0
    for k in range(unroll_steps):
        value, hidden = model.step(hidden, actions[:, k])
        loss = loss + (value - targets[:, k]).pow(2).mean()
        hidden.register_hook(lambda grad: grad * 0.5)
    weighted = (loss / unroll_steps).mean()
    weighted.register_hook(lambda grad: grad * 2.0)
    optimizer.zero_grad()
    weighted.backward()
    optimizer.step()
    return weighted.item()

def train(model, optimizer, loader, unroll_steps):
    for batch in loader:
        update_weights(model, optimizer, batch, unroll_steps)
""",
        # one wrapper per setting, all kept: hooks set up once per item, on purpose
        """
import torch
class Probe:
    def __init__(self, model, layer_name):
        self.outputs = []
        model.get_submodule(layer_name).register_forward_hook(self._keep)
    def _keep(self, module, inputs, output):
        self.outputs.append(output.detach().cpu())
def attach(model, layer_names):
    probes = []
    for name in layer_names:
        probe = Probe(model, name)
        probes.append(probe)
    return probes
""",
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
        # a method that registers on its object's layer and removes the handles before it returns
        """
import torch
class Saliency:
    def __init__(self, model, layer):
        self.model = model
        self.layer = layer
        self.feats = None

    def _keep(self, module, inputs, output):
        self.feats = output

    def explain(self, image):
        handle = self.layer.register_forward_hook(self._keep)
        try:
            self.model(image).max().backward()
        finally:
            handle.remove()
        return self.feats.detach().cpu()

def explain_all(model, layer, images):
    saliency = Saliency(model, layer)
    return [saliency.explain(image) for image in images]
""",
        # a forward hook that hooks the tensors of this call; a pre-hook that removes the last
        # call's handles before it adds new ones
        """
import torch
def clip_gradients_of(layer, limit):
    def on_forward(module, inputs, output):
        output.register_hook(lambda grad: grad.clamp(-limit, limit))
    return layer.register_forward_hook(on_forward)

class Scaler:
    def __init__(self, model, gates):
        self.model = model
        self.gates = gates
        self.step_handles = []

    def _inject(self, scale):
        return [gate.register_forward_pre_hook(lambda m, args: (args[0] * scale,)) for gate in self.gates]

    def _before_forward(self, module, args):
        while self.step_handles:
            self.step_handles.pop().remove()
        self.step_handles.extend(self._inject(args[0].mean().item()))

    def attach(self):
        self.model.register_forward_pre_hook(self._before_forward)
""",
        # a pre-hook installing a one-shot forward hook that removes itself
        """
import torch
class OneShot:
    def __init__(self, model):
        self.model = model
        self.handle = None
        self.seen = []
        model.register_forward_pre_hook(self._arm)

    def _arm(self, module, args):
        self.handle = self.model.head.register_forward_hook(self._fire)

    def _fire(self, module, inputs, output):
        self.seen.append(output.mean().item())
        self.handle.remove()
""",
        # forward calls a helper that registers once (it checks its own state first)
        """
import torch
from torch import nn
class Probed(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.handles = None
        self.seen = []

    def _record(self, module, inputs, output):
        self.seen.append(output.mean().item())

    def _ensure_hooks(self):
        if self.handles is not None:
            return
        self.handles = [m.register_forward_hook(self._record) for m in self.body.children()]

    def forward(self, x):
        self._ensure_hooks()
        return self.body(x)
""",
    ]

    INVALID = [
        # a step function hooks a parameter of the model it is given (bound to a local name first):
        # the parameter outlives the step, so every step adds one more hook
        Invalid("""
import torch

def clip_step(model, optimizer, batch):
    emb = model.embed.weight
    emb.register_hook(lambda grad: grad * 0.1)
    loss = model(batch).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

def train(model, optimizer, loader):
    for batch in loader:
        clip_step(model, optimizer, batch)
""", line=6),
        # a wrapper built per setting and dropped at the next iteration: its hooks stay on the
        # model it was given (the loop walks settings, not data, and each is a new hook)
        Invalid("""
import torch
class FaultInjector:
    def __init__(self, model, rate):
        self.model, self.rate = model, rate
        self._add_hooks()
    def _add_hooks(self):
        for module in self.model.modules():
            module.register_forward_hook(self._make_hook())
    def _make_hook(self):
        def hook(module, inputs, output):
            return output * (torch.rand_like(output) > self.rate)
        return hook
def campaign(model, images, rates):
    results = []
    for rate in rates:
        injector = FaultInjector(model, rate)
        results.append(model(images).argmax(1).cpu())
    return results
""", line=17),
        # a method hooking the layer its object was given, on every call, called per image
        Invalid("""
import torch
class FeatureAttribution:
    def __init__(self, model, layer):
        self.model = model
        self.layer = layer
        self.acts = None

    def _keep(self, module, inputs, output):
        self.acts = output

    def attribute(self, image):
        self.layer.register_forward_hook(self._keep)
        self.model(image).max().backward()
        return (self.acts * self.acts.grad).sum(1).detach().cpu()

def attribute_folder(model, layer, images):
    attribution = FeatureAttribution(model, layer)
    maps = []
    for image in images:
        maps.append(attribution.attribute(image[None].cuda()))
    return maps
""", line=13),
        # a forward hook that adds another hook to the model's head on every forward
        Invalid("""
import torch
def attach_probe(model, store):
    def on_backbone(module, inputs, output):
        model.head.register_forward_hook(lambda m, i, o: store.append(o.detach().cpu()))
    model.backbone.register_forward_hook(on_backbone)
""", line=5),
        # a pre-hook whose helper registers one hook per gate every forward; only the last
        # forward's handles are removed, after the generation
        Invalid("""
import torch
from contextlib import contextmanager
class GatedModel:
    def __init__(self, model, gates, router):
        self.model = model
        self.gates = gates
        self.router = router

    def _inject(self, weights):
        handles = []
        for gate in self.gates:
            handles.append(gate.register_forward_pre_hook(lambda m, args, w=weights: (args[0] * w,)))
        return handles

    @contextmanager
    def routed(self):
        current = []

        def before_forward(module, args):
            nonlocal current
            current = self._inject(self.router(args[0]))

        handle = self.model.register_forward_pre_hook(before_forward)
        yield
        handle.remove()
        for h in current:
            h.remove()
""", line=22),
        # forward calls a helper that hooks every child of the body on every call
        Invalid("""
import torch
from torch import nn
class Traced(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.norms = []

    def _record(self, module, inputs, output):
        self.norms.append(output.norm().item())

    def _trace(self):
        for child in self.body.children():
            child.register_forward_hook(self._record)

    def forward(self, x):
        self._trace()
        return self.body(x)
""", line=18),
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
        # a helper that registers and never removes, called per batch: reported at the registration
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
""", line=4),
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
    # A helper that hooks every layer through a recursive closure, called on every batch; the same
    # helper closing its objects in a finally (through a method of a class the call cannot name)
    # removes them.
    INVALID += [
        Invalid("""
import torch
class ModuleHook:
    def __init__(self, module):
        self.hook = module.register_forward_hook(self.hook_fn)
        self.features = None
    def hook_fn(self, module, inputs, output):
        self.features = output
    def close(self):
        self.hook.remove()

def hook_model(model):
    features = {}
    def hook_layers(net, prefix=()):
        for name, layer in net._modules.items():
            features["_".join(prefix + (name,))] = ModuleHook(layer)
            hook_layers(layer, prefix + (name,))
    hook_layers(model)
    return features

def render_vis(model, objective, steps=64):
    image = torch.randn(1, 3, 64, 64, requires_grad=True)
    optimizer = torch.optim.Adam([image], lr=0.05)
    features = hook_model(model)
    for _ in range(steps):
        optimizer.zero_grad()
        model(image)
        objective(features).backward()
        optimizer.step()
    return image.detach()

def run(net, objective, loader):
    for batch in loader:
        render_vis(net, objective)
""", line=34),
    ]

    VALID += [
        # a hook on the step's loss, reached through a name bound to it: it dies with the graph
        """
import torch
def update_weights(model, batch, optimizer, gradient_scale):
    weighted_loss = model(batch).mean()
    total_loss = weighted_loss
    total_loss.register_hook(lambda grad: grad * gradient_scale)
    optimizer.zero_grad()
    total_loss.backward()
    optimizer.step()

def train(model, loader, optimizer):
    for batch in loader:
        update_weights(model, batch, optimizer, 0.5)
""",
        """
import torch
class ModuleHook:
    def __init__(self, module):
        self.hook = module.register_forward_hook(self.hook_fn)
        self.features = None
    def hook_fn(self, module, inputs, output):
        self.features = output
    def close(self):
        self.hook.remove()

def hook_model(model):
    return {name: ModuleHook(layer) for name, layer in model.named_children()}

def render_vis(model, objective, steps=64):
    image = torch.randn(1, 3, 64, 64, requires_grad=True)
    optimizer = torch.optim.Adam([image], lr=0.05)
    features = hook_model(model)
    try:
        for _ in range(steps):
            optimizer.zero_grad()
            model(image)
            objective(features).backward()
            optimizer.step()
    finally:
        for module_hook in features.values():
            module_hook.close()
    return image.detach()

def run(net, objective, loader):
    for batch in loader:
        render_vis(net, objective)
""",
    ]


_PER_STEP = "per step"


def _calls_in(node: cst.BaseExpression) -> list[cst.Call]:
    """The calls whose results ``node`` keeps as they are: itself, the elements of a list or
    tuple, the element of a list comprehension."""
    if isinstance(node, cst.Call):
        return [node]
    if isinstance(node, (cst.List, cst.Tuple)):
        return [element.value for element in node.elements if isinstance(element.value, cst.Call)]
    if isinstance(node, cst.ListComp) and isinstance(node.elt, cst.Call):
        return [node.elt]
    return []


def _argument(call: cst.Call, function: FunctionScope, parameter: str) -> cst.BaseExpression | None:
    """What ``call`` passes for ``parameter`` of ``function`` (by keyword or position)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
    if parameter not in function.parameters:
        return None
    index = function.parameters.index(parameter)
    positional = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in positional[: index + 1]):
        return None
    return positional[index].value if index < len(positional) else None


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


def _computed_here(name: str, function: FunctionScope) -> bool:
    """Is ``name`` bound in ``function`` only to tensors it computes (``loss = (w * l).mean()``,
    ``out, h = model.step(h, a)``): new objects of this call, not the object it was given or a part
    of it (``model.embed.weight``, ``getattr(model, n)``)?"""
    return _computed_in(name, function, 0)


def _computed_in(name: str, function: FunctionScope, depth: int) -> bool:
    values = function.stored_values.get(name, ())
    return bool(values) and all(_a_computation(value, function, depth) for value in values)


def _a_computation(value: cst.BaseExpression, function: FunctionScope, depth: int = 0) -> bool:
    if isinstance(value, cst.Name) and depth < 3 and value.value not in function.inputs:
        return _computed_in(value.value, function, depth + 1)  # total_loss = weighted_loss: an alias
    while isinstance(value, (cst.Attribute, cst.Subscript)):
        value = value.value  # out.hidden_state, out[0]: a part of what was computed
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
        return True
    if isinstance(value, cst.Call):
        called = dotted_name(value.func) or ""
        return called.rsplit(".", 1)[-1] not in _LOOKUPS | {"parameters", "named_parameters", "modules",
                                                             "named_modules", "children", "buffers"}
    return False
