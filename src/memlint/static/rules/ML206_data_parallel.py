"""ML206 data-parallel: a model is wrapped in ``torch.nn.DataParallel``.

DataParallel runs one process: every step it scatters the batch from the first device,
replicates the model, and gathers every replica's outputs (and the loss) back onto the
first device. That device holds the gathered outputs on top of its own share, so it runs
out of memory while the others sit partly empty, and the single Python process limits the
speed. PyTorch recommends ``DistributedDataParallel`` (one process per GPU, launched with
``torchrun``), even on one machine.

Flagged: a call of ``torch.nn.DataParallel`` / ``torch.nn.parallel.DataParallel`` (any
import alias) and of the functional ``torch.nn.parallel.data_parallel``. Not flagged:
``isinstance(model, nn.DataParallel)`` checks and unwrapping (``model.module``), which
libraries do to support models users wrapped themselves; a module that also offers
``DistributedDataParallel`` (DataParallel is then a fallback chosen by how the user
launches: ignite's ``auto_model``, transformers' Trainer without ``torchrun``); a
framework's DataParallel strategy class (a base named ``*Strategy``: Lightning's
``strategy="dp"``), which runs only when the user asks for it; tests (``test_*`` files and
functions); a wrapper used for inference only where it is made (a local that does not leave a
function running no backward pass and no optimizer step after it is made, later or in a loop
around it, nor handing it to a call that may train it (a function of the project that
backpropagates, or one unread), or calling it only under no_grad; a script's top-level code
likewise, when no function of the module reads the name or those that do only call it under
no_grad; a copy wrapped under ``isinstance(x,
nn.DataParallel)``, as what it copies was): each batch's gathered outputs are
used and freed; a model made ready for inference before it is wrapped (``.eval()``,
``requires_grad_(False)``, a ``torch.jit.load`` archive), or a wrapper put in eval mode as it is
made or later (``nn.DataParallel(net).eval()``, ``g.eval()``), in a function that runs no backward
pass and no optimizer step: a feature extractor, which gathers no loss and holds no gradients.
a module without parameters (a parameterless torch.nn layer, or a class of the project that
makes none: a loss spread over the GPUs); a module container (``nn.ModuleList``), which has no
``forward``; a wrapper over one device (``device_ids`` a list of one, also through a name
bound to one), or in a program that sets ``CUDA_VISIBLE_DEVICES`` to one device written out; a
wrapper the same function reads, on every path after
wrapping, for an attribute of the wrapped model (``self.model.encoder.parameters()``): DataParallel
has none, so the program stops there with AttributeError whenever it wraps. Said less (info): a wrapped module of this file, or of another module of the project (its
summary's ``computes_loss`` effect), whose ``forward`` computes the
loss, the documented fix for the imbalance (only the losses are gathered).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Sequence

import libcst as cst

from memlint.static.facts import (
    FUNCTIONAL_LOSS_WORDS, GradMode, block_statements, descendants, dotted_name, is_test_file, literal_length, names_in,
    nested_blocks, related_classes, without_self_returning_calls,
)
from memlint.static.rule import Invalid, Rule
from memlint.static.summaries import COMPUTES_LOSS, SEES_ONE_GPU
from memlint.static.tensor_api import PARAMETERLESS_LAYERS
from memlint.static.rules.ML101_graph_accumulation import source_of

DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                           "torch.nn.parallel.data_parallel.DataParallel", "torch.nn.parallel.data_parallel",
                           "torch.nn.parallel.data_parallel.data_parallel"})


# Module containers without a forward of their own.
_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.ParameterList",
                         "torch.nn.ParameterDict", "torch.nn.modules.container.ModuleList",
                         "torch.nn.modules.container.ModuleDict"})
# Methods of a module that run no forward: the wrapper's own bookkeeping.
_MODE_AND_DEVICE = frozenset({"to", "cuda", "cpu", "eval", "train", "half", "float", "bfloat16", "requires_grad_"})


class DataParallel(Rule):
    code = "ML206"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        # How each ``self.x`` / name is used in the module: called (runs its forward), or handed
        # on (an argument, a return value, another name bound to it)
        self._called: set[str] = set()
        self._aliased: set[str] = set()  # names returned or bound to another name as they are
        self._handed_on: set[str] = set()
        # (id(function), name) -> for each call handed the name: (calls seen before it, the id()s
        # of its loops, its callees, the names its result is bound to, the argument it is: a
        # position or a keyword; None after a star)
        self._passed_to: dict[tuple[int, str], list[tuple[int, tuple[int, ...], list[object], frozenset[str],
                                                          int | str | None]]] = {}
        self._calls_seen = 0
        self._called_with_grad: set[tuple[int, str]] = set()  # (id(function), name) called with grad on there
        self._called_in: set[tuple[int, str]] = set()  # (id(function), name) called there, in any grad mode

    def _without_gpus(self) -> bool:
        """Is the walk in a branch that runs only when no GPU is there (the ``else`` of ``if
        torch.cuda.is_available():``, or ``if not torch.cuda.is_available():``)? DataParallel then
        wraps nothing: it calls the module as it is."""
        for key, branch in self.facts.branch_path:
            node = self.facts.if_nodes.get(key)
            if node is None:
                continue
            test, negated = node.test, branch == "else"
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, negated = test.expression, not negated
            if negated and isinstance(test, cst.Call) and \
                    self.facts.qualified_name(test.func) == "torch.cuda.is_available":
                return True
        return False

    def _mirrors_a_wrapper(self) -> bool:
        """Is the walk in the body of ``if isinstance(x, nn.DataParallel):`` (a copy wrapped as
        the model it copies was)? The wrapping was chosen by whoever wrapped ``x``."""
        for key, branch in self.facts.branch_path:
            node = self.facts.if_nodes.get(key)
            test = node.test if node is not None and branch == "body" else None
            if isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2 and \
                    self.facts.qualified_name(test.args[1].value) in DATA_PARALLEL:
                return True
        return False

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._handed_on.add(dotted_name(node.value) or "")
            self._aliased.add(dotted_name(node.value) or "")

    def visit_Assign(self, node: cst.Assign) -> None:
        self._handed_on.add(dotted_name(node.value) or "")
        self._aliased.add(dotted_name(node.value) or "")

    def visit_Call(self, node: cst.Call) -> None:
        self._calls_seen += 1
        func = dotted_name(node.func)
        if func is not None:
            called = func[:-len(".forward")] if func.endswith(".forward") else func
            self._called.add(called)
            self._called_in.add((id(self.facts.function), called))
            if not self.facts.in_no_grad:  # (also for the functions around a closure that calls it)
                scope = self.facts.function
                while scope is not None:
                    self._called_with_grad.add((id(scope), called))
                    scope = scope.parent
        qualified = self.facts.qualified_name(node.func)
        if qualified not in DATA_PARALLEL:
            self._handed_on.update(dotted_name(arg.value) or "" for arg in node.args)
            found = self.facts.callees(node)
            callee = [id(definition) for definition in found[0]] if found is not None else (
                [qualified] if qualified is not None else [])
            loops = tuple(id(loop.node) for loop in self.facts.loops_in_function())
            starred = False
            for index, arg in enumerate(node.args):
                starred |= bool(arg.star)
                where = arg.keyword.value if arg.keyword is not None else None if starred else index
                name = dotted_name(arg.value)
                if name is not None:  # train_one_epoch(loader, model, ...): what may train it
                    self._passed_to.setdefault((id(self.facts.function), name), []).append(
                        (self._calls_seen, loops, callee, self._checker.assign_targets, where))
            return
        if "DistributedDataParallel" in self._checker.source:
            return  # the code offers DDP too: DataParallel is the fallback the user picks
        if is_test_file(self._checker.path) or self.facts.function.name.startswith("test_"):
            return  # a test of DataParallel support, not a training run
        if self._without_gpus():
            return  # else-branch of torch.cuda.is_available(): DataParallel is a pass-through there
        if self._mirrors_a_wrapper():
            return  # if isinstance(inner, nn.DataParallel): copy = DataParallel(copy): the caller's choice, kept
        if self.facts.grad_off and qualified.rsplit(".", 1)[-1] == "data_parallel":
            return  # nn.parallel.data_parallel(G, z) under no_grad: sampling, no loss or gradients gathered
        info = self.facts.class_info
        if info is not None and any(base.endswith("Strategy") for base in info.base_names):
            return  # a framework's "dp" strategy, used only when the user asks for it
        wrapped = node.args[0].value if node.args else None
        if self._container_without_forward(wrapped):
            return  # DataParallel(nn.ModuleList(...)): calling it raises (no forward); nothing is ever scattered
        function, bound = self.facts.function, self._checker.assign_targets
        wrapped_name = dotted_name(wrapped) if isinstance(wrapped, (cst.Name, cst.Attribute)) else None
        change = self.facts.mode_of(wrapped_name) if wrapped_name is not None else None
        frozen = change is not None and change.mode in ("eval", "frozen")  # not net.eval(); del net; net = Net()
        # frozen earlier by a loop over its parameters (``for p in self.avgG.parameters():
        # p.requires_grad = False``), here or in another function of the module
        frozen |= (dotted_name(wrapped) or "") in self.facts.frozen_modules if wrapped is not None else False
        wrapped, peeled_frozen = self._peel(wrapped)
        if isinstance(wrapped, cst.Name):  # what the name is bound to, looked up now (decided at the end)
            binding = self.facts.lookup(wrapped.value)
            wrapped, bound_frozen = self._peel(self._before_wrapping(wrapped.value, binding.node if binding else None))
            peeled_frozen |= bound_frozen
        frozen |= peeled_frozen
        place = _Place(self._calls_seen, len(function.training_sites), len(function.mode_changes),
                       self.facts.loops_in_function())
        self.at_module_exit(lambda: self._decide(node, qualified.rsplit(".", 1)[-1], wrapped, function, bound, frozen,
                                                 place))

    def _container_without_forward(self, wrapped: cst.BaseExpression | None) -> bool:
        """Is the wrapped module an ``nn.ModuleList`` / ``nn.ModuleDict`` (built here, or the one a
        name or ``self.x`` is bound to): a container whose ``forward`` raises?"""
        for _ in range(3):
            wrapped = without_self_returning_calls(wrapped)
            if isinstance(wrapped, (cst.Name, cst.Attribute)):
                name = dotted_name(wrapped)
                binding = self.facts.lookup(name) if name is not None else None
                wrapped = binding.node if binding is not None and isinstance(binding.node, cst.BaseExpression) else None
                continue
            break
        return isinstance(wrapped, cst.Call) and self.facts.qualified_name(wrapped.func) in _CONTAINERS

    def _before_wrapping(self, name: str, bound: cst.CSTNode | None) -> cst.CSTNode | None:
        """What ``name`` held before another branch wrapped it (``if ddp: model = DDP(model)``
        ``elif n_gpu > 1: model = DataParallel(model)``): the last value it was given that is not
        a wrapper of itself."""
        if not self._wraps_itself(name, bound):
            return bound
        for value in reversed(self.facts.function.stored_values.get(name, ())):
            if not self._wraps_itself(name, value):
                return value
        return bound

    def _wraps_itself(self, name: str, value: cst.CSTNode | None) -> bool:
        return isinstance(value, cst.Call) and self.facts.wraps_a_module(value) and \
            isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == name

    def _peel(self, wrapped: cst.CSTNode | None) -> tuple[cst.CSTNode | None, bool]:
        """``FullModel(...).cuda()`` down to ``FullModel(...)``; and whether the chain puts the
        model in eval mode, freezes it (``requires_grad_(False)``) or loads a TorchScript archive:
        a model made ready for inference, not for training."""
        frozen = False
        while isinstance(wrapped, cst.Call) and isinstance(wrapped.func, cst.Attribute) \
                and wrapped.func.attr.value in _MODE_AND_DEVICE:
            method = wrapped.func.attr.value
            frozen |= method == "eval" or (method == "requires_grad_" and bool(wrapped.args) and isinstance(
                wrapped.args[0].value, cst.Name) and wrapped.args[0].value.value == "False")
            wrapped = wrapped.func.value
        if isinstance(wrapped, cst.Call) and self.facts.qualified_name(wrapped.func) == "torch.jit.load":
            frozen = True
        return wrapped, frozen

    def _inference_only(self, function, bound: frozenset[str], place: "_Place") -> bool:
        """Is the wrapped model used for inference only, where it is made: bound to a local name
        that does not leave the function (not returned, not stored on an object), with no backward
        pass and no optimizer step of the function run after the wrapping (later in the body, or
        in a loop around it)?"""
        if not bound or (function.name == "<module>" and self._read_by_functions(bound)
                         and not self._functions_only_run_it_without_grad(bound, function)):
            return False  # a global a function of the module may train
        if function.trains_after(place.training_sites, place.loops) and any(
                (id(function), name) in self._called_with_grad for name in bound):
            return False  # called with grad on, and a backward pass or an update follows
        if (function.has_backward or function.has_optimizer_step) and self._may_be_trained(
                bound, function, place, runs=True):
            # handed to a call that may run it (``loss = self._step(model, x)``) in a function that
            # backpropagates (the loss it returns), or one that may train it itself
            return False
        if self._may_be_trained(bound, function, place, updates=True):
            return False  # handed to a call that steps an optimizer (train_one_epoch(model, ...) of another module)
        if any(name in function.returned_names or "." in name for name in bound):
            return False
        return not any(name in names_in(value) for place, values in function.stored_values.items()
                       if "." in place for value in values for name in bound)

    def _functions_only_run_it_without_grad(self, names: frozenset[str], module_scope) -> bool:
        """Do the module's functions that read a global wrapper only call it with grad off (a
        teacher run under ``torch.no_grad()`` in ``train()`` and ``test()``), never put it in train
        mode, keep it (stored on an object, returned) or hand it to a call that may train it?"""
        if any(called in names for _, called in self._called_with_grad):
            return False
        for scope in self.facts.function_scopes.values():
            if scope is module_scope:
                continue
            if any(change.target in names and change.mode == "train" for change in scope.mode_changes) \
                    or names & scope.returned_names or any(
                        name in names_in(value) for place, values in scope.stored_values.items() if "." in place
                        for value in values for name in names):
                return False
        return not any(
            not callee or self.facts.callees_train(callee) is not False
            for (scope_id, name), uses in self._passed_to.items() if name in names and scope_id != id(module_scope)
            for _, _, callee, _, _ in uses)

    def _read_by_functions(self, names: frozenset[str]) -> bool:
        """Does a function or class of the module name one of these module-level names? Not a
        function whose own parameter or local has the name (``def get_model(): model = C3D()``),
        with no nested definition, that nothing hands a value to: it never reads the global."""
        return any(isinstance(statement, cst.ClassDef)
                   or isinstance(statement, cst.FunctionDef) and not self._local_of(statement, name)
                   for name in names for statement in self._checker.top_level_naming(name))

    def _local_of(self, definition: cst.FunctionDef, name: str) -> bool:
        """Is ``name`` in ``definition`` its own parameter or local, and is the wrapper never handed
        to it (``train(loader, model, ...)`` reads the wrapper through its parameter)?"""
        scope = self.facts.function_scopes.get(id(definition))
        handed = any(id(definition) in callee for uses in self._passed_to.values()
                     for _, _, callee, _, _ in uses)
        return scope is not None and not handed and name in scope.bindings and not any(
            isinstance(node, (cst.Global, cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not definition
            for node in descendants(definition))

    def _may_be_trained(self, bound: frozenset[str], function, place: "_Place", updates: bool = False,
                        runs: bool = False) -> bool:
        """Is the wrapper put back in train mode here, or handed, after it is made, to a call
        that may train it (``train_one_epoch(loader, model, ...)``: a callee that backpropagates,
        or one unread)? ``updates``: only a callee that steps an optimizer counts (a PGD
        evaluation backpropagates to its inputs and updates nothing). ``runs``: also a callee that
        runs it whose result this function backpropagates (``loss = self._step(model, x)``)."""
        around = id(place.loops[0].node) if place.loops else None
        return any(
            any(change.target == name and change.mode == "train" and (index >= place.mode_changes or around in change.loops)
                for index, change in enumerate(function.mode_changes))
            or any((not callee or (self.facts.callees_update(callee) if updates
                                   else self.facts.callees_train(callee)) is not False
                    or (runs and self.facts.callees_work(callee) is not False and function.is_backpropagated(results)))
                   and (seen > place.calls_seen or around in loops)
                   and not self._only_run_without_grad_by(callee, where)
                   for seen, loops, callee, results, where in self._passed_to.get((id(function), name), ()))
            for name in bound)

    def _only_run_without_grad_by(self, callee: list[object], where: int | str | None) -> bool:
        """Is the callee a function of this module (not a method) that only calls the argument
        ``where`` under no_grad, never puts it in train mode, keeps it, returns it, or hands it on
        (``test(net, loader)`` running ``net`` under ``torch.no_grad()``, and training a linear probe
        on the features)? Whatever else it trains, it does not train that argument."""
        if where is None or not callee:
            return False
        if len(callee) == 1 and isinstance(callee[0], str):
            return self._runs_without_grad_elsewhere(callee[0])
        if not all(isinstance(key, int) for key in callee):
            return False
        for key in callee:
            scope = self.facts.function_scopes.get(key)
            if scope is None or scope.class_info is not None:
                return False
            if isinstance(where, int):
                if where >= len(scope.parameters):
                    return False
                parameter = scope.parameters[where]
            elif where in scope.parameters:
                parameter = where
            else:
                return False
            if (id(scope), parameter) in self._called_with_grad or (id(scope), parameter) in self._passed_to \
                    or parameter in scope.returned_names \
                    or any(change.target == parameter and change.mode == "train" for change in scope.mode_changes) \
                    or any(parameter in names_in(value) for place, values in scope.stored_values.items() if "." in place
                           for value in values):
                return False
        return True

    def _kept_only_for_calls_without_grad(self, bound: frozenset[str], function) -> bool:
        """Is the wrapper kept on an object (``self.model = DataParallel(...)``) and, anywhere in
        the module, never called with grad on, put in train mode, returned or bound to another
        name, and handed only to functions that run it without grad (``get_cand_err(self.model,
        ...)`` with ``get_cand_err`` decorated to run under ``torch.no_grad()``)? An evaluator's
        model, not trained here."""
        names = bound - {"self", "cls"}
        if not names or not all("." in name for name in names):
            return False
        # ``self.model`` of this class (and the classes related to it): another class's
        # ``self.model`` is another object (a trainer's, beside this tester's)
        scopes = {id(scope): scope for scope in self.facts.function_scopes.values()
                  if self._same_object(scope, names, function)}
        if any(called in names and scope_id in scopes for scope_id, called in self._called_with_grad) \
                or names & self._aliased:
            return False
        if any(change.target in names and change.mode == "train"
               for scope in scopes.values() for change in scope.mode_changes):
            return False
        uses = [use for (scope_id, name), found in self._passed_to.items() if name in names and scope_id in scopes
                for use in found]
        called = any(name in names and scope_id in scopes for scope_id, name in self._called_in)
        return (bool(uses) or called) and all(self._only_run_without_grad_by(callee, where)
                                              for _, _, callee, _, where in uses)

    def _same_object(self, scope, names: frozenset[str], function) -> bool:
        """Can ``scope`` reach the object the wrapper is kept on: for ``self.x``, a method of the
        wrapping function's class or of a class related to it (or a function of no class, which
        may be handed anything); any scope for another holder."""
        if not all(name.startswith("self.") for name in names):
            return True
        owner = function.class_info
        info = scope.class_info
        if owner is None or info is None:
            return True
        return info is owner or related_classes(owner.name, info.name, self.facts.local_ancestors)

    def _runs_without_grad_elsewhere(self, qualified: str) -> bool:
        """Is ``qualified`` a function (not a class) of another module of the project whose whole
        body runs under no_grad, whatever its callers do (``@no_grad_wrapper`` of its module, a
        decorator returning the function wrapped in ``torch.no_grad()``)? Nothing it does with
        the wrapper computes gradients."""
        definition = self.facts.project_definition(qualified)
        if definition is None or definition.kind != "function":
            return False
        summary = self.facts.project.function_summary(definition.key)
        return summary is not None and summary.entry_grad_mode is GradMode.OFF

    def _never_run(self, bound: frozenset[str]) -> bool:
        """Is the wrapper, kept on an object (``self.model = DataParallel(self.model)``), never
        called nor handed on anywhere in the module: only other methods of the model used
        through it (``self.model.get_text_features(...)``, which DataParallel does not split)?"""
        names = bound - {"self", "cls"}
        return bool(names) and all(
            "." in name and name not in self._called and name not in self._handed_on
            and any(called.startswith(f"{name}.") and called.rsplit(".", 1)[-1] not in _MODE_AND_DEVICE
                    for called in self._called)  # used, and only through other methods
            for name in names)

    def _holds_no_parameters(self, wrapped: cst.CSTNode | None) -> bool:
        """Is the wrapped module built from a torch.nn layer without parameters, or from a class
        of the project that makes none (each of its bases likewise)?"""
        if not isinstance(wrapped, cst.Call):
            return False
        facts = self.facts
        qualified = facts.qualified_name(wrapped.func)
        if qualified is None:
            return False
        if qualified in PARAMETERLESS_LAYERS:
            return True
        project = facts.project
        if project is None:
            return False
        if qualified in facts.class_nodes and facts.module_name:
            qualified = f"{facts.module_name}.{qualified}"
        definition = facts.project_definition(qualified)
        return definition is not None and definition.kind == "class" and project.without_parameters(
            definition.qualified)

    def _project_forward_computes_loss(self, wrapped: cst.CSTNode | None) -> bool:
        """Does ``forward`` compute the loss, for a module built here from a class another module
        of the project defines (``CloneModel(...)`` imported from ``models``)? Its summary says."""
        project = self.facts.project
        if project is None or not isinstance(wrapped, cst.Call):
            return False
        qualified = self.facts.qualified_name(wrapped.func)
        # Model(...), or Model.from_pretrained(...): a classmethod of the class builds one
        definition = self.facts.project_definition(self.facts.class_of_constructor(qualified) or qualified)
        if definition is None or definition.kind != "class":
            return False
        key = project.method_owner(definition.qualified, "forward")
        return key is not None and bool(project.has_effect(key, COMPUTES_LOSS))

    def _decide(self, node: cst.Call, name: str, wrapped: cst.CSTNode | None, function, bound: frozenset[str],
                frozen: bool, place: "_Place") -> None:
        if self._inference_only(function, bound, place):
            return  # each batch's outputs are gathered, used and freed: no loss, no gradients pile up
        # ... or the wrapper itself put in eval mode here, as it is made (the engine records
        # nn.DataParallel(net).eval() as a mode change of the name) or later (g.eval())
        frozen = frozen or any(_last_change(function.mode_changes[place.mode_changes:], name) in ("eval", "frozen")
                               for name in bound)
        # ... or every parameter frozen in the function that wraps it (``for p in model.parameters():
        # p.requires_grad = False`` before it returns the wrapper): no gradients, no optimizer state
        frozen = frozen or bool(function.frozen_here & bound)
        if frozen and not function.trains_after(place.training_sites, place.loops) \
                and not self._may_be_trained(bound, function, place):
            return  # a feature extractor made ready for inference (eval, frozen, TorchScript)
        if self._never_run(bound) or _unwrapped_at_once(node, function, bound) or _local_never_run(node, function, bound):
            return  # its forward never runs: nothing is scattered, nothing gathered
        if self._kept_only_for_calls_without_grad(bound, function):
            return  # an evaluation: each batch's outputs are gathered, used and freed, no gradients
        if name == "DataParallel" and _reads_what_the_wrapper_lacks(node, function, bound, self._checker.source):
            return  # self.model.encoder right after wrapping: AttributeError, no step runs through it
            # (the functional data_parallel(module, x) returns the outputs: no wrapper to read)
        if self._holds_no_parameters(wrapped):
            return  # a loss or metric without parameters, wrapped to spread its work: no replicas of weights,
            # no gradients, its inputs already where the model's outputs were gathered
        devices = _device_ids(node, function, self.facts.module_scope)
        if devices == "one":
            return  # device_ids=[0]: one device, DataParallel only calls the module
        if any(SEES_ONE_GPU in scope.effects for scope in (self.facts.module_scope, function)):
            return  # CUDA_VISIBLE_DEVICES = "0" first: the program sees one GPU, DataParallel only calls the module
        cls = self.facts.instance_class(wrapped) if wrapped is not None else None
        forward = self.facts.find_method(cls, "forward") if cls is not None else None
        if forward is not None and any(_is_loss(callee) for callee in self.facts.calls_made(forward, depth=1)) \
                or forward is None and self._project_forward_computes_loss(wrapped) \
                or _output_backpropagated(function, bound):
            # The documented fix for the imbalance: each replica computes its own loss.
            self.report(
                node,
                f"{_call_text(node, name)} replicates the model onto every GPU each step, from one process",
                help="use DistributedDataParallel, one process per GPU (torchrun --nproc-per-node N train.py): "
                     "it is faster even with the loss in forward",
                needs_grad=False, severity="info",
            )
            return
        if devices is not None:  # device_ids=gpu_ids, a parameter whose default names one device
            self.report(
                node,
                f"{_call_text(node, name)} scatters from GPU 0 if {devices} lists several GPUs (by default one)",
                help="use torch.nn.parallel.DistributedDataParallel with one process per GPU (torchrun "
                     "--nproc-per-node N train.py) for more than one GPU",
                needs_grad=False, severity="info",
            )
            return
        self.report(
            node,
            f"{_call_text(node, name)} scatters each batch from GPU 0 and gathers the outputs there: it fills first",
            help="use torch.nn.parallel.DistributedDataParallel with one process per GPU (torchrun "
                 "--nproc-per-node N train.py): each GPU then holds only its share, and the step is faster",
            needs_grad=False,
        )

    VALID = [
        # one device: DataParallel only calls the module
        """
import torch
from torch import nn
def build(net, loader, optimizer):
    model = nn.DataParallel(net.cuda(), device_ids=[0])
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # a wrapper built only to read a state dict saved from one, unwrapped at once
        """
import torch
def initialize_flow(build, path, device):
    model = torch.nn.DataParallel(build())
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model = model.module
    model.to(device)
    return model
""",
        # a moving-average copy frozen by a loop over its parameters, then wrapped for sampling
        """
from copy import deepcopy

import torch.nn as nn


class GAN:
    def __init__(self, netG, device):
        self.netG = netG
        self.device = device

    def build_avg_generator(self):
        self.avgG = deepcopy(self.netG)
        for param in self.avgG.parameters():
            param.requires_grad = False
        self.avgG = nn.DataParallel(self.avgG)
        self.avgG.to(self.device)

    def step(self, z, optimizer):
        loss = self.netG(z).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def sample(self, z):
        return self.avgG(z).cpu()
""",
        # a sampler wrapped in a function that trains another model, but only ever called under no_grad
        """
import torch

def main(trainer, sampler, loader, optimizer, steps):
    trainer = trainer.cuda()
    sampler = torch.nn.DataParallel(sampler)
    for step, x in zip(range(steps), loader):
        loss = trainer(x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            with torch.no_grad():
                print(sampler(x[:8]).shape)
""",
        # a copy wrapped as the model it copies was: the caller chose DataParallel
        """
import copy
from torch import nn

def ema_copy(module):
    inner = module.module if isinstance(module, nn.DataParallel) else module
    module_copy = copy.deepcopy(inner)
    if isinstance(module, nn.DataParallel):
        module_copy = nn.DataParallel(module_copy)
    return module_copy
""",
        # trained first without it; wrapped afterwards only for a test pass, through an evaluation
        # function that sets eval mode and no_grad itself
        """
import torch

def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(model(x).argmax(1).eq(y).sum().item() for x, y in loader)

def main(model, train_loader, test_loader, optimizer, n_gpu):
    for x, y in train_loader:
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    for checkpoint in ["best-f1"]:
        model.load_state_dict(torch.load(checkpoint, map_location="cpu"))
        if n_gpu > 1:
            model = torch.nn.DataParallel(model)
        print(evaluate(model, test_loader))
""",
        # DataParallel in the branch that runs without a GPU: it wraps nothing there
        """
import torch

def setup(model):
    if torch.cuda.is_available():
        return model.cuda()
    else:
        return torch.nn.DataParallel(model)
""",
        # the functional form called with grad off: samples for a metric, nothing trained through it
        """
import torch
from torch import nn

def sample(G, z, y, parallel):
    with torch.no_grad():
        if parallel:
            return nn.parallel.data_parallel(G, (z, y))
        return G(z, y)
""",
        # the wrapper put in eval mode as it is made, or right after, in a script that trains nothing
        """
import torch
from torch import nn
inception = nn.DataParallel(load_inception()).eval().to("cuda")
g = nn.DataParallel(Generator().cuda())
g.eval()
with torch.no_grad():
    feats = [inception(g(torch.randn(64, 512, device="cuda"))).cpu() for _ in range(100)]
""",
        # a feature extractor made ready for inference (TorchScript, eval mode), wrapped and handed
        # to the caller: no loss, no gradients, no optimizer state gather on the first GPU
        """
import torch
def load_i3d_pretrained(path, device):
    i3d = torch.jit.load(path).eval().to(device)
    i3d = torch.nn.DataParallel(i3d)
    return i3d
""",
        """
import torch
def load_feature_extractor(build, device):
    net = build().to(device)
    net.eval()
    net.requires_grad_(False)
    return torch.nn.DataParallel(net)
""",
        # kept on the object but never called: only other methods of the model are used through
        # it, which DataParallel does not split (nothing is scattered or gathered)
        """
import torch
from transformers import AutoModel
class Encoder:
    def __init__(self, name):
        self.model = AutoModel.from_pretrained(name).cuda()
        if torch.cuda.device_count() > 1:
            self.model = torch.nn.DataParallel(self.model)
    @torch.no_grad()
    def encode(self, inputs):
        self.model.eval()
        return self.model.get_text_features(**inputs).cpu()
""",
        # inference only, where it is made: each batch's outputs gathered, moved to the CPU, freed
        """
import torch
from torch import nn

def embed(model, loader):
    model = nn.DataParallel(model.cuda()).eval()
    embeddings = []
    with torch.no_grad():
        for x in loader:
            embeddings.append(model(x.cuda()).cpu())
    return torch.cat(embeddings)
""",
        # DistributedDataParallel, one process per GPU
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def setup(model):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return DDP(model.cuda(local_rank), device_ids=[local_rank])
""",
        # unwrapping a model the user may have wrapped: isinstance checks and .module
        """
import torch
from torch import nn
from torch.nn.parallel import DataParallel, DistributedDataParallel

def unwrap_model(model: nn.Module) -> nn.Module:
    if isinstance(model, (DataParallel, DistributedDataParallel)):
        return model.module
    return model

def save(model, path):
    to_save = model.module if isinstance(model, nn.DataParallel) else model
    torch.save(to_save.state_dict(), path)
""",
    ]

    VALID += [
        # a framework offering both: DataParallel only when launched without torchrun
        """
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

def auto_model(model, world_size, local_rank):
    if world_size > 1:
        return DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
    if torch.cuda.device_count() > 1:
        return nn.DataParallel(model.cuda())
    return model
""",
        # a framework's "dp" strategy
        """
from torch.nn import DataParallel
from lightning.fabric.strategies.parallel import ParallelStrategy

class DataParallelStrategy(ParallelStrategy):
    def setup_module(self, module):
        return DataParallel(module=module, device_ids=self.parallel_devices)
""",
    ]

    INVALID = [
        # device_ids from a parameter whose default names one GPU: said less (info)
        Invalid("""
import torch
from torch import nn
class DistModel:
    def initialize(self, net, gpu_ids=[0]):
        self.net = nn.DataParallel(net.to(gpu_ids[0]), device_ids=gpu_ids)
    def forward(self, a, b):
        return self.net(a, b)
""", line=6),
        # ... the trained wrapper itself is still reported (line 5)
        Invalid("""
import torch

def main(trainer, sampler, loader, optimizer, steps):
    trainer = torch.nn.DataParallel(trainer)
    sampler = torch.nn.DataParallel(sampler)
    for step, x in zip(range(steps), loader):
        loss = trainer(x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            with torch.no_grad():
                print(sampler(x[:8]).shape)
""", line=5),
        # wrapped for evaluation, but the loop around it trains the same name on the next pass
        Invalid("""
import torch

def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(model(x).argmax(1).eq(y).sum().item() for x, y in loader)

def main(model, train_loader, test_loader, optimizer):
    for epoch in range(10):
        model.train()
        for x, y in train_loader:
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        model = torch.nn.DataParallel(model)
        print(evaluate(model, test_loader))
""", line=15),
        # wrapped, then trained later in the same function
        Invalid("""
import torch

def main(model, train_loader, optimizer):
    model = torch.nn.DataParallel(model)
    for x, y in train_loader:
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""", line=5),
        # put in eval mode for validation, but handed to a function that trains it
        Invalid("""
import torch
def train_one_epoch(loader, model, optimizer):
    model.train()
    for x, y in loader:
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

model = torch.nn.DataParallel(net).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    train_one_epoch(train_loader, model, optimizer)
    model.eval()
""", line=9),
        # the loss inside the wrapped module's forward: said less (info)
        Invalid("""
import torch
from torch import nn

class FullModel(nn.Module):
    def __init__(self, model, criterion):
        super().__init__()
        self.model = model
        self.criterion = criterion

    def forward(self, inputs, targets):
        return self.criterion(self.model(inputs), targets).unsqueeze(0)

def build(model, criterion):
    return nn.DataParallel(FullModel(model, criterion).cuda())
""", line=15),
        Invalid("""
import torch
from torch import nn

def build(model: nn.Module) -> nn.Module:
    model = model.cuda()
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    return model
""", line=8),
        # aliases: torch.nn.parallel and a from-import under another name
        Invalid("""
import torch
from torch.nn.parallel import DataParallel as DP

class Trainer:
    def __init__(self, model, gpus):
        self.model = DP(model.to("cuda:0"), device_ids=gpus, output_device=0)
""", line=7),
        Invalid("""
import torch
def forward_all(module, inputs, gpus):
    return torch.nn.parallel.data_parallel(module, inputs, device_ids=gpus)
""", line=4),
    ]


@dataclass(frozen=True)
class _Place:
    """Where in its function a wrapper is made: how many calls, training sites (backward passes,
    optimizer steps) and mode changes were walked before it, and the loops around it, outermost
    first. What comes later, or is in the outermost of those loops, runs after it."""
    calls_seen: int
    training_sites: int
    mode_changes: int
    loops: list


def _device_ids(node: cst.Call, function, module_scope) -> str | None:
    """``device_ids=[0]`` (a list of one written out, also ``[i for i in range(len(gpus))]`` for a
    ``gpus = [0]`` of the function or the module): "one"; ``device_ids=gpu_ids`` where ``gpu_ids``
    is a parameter of the function defaulting to a list of one: its name; None otherwise."""
    value = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "device_ids"),
                 None)
    if value is None and len(node.args) > 1 and node.args[1].keyword is None:
        value = node.args[1].value
    if value is None:
        return None
    if isinstance(value, (cst.List, cst.Tuple)):
        return "one" if len(value.elements) == 1 else None
    if 1 in (literal_length(value, function), literal_length(value, module_scope)):
        return "one"
    if isinstance(value, cst.Subscript) and _one_element_slice(value):
        return "one"  # device_ids=opt.gpu_ids[0:1]
    if isinstance(value, cst.Name) and isinstance(function.node, cst.FunctionDef) \
            and not function.stored_values.get(value.value):
        for param in (*function.node.params.params, *function.node.params.kwonly_params):
            if param.name.value == value.value:
                default = param.default
                if isinstance(default, (cst.List, cst.Tuple)) and len(default.elements) == 1:
                    return value.value
    return None


def _one_element_slice(value: cst.Subscript) -> bool:
    """``ids[0:1]``, ``ids[:1]``, ``ids[k:k + 1]``: a slice of at most one element."""
    if len(value.slice) != 1 or not isinstance(value.slice[0].slice, cst.Slice):
        return False
    part = value.slice[0].slice
    if part.step is not None:
        return False
    lower = part.lower.evaluated_value if isinstance(part.lower, cst.Integer) else 0 if part.lower is None else None
    upper = part.upper.evaluated_value if isinstance(part.upper, cst.Integer) else None
    if lower is not None and upper is not None:
        return 0 <= lower and upper - lower <= 1
    upper_node = part.upper
    return isinstance(upper_node, cst.BinaryOperation) and isinstance(upper_node.operator, cst.Add) \
        and isinstance(upper_node.right, cst.Integer) and upper_node.right.evaluated_value == 1 \
        and part.lower is not None and cst.Module(body=()).code_for_node(upper_node.left) \
        == cst.Module(body=()).code_for_node(part.lower)


def _last_change(changes, name: str) -> str | None:
    """The mode the last of ``changes`` to ``name`` leaves it in (REBOUND: another object)."""
    return next((change.mode for change in reversed(changes) if change.target == name), None)


def _is_loss(callee: str) -> bool:
    """A callee name that computes a loss: ``self.criterion``, ``self.loss_fn``, ``F.cross_entropy``."""
    last = callee.rsplit(".", 1)[-1].lower()
    if "loss" in last or "criterion" in last:
        return True
    return callee.startswith("torch.nn.functional.") and any(word in last for word in FUNCTIONAL_LOSS_WORDS)


def _call_text(node: cst.Call, name: str) -> str:
    """``DataParallel(model)``: the call as the message names it, with what it wraps."""
    if not node.args:
        return f"{name}()"
    wrapped = node.args[0].value
    while (isinstance(wrapped, cst.Call) and isinstance(wrapped.func, cst.Attribute)
           and wrapped.func.attr.value in ("to", "cuda")):
        wrapped = wrapped.func.value  # DataParallel(model.cuda()) wraps the model
    text = source_of(wrapped, 1000)
    if isinstance(wrapped, cst.Call) or len(text) > 20:
        callee = dotted_name(wrapped.func) if isinstance(wrapped, cst.Call) else None
        text = f"{callee}(...)" if callee is not None and len(callee) <= 15 else source_of(wrapped, 20)
    return f"{name}({text})"


def _output_backpropagated(function, bound: frozenset[str]) -> bool:
    """Does this function backpropagate what the wrapper returns, as it comes out (``loss, acc =
    model(a, v)`` ... ``scaler.scale(loss.sum()).backward()``)? Then ``forward`` computes the
    loss, whatever the class: only the replicas' losses are gathered. A criterion applied to the
    output (``loss = criterion(model(x), y)``) binds another name."""
    names = {name for name in bound if "." not in name}
    backpropagated = getattr(function, "backward_names", None)
    if not names or not backpropagated or not isinstance(getattr(function, "node", None), cst.FunctionDef):
        return False
    for part in descendants(function.node.body):
        if isinstance(part, cst.Assign) and isinstance(part.value, cst.Call) \
                and dotted_name(part.value.func) in names:
            results = {element for target in part.targets for element in names_in(target.target)}
            if results & backpropagated:
                return True
    return False


def _unwrapped_at_once(call: cst.Call, function, bound: frozenset[str]) -> bool:
    """``model = nn.DataParallel(RAFT(args)); model.load_state_dict(state); model = model.module``:
    the wrapper exists only to read a ``module.``-prefixed state dict and is unwrapped in the same
    block before anything calls it or is handed it: its forward never runs."""
    names = {name for name in bound if "." not in name}
    if not names or not isinstance(getattr(function, "node", None), cst.FunctionDef):
        return False
    for block in _blocks(function.node.body):
        block = list(block)
        for index, statement in enumerate(block):
            if not any(part is call for part in descendants(statement)):
                continue
            for later in block[index + 1:]:
                if isinstance(later, cst.SimpleStatementLine) and any(
                        isinstance(part, cst.Assign) and dotted_name(part.value) in {f"{n}.module" for n in names}
                        for part in later.body):
                    return True
                for part in descendants(later):
                    if isinstance(part, cst.Call) and (
                            (dotted_name(part.func) or "") in names | {f"{n}.forward" for n in names}
                            or any(dotted_name(arg.value) in names for arg in part.args)):
                        return False  # run, or handed on, before it is unwrapped
                if not isinstance(later, cst.SimpleStatementLine):
                    return False  # a branch or a loop in between: not read here
            return False
    return False


# What a DataParallel wrapper answers itself (nn.Module's and DataParallel's own attributes);
# any other attribute of the wrapped model (``encoder``, ``output_dim``) raises AttributeError on it.
_WRAPPER_ATTRIBUTES = frozenset({
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu",
    "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward", "gather", "get_buffer",
    "get_extra_state", "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia",
    "named_buffers", "named_children", "named_modules", "named_parameters", "parallel_apply", "parameters",
    "register_backward_hook", "register_buffer", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_module", "register_parameter", "register_state_dict_post_hook",
    "register_state_dict_pre_hook", "replicate", "requires_grad_", "scatter", "set_extra_state", "set_submodule",
    "share_memory", "state_dict", "to", "to_empty", "train", "type", "xpu", "zero_grad", "module", "device_ids",
    "output_device", "dim", "src_device_obj", "training",
})


def _reads_what_the_wrapper_lacks(call: cst.Call, function, bound: frozenset[str], source: str) -> bool:
    """Does the function, after wrapping, read an attribute of the wrapped model through the
    wrapper on every path (``self.model = nn.DataParallel(self.model)`` then, whichever branch
    runs, ``self.model.encoder.parameters()``)? DataParallel has no such attribute: the program
    stops there with AttributeError whenever it wraps, before any step. Not when the code sets
    the attribute on the wrapper, nor inside ``try``."""
    targets = {name for name in bound if not any(other.startswith(name + ".") for other in bound)}  # not ``self``
    if len(targets) != 1 or not isinstance(getattr(function, "node", None), cst.FunctionDef):
        return False
    statements = block_statements(function.node.body)
    after = _statements_after(statements, call)
    if after is None:
        return False
    # this wrapper, or one made just before it in the same block (``self.generator =
    # DataParallel(...)`` then ``self.discriminator = DataParallel(...)``): the program stops at
    # the first read, whichever wrapper it reads
    for target in (next(iter(targets)), *_wrapped_before(statements, call)):
        if not re.search(rf"{re.escape(target)}\.\w+\s*=[^=]", source) and _block_reads_missing(after, target):
            return True  # (not when attributes are put on the wrapper)
    return False


def _wrapped_before(statements: Sequence[cst.CSTNode], call: cst.Call) -> list[str]:
    """The names bound to ``DataParallel(...)`` by the statements before the one holding ``call``
    in its block and in each block around it (they run whenever it runs)."""
    for index, statement in enumerate(statements):
        if not any(part is call for part in descendants(statement)):
            continue
        names = []
        for earlier in statements[:index]:
            for small in earlier.body if isinstance(earlier, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call) \
                        and (dotted_name(small.value.func) or "").endswith("DataParallel"):
                    name = dotted_name(small.targets[0].target)
                    if name is not None:
                        names.append(name)
        if not isinstance(statement, cst.SimpleStatementLine):
            for block in nested_blocks(statement):
                if any(part is call for inner in block for part in descendants(inner)):
                    names += _wrapped_before(block, call)
        return names
    return []


def _statements_after(statements: Sequence[cst.CSTNode], call: cst.Call) -> list[cst.CSTNode] | None:
    """The statements that run after the one holding ``call`` whenever it runs: the rest of its
    block, then the rest of each enclosing block (a branch, a loop, a ``with``); None when the
    call is in a ``try``, a nested definition or is not found."""
    for index, statement in enumerate(statements):
        if not any(part is call for part in descendants(statement)):
            continue
        rest = list(statements[index + 1:])
        if isinstance(statement, cst.SimpleStatementLine):
            return rest
        if not isinstance(statement, (cst.If, cst.For, cst.While, cst.With)):
            return None  # a try (its handlers may catch), a nested definition
        for block in nested_blocks(statement):
            found = _statements_after(block, call)
            if found is not None:
                return found + rest
        return None
    return None


def _block_reads_missing(block: list[cst.CSTNode], target: str) -> bool:
    for statement in block:
        if _reads_missing(statement, target):
            return True
        if _may_leave_or_rebind(statement, target):
            return False
    return False


def _reads_missing(statement: cst.CSTNode, target: str) -> bool:
    """Does the statement, whenever it runs, read ``target.<attribute DataParallel lacks>``?"""
    if isinstance(statement, cst.SimpleStatementLine):
        return any(_evaluated_reads(small, target) for small in statement.body)
    if isinstance(statement, cst.If):
        if _evaluated_reads(statement.test, target):
            return True
        orelse = statement.orelse
        while isinstance(orelse, cst.If):
            orelse = orelse.orelse
        return orelse is not None and all(_block_reads_missing(list(block), target)  # every branch, an else too
                                          for block in nested_blocks(statement))
    if isinstance(statement, cst.For):
        return _evaluated_reads(statement.iter, target)
    if isinstance(statement, cst.While):
        return _evaluated_reads(statement.test, target)
    if isinstance(statement, cst.With):
        return any(_evaluated_reads(item.item, target) for item in statement.items) or _block_reads_missing(
            list(block_statements(statement.body)), target)
    return False


def _evaluated_reads(node: cst.CSTNode, target: str) -> bool:
    """A read of ``target.<missing>`` among what evaluating ``node`` certainly evaluates (not a
    lambda's body, a comprehension's element, the right of ``and``/``or``, a branch of ``a if c else b``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Attribute) and current.attr.value not in _WRAPPER_ATTRIBUTES \
                and dotted_name(current.value) == target:
            return True
        if isinstance(current, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(current, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            stack.append(current.for_in.iter)
            continue
        if isinstance(current, cst.BooleanOperation):
            stack.append(current.left)
            continue
        if isinstance(current, cst.IfExp):
            stack.append(current.test)
            continue
        stack.extend(current.children)
    return False


def _may_leave_or_rebind(statement: cst.CSTNode, target: str) -> bool:
    """Can the rest of the block be skipped after ``statement`` (a ``return``, ``raise``,
    ``break``, ``continue`` in it, a ``try``), or does it rebind ``target``?"""
    for part in descendants(statement):
        if isinstance(part, (cst.Return, cst.Raise, cst.Break, cst.Continue, cst.Try)):
            return True
        if isinstance(part, cst.Assign) and any(dotted_name(t.target) == target for t in part.targets) \
                and dotted_name(without_self_returning_calls(part.value)) != target:
            return True  # (``self.model = self.model.cuda()`` keeps the wrapper)
        if isinstance(part, (cst.AugAssign, cst.AnnAssign)) and dotted_name(part.target) == target:
            return True
        if isinstance(part, cst.Del):
            return True
    return False


def _local_never_run(call: cst.Call, function, bound: frozenset[str]) -> bool:
    """A local wrapper its function never calls, hands on, returns, yields or stores elsewhere, only
    reads through (``audio_model.load_state_dict(sd); self.v = audio_model.module.v``: the
    wrapper reads a ``module.``-prefixed state dict): its forward never runs."""
    names = {name for name in bound if "." not in name}
    if not names or names != set(bound) or not isinstance(getattr(function, "node", None), cst.FunctionDef):
        return False
    for part in descendants(function.node):
        if part is call:
            continue
        if isinstance(part, cst.Call) and (
                (dotted_name(part.func) or "") in names | {f"{n}.forward" for n in names}
                or any(dotted_name(arg.value) in names for arg in part.args)):
            return False  # run, or handed on
        if isinstance(part, (cst.Return, cst.Yield)) and part.value is not None and names & names_in(part.value):
            return False
        if isinstance(part, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and part.value is not None \
                and _read_whole(part.value, names):
            return False  # aliased: model2 = model, self.net = model, pair = (model, opt)
        if isinstance(part, (cst.List, cst.Tuple, cst.Dict, cst.Set)) and _read_whole(part, names):
            return False
    return True


def _read_whole(value: cst.CSTNode, names: set[str]) -> bool:
    """Does ``value`` hold one of ``names`` itself (not an attribute of it)?"""
    if dotted_name(value) in names:
        return True
    elements = [element.value for element in value.elements] if isinstance(value, (cst.List, cst.Tuple, cst.Set)) \
        else [element.value for element in value.elements if isinstance(element, cst.DictElement)] \
        if isinstance(value, cst.Dict) else []
    return any(_read_whole(element, names) for element in elements)


def _blocks(body: cst.BaseSuite) -> Iterator[Sequence[cst.BaseStatement]]:
    """The statement lists of ``body`` and of the compound statements in it (not nested defs)."""
    pending = [block_statements(body)]
    while pending:
        statements = pending.pop()
        yield statements
        for statement in statements:
            if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                pending.extend(nested_blocks(statement))
