"""ML201 grad-enabled-inference: a forward pass whose graph is never needed runs with autograd on.

Autograd then records the forward pass and keeps every activation it saved for a backward
pass that never comes: evaluation uses several times the memory it needs, and a loop that
also collects its outputs keeps every batch's graph until the list dies. Five kinds of
evidence say a forward pass is inference, each read from the code's structure:

- **eval mode**: the module was put in ``eval()`` in the same function, nothing computed
  from the call is backpropagated (saliency maps, adversarial examples, Grad-CAM and training
  in eval mode on purpose backpropagate it), and no input is made to require grad (a model
  that differentiates its inputs itself, as interatomic potentials do for forces);
- **an inference loop**: a loop with no backward pass and no optimizer step collects the
  module's outputs, with their graphs, into a list (or a running tensor) that outlives the
  iteration and never reaches a backward pass, a ``return`` or another function; returned
  too, when the module is built in the function and never leaves it (no optimizer, no call
  and no caller can train it);
- **a cached prediction**: an object (not a module) caches the output in a ``cached_property``
  or on ``self`` in a method returning it, and nothing in its class backpropagates;
- **a path that never backpropagates**: a train/eval loop whose backward pass is under a
  branch on a parameter, called in view with a value that makes every such branch false
  (``run_epoch(..., is_train=False)``) and grad on;
- **a model that is not trained** (a distillation teacher, an EMA/target network, a reference
  policy) runs inside a training step: it is in no optimizer built next to it, its name says
  teacher/target/EMA/reference, or its output is only ever a loss's target.

Quiet where the callers choose the grad mode: a module's ``forward`` that puts an inner model in
eval mode and returns its output. Quiet where no memory is held past the statement: a dry run whose result is dropped at once
(before tracing or export), a smoke test on made-up inputs (``m(torch.randn(2, 8))`` outside a loop, its
output neither collected nor returned, or a ``__main__`` timing loop whose outputs nobody reads), and forward passes in test files unless their outputs are
collected over a loop or returned. Grad may be off where ``set_grad_enabled(flag)`` rules: not reported.
"""

from __future__ import annotations

import builtins
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath

import libcst as cst

from memlint.static.engine import is_optimizer_step
from memlint.static.facts import (
    NOT_A_LITERAL, AUTOGRAD_FUNCTIONS, FUNCTIONAL_LOSS_WORDS, GRAPH_ENDING_FUNCTIONS, GRAPH_ENDING_METHODS, FunctionScope, Graph, GradMode, Kind, Loop, descendants, dotted_name, expression_children,
    all_parameters, argument_for, literal_value, names_in, reaches, without_comments, without_self_returning_calls,
)
from memlint.static.fixes import no_grad_fix
from memlint.static.outline import only_called_by_name
from memlint.static.rule import Invalid, Rule
from memlint.static.summaries import BACKWARD, MODULE_CALL, OPTIMIZER_STEP
from memlint.static.tensor_api import PARAMETERLESS_LAYERS

_AFFINE_LAYERS = frozenset({"torch.nn.Linear", "torch.nn.Embedding"})


# Words of a model's name that say it is not the one being trained.
_FROZEN_ROLE_WORDS = frozenset({"teacher", "target", "tgt", "ema", "momentum", "reference", "ref", "frozen"})
_ROLE_NAMES = {"teacher": "a teacher", "target": "a target", "tgt": "a target", "ema": "an EMA",
               "momentum": "a momentum", "reference": "a reference", "ref": "a reference", "frozen": "a frozen"}
# A loss function or criterion by its name (not "critic": a model).
_LOSS_NAME = re.compile(r"loss|criterion|(?:^|_)crit(?:$|_)", re.IGNORECASE)
# Optimizer classes, by the last part of their name (torch.optim.* is recognised as a whole).
_OPTIMIZER_CLASSES = frozenset({
    "SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Rprop", "ASGD", "NAdam", "RAdam",
    "LBFGS", "SparseAdam", "Adafactor", "Lion", "LAMB", "Lamb", "FusedAdam", "FusedLAMB", "FusedSGD",
    "AdamW8bit", "Adam8bit", "PagedAdamW", "PagedAdamW8bit", "SophiaG", "Muon", "Shampoo", "AdaBelief",
    "Ranger", "NovoGrad", "Novograd", "Adan", "DeepSpeedCPUAdam", "ZeroRedundancyOptimizer", "Prodigy", "LARS",
})
# torch functions that make a tensor from sizes or numbers alone: made-up inputs.
_TORCH_FACTORIES = frozenset(f"torch.{name}" for name in (
    "randn", "rand", "randint", "zeros", "ones", "full", "empty", "arange", "linspace", "tensor", "eye",
    "randn_like", "rand_like", "zeros_like", "ones_like", "full_like", "randperm"))
# torch functions that read data from somewhere (a file, the hub, shared memory).
_READS_DATA = re.compile(r"load|hub|from_file|from_buffer|frombuffer|from_dlpack|storage")
# Legacy typed constructors: given sizes (``torch.FloatTensor(1, 3, 224, 224)``), a tensor of that shape.
_LEGACY_CONSTRUCTORS = frozenset(f"torch.{name}" for name in (
    "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor",
    "cuda.FloatTensor", "cuda.DoubleTensor", "cuda.HalfTensor", "cuda.LongTensor"))
# Methods that collect a value into the container they are called on.
_COLLECTING_METHODS = frozenset({"append", "extend", "insert", "appendleft", "add"})
# Calls that take a container and hand back something computed from it (followed by
# derivation), or only read it: passing a container to them does not hand it over.
_READING_CALLS = frozenset({"len", "print", "list", "tuple", "sorted", "reversed", "enumerate", "zip", "sum",
                            "max", "min", "iter", "isinstance", "str", "repr", "range"})
_TRAINING_STEP_METHODS = frozenset({"training_step", "train_step", "compute_loss"})


def _values_bound(function: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """Every value ``name`` is bound to by an assignment in ``function`` (``a, b = f(x), g(y)``
    binds ``a`` to ``f(x)``); a value that cannot be told (``a, b = pair``) ends the list with
    ``function`` itself, which no caller takes for a construction."""
    values: list[cst.BaseExpression] = []
    for node in descendants(function):
        if not isinstance(node, cst.Assign):
            continue
        for target in node.targets:
            if isinstance(target.target, cst.Name) and target.target.value == name:
                values.append(node.value)
            elif isinstance(target.target, (cst.Tuple, cst.List)):
                elements = target.target.elements
                for index, element in enumerate(elements):
                    if isinstance(element.value, cst.Name) and element.value.value == name:
                        if isinstance(node.value, (cst.Tuple, cst.List)) and len(node.value.elements) == len(elements):
                            values.append(node.value.elements[index].value)
                        else:
                            values.append(function)
    return values


def _parameter_names(function: cst.CSTNode) -> set[str]:
    parameters = getattr(function, "params", None)
    return {p.name.value for p in all_parameters(parameters)} if isinstance(parameters, cst.Parameters) else set()


@dataclass
class _ModuleCall:
    target: str  # "model", "self.teacher"
    node: cst.Call
    function: FunctionScope
    results: frozenset[str]  # the names the call's result is bound to
    mode: str | None  # "eval" | "train" | "frozen" | None: the last mode change seen in this function
    input_carries: bool  # an argument carries a graph (a generator's output, features)
    loops: tuple[Loop, ...]  # the loops of the function around the call, outermost first
    discarded: bool  # the result is dropped at the end of its statement (``model(x)``, ``_ = model(x)``)
    scope: str  # where the name lives: "self" (an attribute), "local", "global"
    frozen: bool  # requires_grad_(False) seen so far in the module (in any function: DINO freezes in main)
    built_here: bool = False  # a local name bound to a module this function constructs or loads
    # a method of the module defined in view (``self.system.simulate(x0, steps)``): these run it, if
    # their summaries say they run a module and return its graph (see _runs_module_method)
    methods: tuple[cst.FunctionDef, ...] = ()
    # every argument made up (see _made_up_inputs), read where the call is, with the bindings the
    # walk has seen so far: ``input`` is the random tensor here even if rebound to real data below
    made_up: bool = False
    input_from: frozenset[str] = frozenset()  # the names an argument of unknown graph is computed from
    order: int = 0  # the call's place in the walk (see GradEnabledInference._order)
    volatile: bool = False  # fed a Variable(..., volatile=True) (see Facts.fed_volatile)
    mode_change: object = None  # the ModeChange ``mode`` comes from (another function's: the constructor's)
    mode_from_callers: bool = False  # ``mode`` is the one every caller hands the parameter in with


_SCALAR_DATA_READ = re.compile(r"\.data(?:\.cpu\(\))?(?:\.numpy\(\))?\[0\]")  # loss.data[0], loss.data.cpu().numpy()[0]
_NEEDS_0_4 = re.compile(r"\.item\(\)|\bno_grad\b")


@dataclass
class _Collection:
    container: str
    loop: Loop
    call_ids: frozenset[int]  # module calls inside the collected value
    names: frozenset[str]  # names the collected value is computed from


@dataclass
class _LossCall:
    input_names: frozenset[str]
    input_calls: frozenset[int]
    target_names: frozenset[str]
    target_calls: frozenset[int]


@dataclass
class _Optimizer:
    function: FunctionScope
    owners: frozenset[str]  # modules whose parameters it holds ("student", "self", "self.head")
    resolved: bool  # every parameter source was read; otherwise ``mentioned`` says what it may hold
    mentioned: frozenset[str]


@dataclass(frozen=True)
class _Condition:
    """An ``if`` the walk is inside: its test, and whether in its ``else`` branch."""

    test: cst.BaseExpression
    negated: bool


@dataclass
class _FunctionRecord:
    calls: list[_ModuleCall] = field(default_factory=list)
    collections: list[_Collection] = field(default_factory=list)
    losses: list[_LossCall] = field(default_factory=list)
    handed_out: set[str] = field(default_factory=set)  # names passed to other functions or stored on objects
    returned: set[str] = field(default_factory=set)  # names returned in a value that may keep a graph
    returned_calls: set[int] = field(default_factory=set)  # calls inside such a value
    calls_in_returns: set[int] = field(default_factory=set)  # calls inside any returned value, detached or not
    # names that leave the function as objects (passed to a call, returned, stored, aliased):
    # a module among them may be trained elsewhere
    escaped: set[str] = field(default_factory=set)
    # self.x = value with a graph: (attribute, names the value reads, calls inside it)
    cached: list[tuple[str, frozenset[str], frozenset[int]]] = field(default_factory=list)
    # names passed to a function that is not torch's nor a builtin (it may backpropagate them)
    handed_to_functions: set[str] = field(default_factory=set)
    # the same, only arguments that may carry a graph (not ``generated`` of argmax'd tokens)
    handed_with_graph: set[str] = field(default_factory=set)
    handed_calls: set[int] = field(default_factory=set)  # id()s of calls inside such arguments
    # names handed to a call together with an optimizer built here (``loss_scaler(loss, optimizer,
    # parameters=model.parameters())``, timm's NativeScaler): that call may backpropagate them
    handed_with_optimizer: set[str] = field(default_factory=set)
    # the branch conditions of every backward pass or optimizer step here, and of every call of
    # a function of this module that may run one (see _path_without_backward)
    # (branch paths as facts.branch_path holds them: read into _Conditions when a decision needs them)
    backward_paths: list[tuple] = field(default_factory=list)
    callee_paths: list[tuple[list[cst.FunctionDef], tuple]] = field(default_factory=list)
    # calls of functions of this module that run a module and return its output: (call, callees, bound, results, conditions)
    helper_forwards: list[tuple[cst.Call, list[cst.FunctionDef], bool, frozenset[str], tuple]] = \
        field(default_factory=list)
    # each backward pass or optimizer step: (its place in the walk, id()s of the loop nodes around
    # it, its branch path)
    backward_places: list[tuple[int, frozenset[int], tuple]] = field(default_factory=list)
    # each assignment: (the names it binds, its place in the walk, its value (and for ``x += v`` the
    # name it also reads), its branch path); what the value reads is read only when asked
    bindings: list[tuple[frozenset[str], int, tuple[cst.BaseExpression, str | None], tuple]] = \
        field(default_factory=list)


def _converts_itself(value: cst.BaseExpression, name: str) -> bool:
    """``x.half()``, ``x.to(device)``: ``name``'s own value, converted (what it held before decides)."""
    inner = without_self_returning_calls(value)
    return inner is not value and isinstance(inner, cst.Name) and inner.value == name


class GradEnabledInference(Rule):
    code = "ML201"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._records: dict[int, _FunctionRecord] = {}
        self._optimizers: list[_Optimizer] = []
        self._frozen_by_class: dict[int, set[str]] = {}  # id() of a ClassInfo -> see _frozen_in_class
        self._volatile_verdict: bool | None = None  # see _volatile_ignored
        self._mentions_volatile = "volatile" in checker.source  # Variable(..., volatile=True) may feed a call
        self._in_test_file = _is_test_file(checker.path)
        self._ifs: dict[int, tuple[cst.If, FunctionScope]] = {}  # id() -> the if, the function it is in
        # calls of this module's functions: id(def) -> (call, bound, grad off at the call, caller)
        self._calls_of: dict[int, list[tuple[cst.Call, bool, bool, FunctionScope]]] = {}
        self._call_results: dict[int, frozenset[str]] = {}  # id() of such a call -> the names it is bound to
        self._site_paths: dict[int, tuple] = {}  # id() of such a call -> the branch path it is on
        # id() of such a call -> the mode each argument that is a name has there (``model`` after
        # ``model.eval()``): see _mode_every_caller_hands_in
        self._argument_modes: dict[int, dict[str, object]] = {}
        self._call_paths: dict[int, tuple] = {}  # id() of a module call -> the branch path it is on
        self._module_trains: bool | None = None  # a backward pass or an optimizer step anywhere here
        # The walk's order: a counter bumped at every call, assignment and loop, so that what runs
        # before what in a function (and in an iteration of a loop) can be told (_killed_before_backward).
        self._order = 0
        self._loop_starts: dict[int, tuple[int, int]] = {}  # id() of a loop node -> (first, last) place in it

    def _record(self) -> _FunctionRecord:
        function = self.facts.function
        record = self._records.get(id(function))
        if record is None:
            record = self._records[id(function)] = _FunctionRecord()
        return record

    # ----- what the walk records ------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self._order += 1
        facts = self.facts
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if method in _COLLECTING_METHODS and node.args:
            self._collect(func.value, node.args[-1].value)
        qualified = facts.qualified_name(func)
        if _is_optimizer_constructor(qualified, facts):
            self._optimizer(node, qualified)
        elif _makes_an_optimizer(qualified, facts):
            # create_optimizer(model, ...), build_optimizer(cfg, net): what it holds is unknown
            self._optimizers.append(_Optimizer(facts.function, frozenset(), False,
                                               frozenset(n for arg in node.args for n in names_in(arg.value))))
        elif method == "step" and is_optimizer_step(node, facts) and not self._built_optimizer(func.value):
            # self.actor_optimizer.step() on an optimizer handed in: what it holds is unknown
            self._optimizers.append(_Optimizer(facts.function, frozenset(), False, frozenset()))
        self._hand_out(node, func, method, qualified)
        self._note_paths(node, method, qualified)
        if facts.in_no_grad:
            return  # grad off, or maybe off (set_grad_enabled(flag)): no waste to claim
        if _is_loss_call(node, facts):
            self._loss(node)
        target = _called_module(node)
        if target is None or _LOSS_NAME.search(target.rsplit(".", 1)[-1]):
            return
        change = facts.mode_of(target)
        methods: tuple[cst.FunctionDef, ...] = ()
        if change is None and not facts.is_module_expr(func if target == dotted_name(func) else func.value):
            methods = self._module_methods_called(node)
            if not methods:
                return
            target = dotted_name(func.value)
            change = facts.mode_of(target)
        function = facts.function
        if function.name == "__init__":
            return
        statement = self._checker._statement[-1] if self._checker._statement else None
        call = _ModuleCall(
            target=target, node=node, function=function, results=self._checker.assign_targets,
            mode=change.mode if change is not None else None, mode_change=change,
            input_carries=any(_carries(facts.graph_value(arg.value)) for arg in node.args),
            input_from=frozenset().union(*(value.names for arg in node.args
                                           if (value := facts.graph_value(arg.value)).state is Graph.UNKNOWN)),
            loops=tuple(facts.loops_in_function()), discarded=_discarded(statement, node),
            scope=_scope_of(target, function), frozen=target in facts.frozen_modules,
            built_here=self._built_here(target), methods=methods,
        )
        call.made_up = self._made_up_inputs(call)
        call.volatile = self._mentions_volatile and facts.fed_volatile(node)
        call.order = self._order
        self._record().calls.append(call)
        self._call_paths[id(node)] = tuple(facts.branch_path)
        self.at_module_exit(lambda: self._decide(call))

    # ----- branches: a path that never backpropagates ----------------------------------------------
    def _enter_loop(self, node: "cst.For | cst.While") -> None:
        self._order += 1
        self._loop_starts[id(node)] = (self._order, 0)

    def _leave_loop(self, node: "cst.For | cst.While") -> None:
        self._order += 1
        self._loop_starts[id(node)] = (self._loop_starts[id(node)][0], self._order)

    visit_For = visit_While = _enter_loop
    leave_For = leave_While = _leave_loop

    def visit_If(self, node: cst.If) -> None:
        self._ifs[id(node)] = (node, self.facts.function)

    def _conditions(self, path: tuple | None = None, function: FunctionScope | None = None) -> tuple[_Condition, ...]:
        """The branch conditions of ``function`` on a branch path (the walk's, by default)."""
        function = function if function is not None else self.facts.function
        conditions = []
        for key, branch in (path if path is not None else self.facts.branch_path):
            found = self._ifs.get(key)
            if found is not None and found[1] is function:
                conditions.append(_Condition(found[0].test, branch == "else"))
        return tuple(conditions)

    def _built_optimizer(self, receiver: cst.BaseExpression) -> bool:
        """Was ``receiver`` bound to an optimizer this module builds (``torch.optim.Adam(...)``, a
        ``build_optimizer(...)``), whose parameters :meth:`_optimizer` reads?"""
        value = self.facts.bound_value(receiver)
        value = without_self_returning_calls(value) if isinstance(value, cst.BaseExpression) else None
        return isinstance(value, cst.Call) and _makes_an_optimizer(self.facts.qualified_name(value.func), self.facts)

    def _note_paths(self, node: cst.Call, method: str | None, qualified: str | None) -> None:
        """Where backward passes, optimizer steps and calls of this module's functions are, under
        which branch conditions: see :meth:`_path_without_backward`."""
        facts = self.facts
        record = self._record()
        if (method is not None and method.endswith("backward")) or qualified in AUTOGRAD_FUNCTIONS \
                or (method == "step" and is_optimizer_step(node, self.facts)):
            record.backward_paths.append(tuple(facts.branch_path))
            record.backward_places.append((self._order, frozenset(id(loop.node) for loop in facts.loops_in_function()),
                                           tuple(facts.branch_path)))
            return
        callees = facts.callees(node)
        if callees is None:
            return
        definitions, bound = callees
        for definition in definitions:
            self._calls_of.setdefault(id(definition), []).append((node, bound, facts.in_no_grad, facts.function))
        modes = {name: change for arg in node.args
                 if (name := dotted_name(arg.value)) is not None and (change := facts.mode_of(name)) is not None}
        if modes:
            self._argument_modes[id(node)] = modes
        self._call_results[id(node)] = frozenset(self._checker.assign_targets)
        self._site_paths[id(node)] = tuple(facts.branch_path)
        conditions = tuple(facts.branch_path)  # turned into _Conditions when a decision needs them
        record.callee_paths.append((definitions, conditions))
        if not facts.in_no_grad and facts.function.name != "__init__":
            record.helper_forwards.append(
                (node, definitions, bound, frozenset(self._checker.assign_targets), conditions))
            if len(record.helper_forwards) == 1:
                function = facts.function
                self.at_module_exit(lambda: self._decide_helper_forwards(function))

    def _decide_helper_forwards(self, function: FunctionScope) -> None:
        """``outs = forward_model(model, x)``, a helper of this module that runs a module and
        returns its output, on a path where nothing backpropagates."""
        facts = self.facts
        record = self._records[id(function)]
        if not record.backward_paths or not all(self._conditions(path, function) for path in record.backward_paths):
            return  # no backward pass, or one on every path
        # helpers whose output this function backpropagates somewhere (the training branch)
        backpropagated = {id(definition) for node, definitions, _, results, _ in record.helper_forwards
                          if id(node) in function.backward_nodes
                          or function.is_backpropagated(results, through_attributes=True)
                          for definition in definitions}
        for node, definitions, bound, results, conditions in record.helper_forwards:
            scopes = [facts.function_scopes.get(id(definition)) for definition in definitions]
            if not scopes or any(scope is None or scope.has_backward or scope.has_optimizer_step for scope in scopes):
                continue
            if not all(id(definition) in backpropagated for definition in definitions):
                returned = [facts.summaries.get(id(definition)) for definition in definitions]
                if any(MODULE_CALL not in scope.effects for scope in scopes) or any(
                        value is None or value.state is not Graph.CARRIES for value in returned):
                    continue  # not known to return a model's output with its graph
            name = dotted_name(node.func) or "the call"
            path = self._path_without_backward(function, record, node, results, conditions)
            if path is not None:
                self.report(node, f"{_short(name)}() runs a model with grad on in {path}, where nothing "
                                  "backpropagates it",
                            help="run that path under torch.no_grad(), or the loop under "
                                 "torch.set_grad_enabled(<the training flag>)",
                            function=function)

    def _path_without_backward(self, function: FunctionScope, record: _FunctionRecord, node: cst.Call,
                               results: frozenset[str], conditions: tuple[_Condition, ...]) -> str | None:
        """A call of ``function`` in this module, with grad on, whose arguments make every
        branch that backpropagates or steps an optimizer in ``function`` false while the
        forward call ``node`` (under ``conditions``) still runs: a train/eval loop shared by
        both, called for evaluation (``run_epoch(model, loader, train=False)``). The forward's
        output must not leave the function (returned with a graph, handed to a function that
        may backpropagate it). The call as the message shows it (``run_epoch(train=False)``),
        or None."""
        facts = self.facts
        if not record.backward_paths or not isinstance(function.node, cst.FunctionDef):
            return None
        backward_paths = [self._conditions(path, function) for path in record.backward_paths]
        if not all(backward_paths):
            return None  # a backward pass on every path
        conditions = self._conditions(conditions, function)
        callee_paths = [(definitions, self._conditions(path, function)) for definitions, path in record.callee_paths]
        returned = facts.summaries.get(id(function.node))
        returns_graph = returned is None or returned.state is not Graph.NONE  # float(loss_sum) / n: none
        if function.derives_from(record.handed_to_functions | (record.returned if returns_graph else set()), results) \
                or (returns_graph and id(node) in record.returned_calls):
            return None
        if any(scope.has_backward or scope.has_optimizer_step for scope in facts.function_scopes.values()
               if scope.parent is function):
            return None  # a closure that backpropagates (optimizer.step(closure))
        for shown, values in self._evaluating_calls(function):
            if not all(_holds(condition, values, function) is True for condition in conditions):
                continue  # the forward may not run on this path
            if not all(any(_holds(condition, values, function) is False for condition in path)
                       for path in backward_paths):
                continue
            if any(not any(_holds(condition, values, function) is False for condition in path)
                   and any((scope := facts.function_scopes.get(id(definition))) is None
                           or scope.has_backward or scope.has_optimizer_step for definition in definitions)
                   for definitions, path in callee_paths):
                continue  # a helper that backpropagates runs on this path
            passed = ", ".join(f"{name}={values[name]!r}" for name in sorted(values)
                               if any(name in names_in(c.test) for path in backward_paths for c in path))
            if not passed:
                continue
            return f"{_short(shown, 24)}({_short(passed, 30)})"
        return None

    def _evaluating_calls(self, function: FunctionScope) -> Iterator[tuple[str, dict[str, object]]]:
        """The calls of ``function`` made with grad on, each as the message names it and the
        literal values it gives the parameters (its own or the defaults): in this module, and,
        for a top-level function, in the other modules of the project."""
        facts = self.facts
        node = function.node
        for site, bound, no_grad, caller in self._calls_of.get(id(node), ()):
            if not no_grad and facts.may_run_with_grad(caller):
                yield dotted_name(site.func) or function.name, _parameter_literals(
                    facts.argument_nodes(site, node, bound), node)
        project = facts.project
        if project is None or not facts.module_name or function.parent is not facts.module_scope:
            return
        here = project.file_of_path(self._checker.path)
        if here is None:
            return
        positional = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        for call in project.literal_calls_of(facts.module_name, function.name, here):
            if "*" in call or all(value is Ellipsis for value in call.values()):
                continue  # no literal to read a path from
            passed = {}
            for key, value in call.items():
                name = positional[key] if isinstance(key, int) and key < len(positional) else key
                if isinstance(name, str):
                    passed[name] = _UNKNOWN if value is Ellipsis else value
            yield function.name, _parameter_literals(passed, node, given_values=True)

    def visit_Arg(self, node: cst.Arg) -> None:
        self._note_escaped(node.value)

    def _note_escaped(self, value: cst.BaseExpression) -> None:
        """A bare name (or one in a literal container) handed on as an object."""
        if isinstance(value, cst.Name):
            self._record().escaped.add(value.value)
        elif isinstance(value, (cst.Tuple, cst.List, cst.Set)):
            for element in value.elements:
                self._note_escaped(element.value)
        elif isinstance(value, cst.Dict):
            for element in value.elements:
                if isinstance(element, cst.DictElement):
                    self._note_escaped(element.value)

    def _built_here(self, target: str) -> bool:
        """Is ``target`` a local name bound to a module this function builds or loads
        (``Longformer.from_pretrained(...)``, ``Net().to(device)``), not one passed in?"""
        facts = self.facts
        function = facts.function
        node = function.bindings[target].node if target in function.bindings else None
        for _ in range(4):
            while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                    "to", "cuda", "cpu", "eval", "half", "float", "bfloat16", "double"):
                node = node.func.value
            if isinstance(node, cst.Name):  # model = model.to(device): what was it before?
                binding = function.bindings.get(node.value)
                node = binding.node if binding is not None and binding.node is not node else None
                continue
            break
        return isinstance(node, cst.Call) and facts.is_module_constructor(node) and not (
            isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cuda", "cpu"))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._note_escaped(node.value)
            self._record().calls_in_returns.update(id(n) for n in descendants(node.value) if isinstance(n, cst.Call))
            for part in _parts(node.value):
                if not _ends_graph(part, self.facts) and self.facts.graph_value(part).state != Graph.NONE:
                    record = self._record()
                    record.returned.update(names_in(part))
                    record.returned_calls.update(id(n) for n in descendants(part) if isinstance(n, cst.Call))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._order += 1
        name = dotted_name(node.target)
        if name is not None and (self.facts.function.has_backward or self.facts.loop is not None):
            self._record().bindings.append((frozenset({name}), self._order, (node.value, name),
                                            tuple(self.facts.branch_path)))
        if isinstance(node.operator, cst.AddAssign):
            self._collect(node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._order += 1
        if self.facts.function.has_backward or self.facts.loop is not None:  # (only there can it matter)
            bound = frozenset(name for target in node.targets for element in _flat_targets(target.target)
                              for name in [dotted_name(element)] if name is not None)
            if bound:
                self._record().bindings.append((bound, self._order, (node.value, None), tuple(self.facts.branch_path)))
        self._note_escaped(node.value)  # self.model = model, other = model
        for target in node.targets:
            target = target.target
            if isinstance(target, cst.Subscript):  # outputs[k] = out
                self._collect(target.value, node.value)
            elif isinstance(target, cst.Attribute):  # self.cache = out: handed to the object
                self._record().handed_out.update(names_in(node.value))
                attribute = dotted_name(target)
                if attribute is not None and attribute.startswith("self.") and not self.facts.in_no_grad \
                        and self.facts.graph_value(node.value).state is Graph.CARRIES:
                    self._record().cached.append((attribute, frozenset(names_in(node.value)), frozenset(
                        id(n) for n in descendants(node.value) if isinstance(n, cst.Call))))
            name = dotted_name(target)
            if name is not None and name in names_in(node.value) and isinstance(node.value, (cst.Call, cst.BinaryOperation)):
                self._collect(target, node.value)  # outs = torch.cat([outs, out]); total = total + out

    def _collect(self, container: cst.BaseExpression, value: cst.BaseExpression) -> None:
        facts = self.facts
        loop = facts.loop
        name = dotted_name(container)
        if loop is None or name is None or not facts.outlives_iteration(container):
            return
        if facts.graph_value(value).state is not Graph.CARRIES:
            return  # .item(), .argmax(), .detach(), or grad off: nothing kept but the values
        calls = frozenset(id(n) for n in descendants(value) if isinstance(n, cst.Call))
        self._record().collections.append(_Collection(name, loop, calls, frozenset(names_in(value) - {name})))

    def _hand_out(self, node: cst.Call, func: cst.BaseExpression, method: str | None, qualified: str | None) -> None:
        """Names passed to a call that may keep or backpropagate them (``update_policy(log_probs)``)."""
        if method in _COLLECTING_METHODS or not node.args:
            return
        if qualified is not None and (qualified.startswith("torch.") or qualified in _READING_CALLS
                                      or qualified in GRAPH_ENDING_FUNCTIONS):
            return
        if method is not None and dotted_name(func) is None:
            return  # torch.cat(x).mean(...): a method of a computed value
        names: set[str] = set()
        for arg in node.args:
            names |= names_in(arg.value)
        self._record().handed_out.update(names)
        if self._optimizers and any(isinstance(arg.value, (cst.Name, cst.Attribute))
                                    and self._built_optimizer(arg.value) for arg in node.args):
            self._record().handed_with_optimizer.update(names)
        if qualified is None or not hasattr(builtins, qualified):
            self._record().handed_to_functions.update(names)  # not float(loss_sum), print(acc)
            record = self._record()
            for arg in node.args:
                if self.facts.graph_value(arg.value).state is not Graph.NONE:
                    record.handed_with_graph.update(names_in(arg.value))
                    record.handed_calls.update(id(n) for n in descendants(arg.value) if isinstance(n, cst.Call))

    def _loss(self, node: cst.Call) -> None:
        callees = self.facts.callees(node)
        if callees is not None and callees[0]:
            return  # calc_loss(targets, *outputs) of this module: its code, not torch's (input, target) order, says the roles
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        inputs = positional[:1]
        targets = positional[1:] + [arg for arg in node.args if arg.keyword is not None
                                    and arg.keyword.value in ("target", "targets", "labels", "teacher", "y")]
        def names(args):
            return frozenset(n for arg in args for n in names_in(arg.value))

        def calls(args):
            return frozenset(id(n) for arg in args for n in descendants(arg.value) if isinstance(n, cst.Call))

        self._record().losses.append(_LossCall(names(inputs), calls(inputs), names(targets), calls(targets)))

    def _optimizer(self, node: cst.Call, qualified: str) -> None:
        facts = self.facts
        params = [arg.value for arg in node.args if arg.keyword is None and not arg.star][:1]
        params += [arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value in ("params", "model_parameters", "model")]
        owners: set[str] = set()
        mentioned: set[str] = set()
        resolved = bool(params)
        seen: set[int] = set()
        stack = list(params)
        local = _comprehension_targets(params)
        while stack:
            expr = stack.pop()
            if id(expr) in seen or isinstance(expr, cst.Lambda):
                continue
            seen.add(id(expr))
            root = dotted_name(expr)
            if root is not None and root.split(".", 1)[0] in local:
                continue  # p in [p for p in model.parameters() if p.requires_grad]
            if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in (
                    "parameters", "named_parameters"):
                owner = dotted_name(expr.func.value)
                if owner is None:
                    resolved = False
                    mentioned |= names_in(expr.func.value)
                else:
                    owners.add(owner)
                continue
            if isinstance(expr, cst.Name):
                binding = facts.lookup(expr.value)
                if binding is not None and binding.kind is Kind.MODULE:
                    owners.add(expr.value)
                elif binding is not None and isinstance(binding.node, cst.BaseExpression):
                    local |= _comprehension_targets([binding.node])
                    stack.append(binding.node)  # params = list(model.parameters()) + ...
                else:
                    resolved = False
                    mentioned.add(expr.value)
                continue
            if isinstance(expr, cst.Dict):  # param groups: only "params" holds parameters
                for element in expr.elements:
                    if isinstance(element, cst.DictElement) and _string(element.key) == "params":
                        stack.append(element.value)
                    elif not isinstance(element, cst.DictElement):
                        resolved = False
                continue
            if isinstance(expr, cst.Call) and facts.qualified_name(expr.func) not in (
                    "list", "tuple", "filter", "itertools.chain", "chain", "set"):
                if not (isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("values", "items")):
                    resolved = False
                    mentioned |= names_in(expr)
                    continue
            if isinstance(expr, cst.Call):  # list(model.parameters()): what it is called with, not `list`
                stack.extend(arg.value for arg in expr.args)
                if isinstance(expr.func, cst.Attribute):
                    stack.append(expr.func.value)  # groups.values()
                continue
            if isinstance(expr, cst.Attribute):
                resolved = False
                mentioned |= names_in(expr)
                continue
            if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):  # [{"params": ...}, {"params": ...}]
                stack.extend(element.value for element in expr.elements)
                continue
            stack.extend(child for child in expression_children(expr) if isinstance(child, cst.BaseExpression))
        self._optimizers.append(_Optimizer(facts.function, frozenset(owners), resolved, frozenset(mentioned)))

    def _module_methods_called(self, node: cst.Call) -> tuple[cst.FunctionDef, ...]:
        """``model.simulate(x)``: the methods of this module's classes the call runs, when its
        receiver is a module (a method other than ``forward`` that may run it)."""
        func = node.func
        if not isinstance(func, cst.Attribute) or dotted_name(func.value) is None \
                or not self.facts.is_module_expr(func.value):
            return ()
        callees = self.facts.callees(node)
        return tuple(callees[0]) if callees is not None and callees[1] else ()

    def _exports(self, function: FunctionScope) -> bool:
        """Does the function trace, script or export a model (``torch.jit.trace``,
        ``torch.onnx.export``, ``torch.export.export``)? Its forwards on made-up inputs are examples."""
        return any(self.facts.imports.qualify(name) in _EXPORTERS for name in function.callees)

    def _run_from_main_block(self, call: _ModuleCall) -> bool:
        """Does the call run only from the module's ``if __name__ == "__main__":`` block: in it, or
        in a function of the file every call of which is made there?"""
        facts = self.facts
        if call.function is facts.module_scope:
            return self._under_main_guard(self._call_paths.get(id(call.node), ()), facts.module_scope)
        sites = self._calls_of.get(id(call.function.node), ())
        return bool(sites) and all(
            caller is facts.module_scope and self._under_main_guard(self._site_paths.get(id(site), ()), caller)
            for site, _, _, caller in sites)

    def _under_main_guard(self, path: tuple, function: FunctionScope) -> bool:
        return any(_is_main_guard(condition.test) and not condition.negated
                   for condition in self._conditions(path, function))

    def _made_up_inputs(self, call: _ModuleCall) -> bool:
        """Is every argument of the call made up in the function: a literal, or a tensor from a
        torch factory (``torch.randn(2, 50, 384)``, ``torch.full((2,), 50)``), directly or through
        a local bound once to one? A model file's smoke test, not a pass over data. No argument
        at all is made up too (``zs = l0_module()``: the module draws its own values)."""
        function = call.function
        return all(self._made_up(arg.value, function) for arg in call.node.args)

    def _made_up(self, value: cst.BaseExpression | None, function: FunctionScope, depth: int = 0) -> bool:
        """A literal (also nested lists of them), a torch factory's tensor (also moved, sliced
        or scaled by a literal: ``torch.ones(1, 3, h, w).to(device) * 255.``), or what a call makes
        of such inputs only (a module's output on them), directly or through a local of ``function`` bound to one."""
        if value is None or depth > 4:
            return False
        value = without_self_returning_calls(value)
        if isinstance(value, cst.Name) and value.value in function.bindings:
            # every value the local is given (``img = torch.zeros(...)``, then ``img, model =
            # img.half(), model.half()``: the same tensor, converted)
            stored = [each for each in function.stored_values.get(value.value, ())
                      if not _converts_itself(each, value.value)]
            if stored:
                return all(each is not value and self._made_up(each, function, depth + 1) for each in stored)
            binding = function.bindings[value.value]
            node = binding.node if isinstance(binding.node, cst.BaseExpression) else None
            return node is not value and self._made_up(node, function, depth + 1)
        if isinstance(value, cst.BinaryOperation):
            return self._made_up(value.left, function, depth + 1) and self._made_up(value.right, function, depth + 1)
        if isinstance(value, cst.Subscript):  # x[:, :, :40] of a made-up x
            return self._made_up(value.value, function, depth + 1)
        if isinstance(value, cst.UnaryOperation):  # ~mask, -x
            return self._made_up(value.expression, function, depth + 1)
        if isinstance(value, cst.Comparison):  # torch.arange(7)[None] < lengths[:, None]
            return self._made_up(value.left, function, depth + 1) and all(
                self._made_up(target.comparator, function, depth + 1) for target in value.comparisons)
        if isinstance(value, cst.Float):
            return True
        if literal_value(value) is not NOT_A_LITERAL:
            return True
        if isinstance(value, (cst.List, cst.Tuple)):
            return all(isinstance(element, cst.Element) and self._made_up(element.value, function, depth + 1)
                       for element in value.elements)
        if not isinstance(value, cst.Call):
            return False
        if (self.facts.qualified_name(value.func) or "") in _TORCH_FACTORIES:
            return True
        if (self.facts.qualified_name(value.func) or "") in _LEGACY_CONSTRUCTORS and value.args \
                and type(value.args[0].value) is cst.Integer:
            return True  # torch.FloatTensor(1, 3, h, w): an uninitialised tensor of that size
        # cnn(torch.ones(shape)): what a module (or a callable given such tensors) makes of made-up
        # tensors only is made up (a shape probe); not torch.load("x.pt"), Image.open("a.jpg"):
        # literal arguments name real data
        qualified = self.facts.qualified_name(value.func) or ""
        if qualified in ("torch.autograd.Variable", "torch.autograd.variable.Variable") and value.args:
            return self._made_up(value.args[0].value, function, depth + 1)  # Variable(torch.randn(...))
        arguments = [arg.value for arg in value.args]
        if qualified.startswith("torch.") and _READS_DATA.search(qualified):
            return False  # torch.load(path), torch.hub.load(...): real data, whatever names the file
        # torch.triu(torch.ones(7, 7), 1), other.forward(made-up): what it makes of made-up inputs
        return bool(arguments) and all(self._made_up(arg, function, depth + 1) for arg in arguments) and any(
            literal_value(arg) is NOT_A_LITERAL and not isinstance(arg, cst.Float) for arg in arguments)

    def _runs_module_method(self, call: _ModuleCall) -> bool:
        """Do the module's methods ``call`` runs all return a graph of their own making, whatever
        they are given (their summaries say so: the module's parameters took part; not
        ``@torch.no_grad`` methods, not ones that return ``.item()``s or only pass an input on)?"""
        for method in call.methods:
            returned = self.facts.summaries.get(id(method))
            if returned is None or returned.state is not Graph.CARRIES or returned.names or returned.pending:
                return False
        return True

    def _frozen_by_a_helper(self, call: _ModuleCall) -> bool:
        """Was the called module handed to a function that freezes its argument
        (``deactivate_requires_grad(self.backbone)``, in this module or another of the project)
        where the name means the same object: an attribute or a global anywhere, a local in the
        same function; or is it ``model.backbone`` of an instance of a class of this module that
        froze ``self.backbone`` (directly or through such a helper)? With every parameter frozen,
        a forward on inputs that need no grad records nothing."""
        target = call.target

        def same_object(function_id: int, name: str) -> bool:
            return name == target and (function_id == id(call.function) or "." in name)

        frozen = self.facts.frozen_by_helpers() | self.facts.frozen_by_their_methods(same_object)
        if any(same_object(function_id, name) for function_id, name in frozen):
            return True
        owner, _, attribute = target.rpartition(".")
        if not owner or owner in ("self", "cls") or "." in owner:
            return False
        info = self.facts.instance_class(cst.Name(owner), call.function)
        if info is None:
            return False
        return f"self.{attribute}" in self._frozen_in_class(info)

    def _frozen_by_its_constructor(self, call: _ModuleCall) -> bool:
        """Was the called module built from a class of the project whose ``__init__`` freezes every
        parameter unless told otherwise, and not told (``InceptionV3([idx])``, its ``requires_grad``
        False by default)? Built in the function, or by every caller of this module that hands it
        to the function (through other functions' parameters too)."""
        if self.facts.project is None:
            return False
        function = call.function
        if "." in call.target and not call.target.startswith("self."):
            return False
        binding = self._binding_of(call)
        if binding is None:
            return False
        if call.target.startswith("self."):
            values = [binding.node]
        elif isinstance(binding.node, cst.Param):
            values = self._arguments_given(function.node, call.target, 0) or []
        else:
            values = _values_bound(function.node, call.target)
        return bool(values) and all(self._builds_a_frozen_module(value) for value in values)

    def _arguments_given(self, function: cst.CSTNode, parameter: str, depth: int) -> list[cst.CSTNode] | None:
        """What every call of the module's top-level ``function`` passes for ``parameter`` (a name a
        caller's own parameter holds, followed to its callers); None when a call cannot be read, the
        function is also named elsewhere (another module, a callback), or nothing calls it."""
        module = self._checker.module
        if depth > 3 or not isinstance(function, cst.FunctionDef) or function not in module.body:
            return None
        name = function.name.value
        project = self.facts.project
        others = project.modules_mentioning(name) if project is not None else []
        if others is None or any(self._may_call_into_this_module(project, other) for other in others):
            return None
        params = function.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        if parameter not in positional and parameter not in {p.name.value for p in params.kwonly_params}:
            return None
        calls: list[tuple[cst.Call, cst.CSTNode]] = []
        mentions = 0
        for statement in module.body:
            caller = statement if isinstance(statement, cst.FunctionDef) else module
            for node in descendants(statement):
                if isinstance(node, cst.Name) and node.value == name:
                    mentions += 1
                elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name:
                    calls.append((node, caller))
        if not calls or mentions != len(calls) + 1:
            return None  # also named without a call (a callback), or a second definition
        given: list[cst.CSTNode] = []
        for site, caller in calls:
            value = argument_for(site, positional, parameter)
            if value is None or value is False:
                return None  # its default, or hidden in *args
            if isinstance(value, cst.Name):
                if isinstance(caller, cst.FunctionDef) and value.value in _parameter_names(caller):
                    further = self._arguments_given(caller, value.value, depth + 1)
                    if further is None:
                        return None
                    given.extend(further)
                    continue
                bound = _values_bound(caller, value.value)
                if not bound:
                    return None
                given.extend(bound)
            else:
                given.append(value)
        return given

    def _may_call_into_this_module(self, project, other) -> bool:
        """May module ``other`` (which mentions a function's name) call this module's function of
        that name: it imports this module (or from it), or cannot be read? Not another file that
        names a function of its own so."""
        if os.path.realpath(other.path) == os.path.realpath(self._checker.path):
            return False
        outline = project.outline(other)
        here = self.facts.module_name
        if outline is None or not here:
            return True
        return here in outline.star_imports or any(
            imported == here or imported.startswith(here + ".") for imported in outline.imports.values())

    def _builds_a_frozen_module(self, node: cst.CSTNode | None) -> bool:
        built = without_self_returning_calls(node)
        if not isinstance(built, cst.Call):
            return False
        qualified = self.facts.qualified_name(built.func)
        project = self.facts.project
        if qualified is None or project is None:
            return False
        definition = project.definition(self._in_project(qualified))
        outline = definition.class_outline if definition is not None else None
        decider = outline.frozen_unless if outline is not None else None
        if decider is None:
            return False
        if decider == "":
            return True
        init = outline.methods.get("__init__")
        positional, _ = init.parameters(bound=True) if init is not None else ([], [])
        value = argument_for(built, positional, decider)
        if value is False:
            return False  # hidden in *args
        return value is None or literal_value(value) is False  # not passed: its default, False

    def _frozen_in_class(self, info) -> set[str]:
        """The ``self.x`` names some method of the class freezes (``requires_grad_(False)``, or
        handed to a helper that freezes its argument); read once per class, at the module's end."""
        found = self._frozen_by_class.get(id(info))
        if found is None:
            in_class = {id(scope) for scope in self.facts.function_scopes.values() if scope.class_info is info}
            frozen = self.facts.frozen_by_helpers() | self.facts.frozen_by_their_methods(
                lambda function_id, name: function_id in in_class)
            found = self._frozen_by_class[id(info)] = {
                name for scope in self.facts.function_scopes.values() if scope.class_info is info
                for name in [change.target for change in scope.mode_changes if change.mode == "frozen"]
                + [frozen_name for function_id, frozen_name in frozen if function_id == id(scope)]}
        return found

    # ----- decisions, at the end of the module (optimizers and freezing complete) ---------------------
    def _decide(self, call: _ModuleCall) -> None:
        function = call.function
        if call.volatile and not self._volatile_ignored():
            return  # a volatile Variable's forward, on a PyTorch that may honour the flag
        if self._forward_trains(call):
            return  # a meta-learner whose forward is its own training step: the call is training
        if not call.frozen and (self._frozen_by_a_helper(call) or self._frozen_by_its_constructor(call)
                                # a global frozen by the script's code after the function's definition
                                # (``for p in teacher.parameters(): p.detach_()`` under __main__)
                                or (call.scope == "global" and call.target in self.facts.frozen_modules)):
            call.frozen = True
        if (call.mode is not None and call.scope == "global"
                and not any(change.target == call.target for change in function.mode_changes)
                and self.facts.mode_changed_in_functions(call.target)):
            call.mode = None  # put in eval mode at module level, but some function changes it too
        if call.mode is not None and call.scope == "self" and call.mode_change is not None \
                and call.mode_change not in function.mode_changes \
                and self.facts.mode_changed_outside(call.target, call.mode_change):
            call.mode = None  # put in eval mode by the constructor, but another method changes it
        # (not a forward fed a volatile Variable: code written for a PyTorch that honours the flag,
        # whose callers' grad mode says nothing then)
        if call.mode is None and call.scope == "local" and not call.volatile and self._kept_in_the_function(call):
            change = self._mode_every_caller_hands_in(call)
            if change is not None:
                call.mode, call.mode_change, call.mode_from_callers = change.mode, change, True
        if call.methods and not self._runs_module_method(call):
            return
        if not call.frozen and not any(change.target == call.target and change.mode == "frozen"
                                       for change in function.mode_changes):
            record = self._records[id(function)]
            path = self._path_without_backward(function, record, call.node, call.results,
                                               self._call_paths.get(id(call.node), ()))
            if path is not None:
                self._report(call, (f"'{_short(call.target)}' runs with grad on in {path}, where nothing "
                                    "backpropagates it",
                                    "run that path under torch.no_grad(), or the loop under "
                                    "torch.set_grad_enabled(<the training flag>)"), fixable=False)
                return  # no fix: the same line runs the training path
        if call.mode != "eval" and self._run_for_side_effects(call):
            self._report(call, (f"'{_short(call.target)}' runs with grad on over the data, its output thrown away",
                                "run the loop under torch.no_grad(): each pass records a graph for a backward that "
                                "never comes (batch-norm statistics still update in train mode)"))
            return
        if call.frozen or call.mode in ("frozen", "train") or any(
                change.target == call.target and change.mode == "frozen" for change in function.mode_changes):
            return
        record = self._records[id(function)]
        collected = self._collected(call, record)
        if (self._in_test_file or _is_test_function(function)) and collected is None and not self._returned(call, record):
            return  # a test's forward pass: its graph dies with the test
        if collected is None and not self._returned(call, record) and call.made_up and (
                ((self._run_from_main_block(call) or self._exports(function)) and (not call.loops or self._never_read(call)))
                or (not call.loops and function is not self.facts.module_scope and self._never_read(call))):
            # a model file's smoke test (m(torch.randn(2, 50, 384)) under __main__), or the check of an
            # export on example inputs (torch.jit.trace(m, x); assert m(x) == traced(x)): one forward at toy
            # size; or a timing loop there whose outputs nobody reads, one graph alive at a time; or a
            # function's shape probe whose output nobody reads (a FLOP counter's forward on torch.zeros(1, 3, h, w))
            return
        backpropagated = id(call.node) in function.backward_nodes or (function.is_backpropagated(
            call.results, through_attributes=True) and not self._killed_before_backward(call, record)) \
            or function.derives_from(record.handed_with_optimizer, call.results - {"_"})
        training = _trains(function)
        if call.mode == "eval":
            if not backpropagated:
                if call.discarded and not call.loops:
                    return  # a dry run before tracing or export: the graph dies with the statement
                if self._module_method(function) and function.derives_from(function.returned_names, call.results):
                    return  # a perceptual loss's frozen network: its output goes back, graph and all
                if function.requires_grad_inputs:
                    return  # inputs made to require grad: the model differentiates them (forces, saliency)
                if _reads_grad_fn(function):
                    return  # the code walks the autograd graph the forward records (a dependency tracer)
                if _returned_closure(function) and self._returned(call, record):
                    return  # model_fn returned by get_model_fn(): its callers, unseen, choose the grad mode
                if function.name == "forward" and function.class_info is not None and function.class_info.is_module \
                        and not function.entry_grad_mode_explicit and id(call.node) in record.calls_in_returns:
                    return  # a module's forward handing the output back: whoever calls the module chooses the mode
                if collected is None and self._one_affine_layer(call):
                    return  # one nn.Linear: its graph saves only its input and weight, alive anyway
                self._report(call, self._eval_message(call, collected))
                return
            if function.requires_grad_inputs or not training:
                return  # saliency, adversarial examples, Grad-CAM: the gradients are the point
            # another module is trained on its own inputs (a student); a criterion or a head fed
            # with this call's output is downstream of it, not "another module"
            trained_elsewhere = any(
                other.target != call.target and other.mode != "eval" and not other.input_carries
                and (id(other.node) in function.backward_nodes or function.is_backpropagated(other.results))
                for other in record.calls if other.function is function
            )
            if not trained_elsewhere or call.input_carries or self._may_be_optimized(call) \
                    or (call.input_from and function.is_backpropagated(call.input_from)):
                # training in eval mode on purpose; a GAN generator step through it; an input
                # of unknown graph that the step backpropagates along another path (features of
                # the trained model, also fed to its head): the gradients may flow through
                return
            self._report(call, self._untrained_message(call, "in eval mode"))
            return
        if training:
            evidence = self._untrained_evidence(call, record)
            if evidence is not None:
                self._report(call, self._untrained_message(call, evidence))
            elif not backpropagated and self._graph_unused(call, record, in_a_step=True):
                # the critic's phase of a GAN step: ``fake = netG(noise)`` read only as fake.detach()
                self._report(call, (f"'{_short(call.target)}' runs with grad on in a training step, but its output "
                                    "is only read detached",
                                    "run the call under torch.no_grad(): its graph is recorded for nothing, and "
                                    "kept while the name lives"))
            return
        if collected is not None and not call.input_carries and not function.requires_grad_inputs \
                and not function.is_per_step_method and not self._module_method(function):
            self._report(call, self._loop_message(call, collected))
            return
        cache = self._cached_prediction(call, record)
        if cache is not None:
            self._report(call, (f"'{_short(call.target)}' runs with grad on and {cache} keeps its output with "
                                "the graph",
                                "compute it under torch.no_grad() (or cache its .detach())"))
            return
        kept = self._kept_untrainable(call, record)
        if kept is not None:
            self._report(call, self._untrainable_message(call, kept))
            return
        kept = self._returned_to_inference(call, record)
        if kept is not None:
            self._report(call, self._loop_message(call, kept))
            return
        if self._graph_unused(call, record) and not self._one_affine_layer(call):
            self._report(call, (f"'{_short(call.target)}' runs with grad on, but its output is only read detached "
                                "or as numbers",
                                "run the call under torch.no_grad(): its graph is recorded for nothing"))

    def _kept_in_the_function(self, call: _ModuleCall) -> bool:
        """Does nothing computed from the call's output (bound, or collected over a loop) leave
        its function with a graph: not returned so, not handed to another function (a linear
        probe trained on the features)?"""
        record = self._records.get(id(call.function))
        if record is None:
            return False
        names = (call.results - {"_"}) | {collection.container for collection in self._collections_of(call, record)}
        function = call.function
        return not (id(call.node) in record.returned_calls or id(call.node) in record.handed_calls
                    or function.derives_from(record.returned, names)
                    or function.derives_from(record.handed_with_graph, names))

    def _mode_every_caller_hands_in(self, call: _ModuleCall):
        """The mode (a ModeChange) a top-level function's parameter has at every call of the
        function, when all are in view and agree: ``_greedy_generate(model, ids)`` called only
        after ``model.eval()`` (``run_test_generation``), by callers that backpropagate nothing.
        None when another module may call it, it is named without a call (handed on as a
        callback), the parameter is rebound, or any call hands in another mode or none."""
        function, facts = call.function, self.facts
        node = function.node
        root = call.target.split(".", 1)[0]
        if function.parent is not facts.module_scope or not isinstance(node, cst.FunctionDef) \
                or function.has_backward or root not in _parameter_names(node) or _values_bound(node, root):
            return None
        sites = self._calls_of.get(id(node), ())
        if not sites or not only_called_by_name(self._checker.source, function.name, own=True):
            return None
        project = facts.project
        if project is not None and facts.module_name and project.called_from_elsewhere(
                facts.module_name, function.name, project.file_of_path(self._checker.path)) is not False:
            return None
        handed = None
        for site, bound, _, caller in sites:
            if caller.has_backward or caller.has_optimizer_step:
                return None  # the caller may train on what the function returns
            argument = facts.argument_nodes(site, node, bound).get(root)
            name = dotted_name(argument) if argument is not None else None
            change = self._argument_modes.get(id(site), {}).get(name) if name is not None else None
            if change is None or (handed is not None and change.mode != handed.mode):
                return None
            handed = handed or change
        return handed

    def _forward_trains(self, call: _ModuleCall) -> bool:
        """Does the called module's own ``forward`` backpropagate or step an optimizer (its class
        in this module or, through the summaries, in another module of the project)?"""
        facts = self.facts
        qualified = self._built_from(call)
        if qualified is None:
            return False
        qualified = facts.class_of_constructor(qualified) or qualified
        info = facts.classes.get(qualified.rsplit(".", 1)[-1])
        if info is not None:
            forward = facts.find_method(info, "forward")
            return forward is not None and (forward.has_backward or forward.has_optimizer_step)
        project = facts.project
        definition = project.definition(self._in_project(qualified)) if project is not None else None
        if definition is None or definition.kind != "class":
            return False
        key = project.method_owner(definition.qualified, "forward")
        summary = project.function_summary(key) if key is not None else None
        return summary is not None and bool(summary.effects & {BACKWARD, OPTIMIZER_STEP})

    def _volatile_ignored(self) -> bool:
        """Does the code need PyTorch 0.4 or later, where ``volatile=True`` does nothing: ``.item()``
        or ``no_grad`` in this module or another of the project, and no ``x.data[0]`` scalar read in
        this module (0.3's idiom, an IndexError since 0.5)? Otherwise the flag may well turn grad
        off, as it did before 0.4."""
        if self._volatile_verdict is None:
            source = without_comments(self._checker.source)
            if _SCALAR_DATA_READ.search(source):
                self._volatile_verdict = False
            elif _NEEDS_0_4.search(source):
                self._volatile_verdict = True
            else:
                project = self.facts.project
                self._volatile_verdict = project is not None and any(
                    project.modules_mentioning(word, called=True) for word in ("item", "no_grad"))
        return self._volatile_verdict

    def _run_for_side_effects(self, call: _ModuleCall) -> bool:
        """A forward over the data whose output is dropped (``model(images)`` as a statement in a
        loop whose items it is run on: recomputing batch-norm statistics, warming a cache) in a function that
        neither backpropagates nor steps an optimizer, nor calls anything that may: only the
        module's state is wanted. Not where a hook may hand the activations to a backward pass
        elsewhere, nor in a module's own methods or a test."""
        function = call.function
        if not call.discarded or call.frozen or call.input_carries or function.requires_grad_inputs \
                or self._in_test_file:
            return False
        if call.mode is None and not call.built_here:
            return False  # nothing here shows it is a module (model.train(), built here): a name alone does not
        inputs = {name for arg in call.node.args for name in names_in(arg.value)}
        if call.loops and all(loop.bounded for loop in call.loops):
            return False  # a dry run on the first batch (``break`` ends the loop): once, not a pass over data
        targets = set().union(*(loop.target_names for loop in call.loops)) if call.loops else set()
        if not targets or not reaches(inputs, lambda name: function.derived_from.get(name, ()),
                                      lambda name: re.split(r"[\[.]", name, maxsplit=1)[0] in targets):
            return False  # the loop does not feed the model (images from q[0] of the loader's items): not a pass
        if function.has_backward or function.has_optimizer_step or "hook" in self._checker.source \
                or self._module_method(function) or not isinstance(function.node, cst.FunctionDef):
            return False
        if function.class_info is not None and function.class_info.is_module:
            return False
        return self.facts.callees_work([id(function.node)], frozenset({"backward", "optimizer_step"})) is False

    def _graph_unused(self, call: _ModuleCall, record: _FunctionRecord, in_a_step: bool = False) -> bool:
        """Is every read of the call's result one that drops its graph (``samples.detach().cpu()``,
        ``out.item()``, ``mse(out, y).item()``, ``out.shape[0]``; see :class:`_Reads`), in a
        function that backpropagates nothing and hands the result on to nobody: the code itself
        says the graph is not wanted. ``in_a_step``: in a training step, which backpropagates
        other values; not where a hook registered in this module may hand activations of the call
        to that backward pass (Grad-CAM)."""
        function = call.function
        results = call.results - {"_"}
        if in_a_step and "hook" in self._checker.source:
            return False
        if (len(results) != 1 or call.input_carries or (function.has_backward and not in_a_step)
                or function.requires_grad_inputs
                or self._module_method(function) or self._returned(call, record)
                or not isinstance(function.node, cst.FunctionDef)):
            return False
        info = function.class_info
        if function.name == "forward" and info is not None and info.is_module:
            return False  # a module's forward: whoever calls the module chooses the grad mode
        if call.made_up and not in_a_step:
            return False  # a smoke test or a shape probe on torch.randn inputs: one toy forward
        owner, _, attribute = call.target.rpartition(".")
        if owner and owner not in ("self", "cls") and function.lookup(call.target) is None:
            return False  # frame.head(n): an attribute of a value, a module only by its name
        (name,) = results
        if "." in name:
            return False
        reads = _Reads(name)
        function.node.body.visit(reads)
        return reads.detached > 0 and reads.detached == reads.total and reads.bound == 1

    def _killed_before_backward(self, call: _ModuleCall, record: _FunctionRecord) -> bool:
        """Is the call's output out of every name that reaches a backward pass before any backward
        pass can run after the call? A visualisation block at the end of a training iteration
        (``fake = netG(z)`` in eval mode, after ``loss.backward()``), whose names the next iteration
        binds again before its own backward pass: the names say backpropagated, the order says not.
        The assignments between the call and each backward pass (through the next iteration of the
        loop around both) are replayed in order: one that reads a name holding the output passes it
        on, one that does not replaces it (only where it runs whenever the backward pass does)."""
        function = call.function
        results = call.results - {"_"}
        if not results or any("." in name for name in results) or not record.backward_places:
            return False
        loops_here = {id(loop.node) for loop in call.loops}
        for place, loops, path in record.backward_places:
            if place > call.order:  # later in the walk
                spans = [(call.order, place)]
            else:
                common = [self._loop_starts[key] for key in loops & loops_here if key in self._loop_starts]
                if not common:
                    continue  # before the call, in no loop around both: it never runs after it
                start, end = max(common)  # the innermost loop around both: its next iteration runs it again
                spans = [(call.order, end), (start, place)]
            holding = set(results)
            for low, high in spans:
                for names, bound_at, (value, also_read), bound_path in record.bindings:  # (in walk order)
                    if not low < bound_at < high:
                        continue
                    reads = names_in(value) | ({also_read} if also_read else set())
                    if reads & holding:
                        holding |= names
                    elif path[:len(bound_path)] == bound_path:
                        holding -= names
            # (an assignment before the function's first backward pass, outside loops, is not
            # recorded: what it passes on is still found, as the name-based check finds it)
            if any("." in name for name in holding) or function.is_backpropagated(holding, through_attributes=True):
                return False
        return True

    def _never_read(self, call: _ModuleCall) -> bool:
        """Is the call's result thrown away or bound only to names its function never reads
        (``y = net(x)`` in a warm-up or timing loop)?"""
        if call.discarded:
            return True
        results = call.results - {"_"}
        if not results or any("." in name for name in results):
            return False  # used in place (outputs.append(net(x))), or stored on an object
        node = call.function.node
        body = node.body if isinstance(node, cst.FunctionDef) else self._checker.module  # module-level code
        for name in results:
            reads = _Reads(name)
            body.visit(reads)
            if reads.total:
                return False
        return True

    def _one_affine_layer(self, call: _ModuleCall) -> bool:
        """Is the module an instance of a class of this file whose ``forward`` runs one
        ``nn.Linear`` (or ``nn.Embedding``) and nothing else (``return self.fc(x)``, a linear
        probe or a linear regressor)? Its graph saves only the input and the weight, tensors that
        are alive anyway: with grad on, nothing is held for the backward pass that never comes."""
        facts = self.facts
        func = call.node.func
        module = func.value if isinstance(func, cst.Attribute) and func.attr.value == "forward" else func
        name = facts.instance_class_name(module)
        dotted = dotted_name(module) or ""
        if name is None and dotted.isidentifier():
            # decided at the module's end: the name is bound in the call's function, not where the walk is
            bound = call.function.bindings.get(dotted)
            name = facts.constructed_class(bound.node) if bound is not None and bound.node is not None else None
        if name is None and dotted.startswith("self.") and call.function.class_info is not None:
            bound = call.function.class_info.attributes.get(dotted)  # self.model = LinearModel(...) in __init__
            value = bound.node if bound is not None else None
            name = dotted_name(value.func) if isinstance(value, cst.Call) else None
        info = facts.classes.get(name or "")
        forward = facts.find_method(info, "forward") if info is not None else None
        if forward is None or not isinstance(forward.node, cst.FunctionDef):
            return False
        calls = [node for node in descendants(forward.node.body) if isinstance(node, cst.Call)]
        if len(calls) != 1:
            return False
        binding = info.attributes.get(dotted_name(calls[0].func) or "")
        value = binding.node if binding is not None else None
        return isinstance(value, cst.Call) and facts.qualified_name(value.func) in _AFFINE_LAYERS

    def _module_method(self, function: FunctionScope) -> bool:
        """A method of an nn.Module that hands what it computes on to its caller (``encode``,
        ``tiled_decode`` returning the joined tiles): its submodules' outputs are part of the
        module's own computation, run in whatever grad mode its caller chose. Not one that
        returns no graph (``predict`` returning an argmax): there the graphs serve nothing."""
        info = function.class_info
        if info is None or not info.is_module:
            return False
        returned = self.facts.summaries.get(id(function.node))
        return returned is not None and returned.state is not Graph.NONE

    @staticmethod
    def _returned(call: _ModuleCall, record: _FunctionRecord) -> bool:
        """Is the call's output handed back to the caller, graph and all (a test double of a
        framework's ``validation_step``)?"""
        return id(call.node) in record.returned_calls or call.function.derives_from(record.returned, call.results)

    def _collected(self, call: _ModuleCall, record: _FunctionRecord) -> _Collection | None:
        """A collection, in a loop around the call with no backward pass and no optimizer step,
        of a value computed from the call, into a container whose graphs never go anywhere
        (not backpropagated, returned with a graph, stored on an object or handed to a function)."""
        function = call.function
        loops = {id(loop.node) for loop in call.loops}
        for collection in record.collections:
            if id(collection.loop.node) not in loops or collection.loop.is_training_loop:
                continue
            if _walks_the_called_modules(collection.loop, call) and not any(loop.iterates_data for loop in call.loops):
                continue  # for m in self.model: x = m(x); y.append(x) is one forward pass, layer by layer
            if id(call.node) not in collection.call_ids and not function.derives_from(collection.names, call.results):
                continue
            escapes = set(function.backward_names) | record.handed_out | record.returned
            if function.derives_from(escapes, {collection.container}) or "." in collection.container:
                continue
            if collection.container in function.numpy_converted:
                continue  # mu.cpu().numpy() later: numpy() raises on a graph, so the outputs had none
            return collection
        return None

    def _cached_prediction(self, call: _ModuleCall, record: _FunctionRecord) -> str | None:
        """A prediction an object caches for later reads: a ``cached_property`` returning the
        module's output, or a method (a ``property``) storing it on ``self`` and returning that
        attribute (``if self._pred is None: self._pred = self.model(x)``). The graph lives as
        long as the object, and nothing in the class backpropagates it. Not in a module (its
        attributes are part of its forward) nor a class whose bases are unknown."""
        function = call.function
        info = function.class_info
        if info is None or info.is_module or info.kinds.unknown_base or function.name == "__init__":
            return None
        if call.input_carries or any(method.has_backward for method in info.methods.values()):
            return None
        binding = info.attributes.get(call.target) if call.target.startswith("self.") else None
        built = binding.node if binding is not None else None
        if isinstance(built, cst.Call) and not self.facts.is_module_constructor(built):
            return None  # self.compile_model = partial(core.compile_model, ...): a module by its name only
        decorators = {self.facts.qualified_name(d.decorator) or "" for d in function.node.decorators} \
            if isinstance(function.node, cst.FunctionDef) else set()
        if any(d.endswith("cached_property") for d in decorators) and self._returned(call, record):
            return f"cached_property '{function.name}'"
        for attribute, names, calls in record.cached:
            if attribute in function.returned_names and (
                    id(call.node) in calls or function.derives_from(names, call.results)):
                return f"'{_short(attribute)}'"
        return None

    @staticmethod
    def _collections_of(call: _ModuleCall, record: _FunctionRecord) -> Iterator[_Collection]:
        """The collections, in a loop around the call that does not train, of what it computes."""
        loops = {id(loop.node) for loop in call.loops}
        for collection in record.collections:
            if id(collection.loop.node) not in loops or collection.loop.is_training_loop:
                continue
            if id(call.node) in collection.call_ids or call.function.derives_from(collection.names, call.results):
                yield collection

    def _kept_untrainable(self, call: _ModuleCall, record: _FunctionRecord) -> _Collection | None:
        """A module this function builds and never lets out (no call gets it, it is not
        returned or stored, no optimizer holds it) cannot be trained by anyone: when nothing
        here backpropagates and a loop keeps its outputs, whatever the list is for, each
        iteration's graph is kept for nothing."""
        function = call.function
        if not call.built_here or call.input_carries or function.requires_grad_inputs or function.has_backward:
            return None
        if call.target in record.escaped or self._may_be_optimized(call):
            return None
        if function.class_info is not None and function.class_info.is_module:
            return None  # a module's own method: what it builds feeds the module's forward
        for collection in self._collections_of(call, record):
            if function.derives_from(record.returned, {collection.container}) and any(
                    site.caller.has_backward for site in self.facts.calls_into.get(id(function.node), ())):
                continue  # handed back to a caller that backpropagates through it (training a head on it)
            return collection
        return None

    def _returned_to_inference(self, call: _ModuleCall, record: _FunctionRecord) -> _Collection | None:
        """A loop that collects the module's outputs with their graphs and returns them, in a
        file where nothing backpropagates (no backward pass, no optimizer step anywhere), to
        callers that are all in view: the script's own code (its top level, or a ``main()`` it
        calls), with grad on, and no other module's. Nobody can use the graphs
        (``outputs.append(model(x))``, then ``torch.save(torch.cat(outputs))``)."""
        function = call.function
        facts = self.facts
        if call.input_carries or function.requires_grad_inputs or function.is_per_step_method \
                or self._module_method(function) or not isinstance(function.node, cst.FunctionDef):
            return None
        callers = self._calls_of.get(id(function.node), ())
        if not callers or not all(self._script_entry(caller) or self._reads_down_to_numbers(site, caller)
                                  for site, _, _, caller in callers):
            return None  # a caller hands the outputs on, or is called from where memlint cannot see
        if self._module_trains is None:
            self._module_trains = any(scope.has_backward or scope.has_optimizer_step
                                      for scope in (facts.module_scope, *facts.function_scopes.values()))
        if self._module_trains:
            return None  # something here trains: the returned outputs may be what it trains on
        if not any(not no_grad and facts.may_run_with_grad(caller) for _, _, no_grad, caller in callers):
            return None  # not called here with grad on: its callers, unseen, choose the grad mode
        project = facts.project
        if project is not None and facts.module_name and project.called_from_elsewhere(
                facts.module_name, function.name, project.file_of_path(self._checker.path)) is not False:
            return None  # another module may call it and train on what it returns
        for collection in self._collections_of(call, record):
            if "." in collection.container or function.derives_from(record.handed_out, {collection.container}):
                continue  # kept on an object, or handed to a function that may backpropagate it
            if function.derives_from(record.returned, {collection.container}):
                return collection
        return None

    def _script_entry(self, caller: FunctionScope) -> bool:
        """Is ``caller`` a script's own code: the module's top level, or a top-level function that
        returns nothing and is only called from the top level (``main()``)?"""
        facts = self.facts
        if caller is facts.module_scope:
            return True
        sites = self._calls_of.get(id(caller.node), ())
        return (caller.parent is facts.module_scope and not caller.returned_nodes and bool(sites)
                and all(site_caller is facts.module_scope for _, _, _, site_caller in sites))

    def _reads_down_to_numbers(self, site: cst.Call, caller: FunctionScope) -> bool:
        """Does ``caller`` bind what ``site`` returns and use it only down to values without a
        graph (``errors = [(p - t).pow(2).mean().item() for p in preds]``, then ``return sum(errors)``):
        nothing computed from it is returned with a graph (the caller's summary says its return
        carries none), kept on an object or handed to a function that is not torch's or a
        reading builtin? Then the graphs it receives are never used."""
        results = self._call_results.get(id(site), frozenset())
        if not results or caller is self.facts.module_scope or caller.is_generator \
                or not isinstance(caller.node, cst.FunctionDef):
            return False
        returned = self.facts.summaries.get(id(caller.node))
        if returned is None or returned.state is not Graph.NONE or returned.pending:
            return False
        record = self._records.get(id(caller), _FunctionRecord())
        if id(site) in record.returned_calls:
            return False
        return not caller.derives_from(record.handed_out | record.handed_to_functions | record.escaped
                                       | {attribute for attribute, _, _ in record.cached}, results)

    def _untrained_evidence(self, call: _ModuleCall, record: _FunctionRecord) -> str | None:
        """Why ``call``'s module is not the one being trained in this training step, or None."""
        if call.input_carries or call.discarded or self._may_be_optimized(call):
            return None
        function = call.function
        same = [other for other in record.calls if other.target == call.target and other.function is function]
        role = self._target_role(same, function, record)
        if role is False:
            return None  # somewhere an input of a loss, or of another module: it is being trained
        words = {word for part in re.split(r"[^A-Za-z]+", call.target.rsplit(".", 1)[-1]) for word in _words(part)}
        named = sorted(words & _FROZEN_ROLE_WORDS)
        if named:
            return f"named as {_ROLE_NAMES[named[0]]} model"
        in_scope = self._optimizers_in_scope(call)
        if role and in_scope and all(opt.resolved for opt in in_scope):
            return "a loss target only, in no optimizer"
        return None

    def _target_role(self, calls: list[_ModuleCall], function: FunctionScope, record: _FunctionRecord) -> bool | None:
        """Is every use of these calls' outputs in a loss the target (True), is one the input
        (False), or do they feed no loss call seen here (None)?"""
        as_target = False
        for call in calls:
            for loss in record.losses:
                if id(call.node) in loss.input_calls or function.derives_from(loss.input_names, call.results):
                    return False
                if id(call.node) in loss.target_calls or function.derives_from(loss.target_names, call.results):
                    as_target = True
        return True if as_target else None

    def _optimizers_in_scope(self, call: _ModuleCall) -> list[_Optimizer]:
        """Optimizers built where ``call``'s name means the same module: the same function, the
        same class for ``self.x``, the module level for a global."""
        function = call.function
        if call.scope == "self":
            return [opt for opt in self._optimizers if opt.function.class_info is function.class_info]
        if call.scope == "global":
            return [opt for opt in self._optimizers if opt.function is self.facts.module_scope or opt.function is function]
        return [opt for opt in self._optimizers if opt.function is function]

    def _may_be_optimized(self, call: _ModuleCall) -> bool:
        """Could an optimizer built in this file hold ``call``'s module (or part of it)?"""
        target = call.target
        root = target.split(".", 1)[0]
        for opt in self._optimizers:
            for owner in opt.owners:
                if owner == target or target.startswith(owner + ".") or owner.startswith(target + "."):
                    return True
            if not opt.resolved and (target in opt.mentioned or root in opt.mentioned):
                return True
        return False

    # ----- messages -----------------------------------------------------------------------------------
    def _report(self, call: _ModuleCall, finding: tuple[str, str], fixable: bool = True) -> None:
        if not call.input_carries and self._holds_no_parameters(call):
            return  # a normaliser of buffers on data without a graph records nothing
        if self._a_criterion(call):
            return  # nn.BCEWithLogitsLoss(...): a criterion, no parameters; what it is fed decides
        if self._forward_turns_grad_off(call):
            return  # @torch.no_grad() on the class's forward: the call records nothing
        if self._forward_differentiates(call):
            return  # its forward differentiates (requires_grad=True, autograd.grad): it needs grad on
        if self._method_backpropagates(call):
            return  # self.backward_D(netD, real, fake): the method backpropagates what it computes itself
        message, help = finding
        self.report(call.node, message, help=help, fix=no_grad_fix(call.node, self.facts) if fixable else None,
                    function=call.function)

    @staticmethod
    def _binding_of(call: _ModuleCall):
        """The binding of the called object: a ``self.x`` of the class, or a name of the function."""
        info = call.function.class_info
        return info.attributes.get(call.target) if info is not None and call.target.startswith("self.") \
            else call.function.lookup(call.target)

    def _built_from(self, call: _ModuleCall) -> str | None:
        """The name (as this module knows it) of the class the called object was built from."""
        binding = self._binding_of(call)
        built = without_self_returning_calls(binding.node) if binding is not None else None
        return self.facts.qualified_name(built.func) if isinstance(built, cst.Call) else None

    def _in_project(self, qualified: str) -> str:
        """A class name as this module knows it, as the project names it (a class of this module
        gets the module's name in front)."""
        if qualified in self.facts.class_nodes and self.facts.module_name:
            return f"{self.facts.module_name}.{qualified}"
        return qualified

    def _a_criterion(self, call: _ModuleCall) -> bool:
        """Was the module built from a torch.nn criterion (``nn.BCEWithLogitsLoss(...)``), or from a
        class of the project that holds nothing but criteria handed to it
        (``FocalLoss(nn.BCEWithLogitsLoss())``)?"""
        binding = self._binding_of(call)
        return binding is not None and self._builds_a_criterion(binding.node, call.function, 0)

    def _builds_a_criterion(self, node: cst.CSTNode | None, function: FunctionScope, depth: int) -> bool:
        built = without_self_returning_calls(node)
        if not isinstance(built, cst.Call):
            return False
        qualified = self.facts.qualified_name(built.func) or ""
        if (qualified.startswith("torch.nn.") and qualified.endswith("Loss")) or qualified in PARAMETERLESS_LAYERS:
            return True
        project = self.facts.project
        if project is None or not qualified or depth > 2:
            return False
        qualified = self._in_project(qualified)
        passed_in = project.modules_passed_in(qualified)
        definition = project.definition(qualified) if passed_in else None
        init = definition.class_outline.methods.get("__init__") if definition is not None else None
        if init is None or init.has_star_args:
            return False
        positional, _ = init.parameters(bound=True)
        for parameter in passed_in:
            value = argument_for(built, positional, parameter)
            if value is None or value is False:
                return False  # its default (not read), or hidden in *args
            if isinstance(value, cst.Name):
                values = [v for v in _values_bound(function.node, value.value) if v is not built]
                if not values or value.value in _parameter_names(function.node):
                    return False
            else:
                values = [value]
            if not all(self._builds_a_criterion(v, function, depth + 1) for v in values):
                return False
        return True

    def _holds_no_parameters(self, call: _ModuleCall) -> bool:
        """Was the module built from a torch.nn layer that owns no parameter (``nn.AdaptiveAvgPool2d``,
        ``nn.ReLU``), or a class of the project that holds none?"""
        project = self.facts.project
        qualified = self._built_from(call)
        if qualified in PARAMETERLESS_LAYERS:
            return True
        if project is None or qualified is None:
            return False
        return project.without_parameters(self._in_project(qualified))

    def _forward_turns_grad_off(self, call: _ModuleCall) -> bool:
        """Was the module built from a class (of this module or the project) whose ``forward``
        runs with grad off whoever calls it (``@torch.no_grad()`` on it)?"""
        qualified = self._built_from(call)
        if qualified is None:
            return False
        facts = self.facts
        if qualified in facts.class_nodes:
            scopes = [facts.function_scopes.get(id(node)) for node in facts.methods_of(qualified, "forward")]
            return bool(scopes) and all(scope is not None and scope.entry_grad_mode is GradMode.OFF
                                        and scope.entry_grad_mode_explicit for scope in scopes)
        project = facts.project
        if project is None or facts.project_definition(qualified) is None:
            return False
        key = project.method_owner(qualified, "forward")
        summary = project.function_summary(key) if key is not None else None
        return summary is not None and summary.entry_grad_mode is GradMode.OFF

    def _forward_differentiates(self, call: _ModuleCall) -> bool:
        """Is the module an instance of a class of this file (built here, or the class every
        caller passes as this parameter) whose ``forward`` makes tensors require grad or takes
        gradients itself (an energy model optimising its labels, a potential differentiating its
        input for forces)? It cannot run under no_grad."""
        facts = self.facts
        qualified = self._built_from(call)
        if qualified is None and "." not in call.target and call.target in call.function.parameters:
            qualified = facts.parameter_class(call.function, call.target)
        if qualified is None:
            # built by a factory nothing can read (utils.get_class(conf.model_class)(...)), or a
            # parameter annotated with a class of the project (``method: FSmethod``: any of its
            # subclasses): it may be the project's class whose forward differentiates
            return (self._built_by_a_factory(call) or self._annotated_with_a_project_class(call)) \
                and facts.project is not None and facts.project.some_forward_differentiates() is not False
        if qualified not in facts.class_nodes:
            # a class of another module of the project: its forward, or what it calls
            # (``self.meta_forward(...)``), takes gradients (its summaries say so)
            project = facts.project
            definition = facts.project_definition(qualified) if project is not None else None
            if definition is None or definition.kind != "class":
                return False
            key = project.method_owner(definition.qualified, "forward")
            return key is not None and project.has_effect(key, BACKWARD) is True
        scopes = [facts.function_scopes.get(id(node)) for node in facts.methods_of(qualified, "forward")]
        return any(scope is not None and scope.requires_grad_inputs for scope in scopes)

    def _annotated_with_a_project_class(self, call: _ModuleCall) -> bool:
        """Is the called module a parameter annotated with a class of the project (or of this
        file), whose instances may be of any of its subclasses?"""
        node = getattr(call.function, "node", None)
        if "." in call.target or not isinstance(node, cst.FunctionDef):
            return False
        for param in (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params):
            if param.name.value == call.target and param.annotation is not None:
                qualified = self.facts.qualified_name(param.annotation.annotation)
                if qualified in self.facts.class_nodes:
                    return True
                definition = self.facts.project_definition(qualified)
                return definition is not None and definition.kind == "class"
        return False

    def _method_backpropagates(self, call: _ModuleCall) -> bool:
        """Is the call a method of a module (``self.backward_D(...)``), not its forward, that runs a
        backward pass itself, directly or through what it calls? Its graph is used where it is made."""
        func = call.node.func
        if not isinstance(func, cst.Attribute) or func.attr.value in ("forward", "__call__"):
            return False
        found = self.facts.callees(call.node)
        return found is not None and bool(found[0]) and self.facts.callees_train(
            [id(definition) for definition in found[0]]) is True

    def _built_by_a_factory(self, call: _ModuleCall) -> bool:
        """Was the module built by calling what another call returned (``get_class(name)(...)``,
        ``getattr(models, name)(...)``, ``REGISTRY[name](...)``): a class nothing here names?"""
        binding = self._binding_of(call)
        built = without_self_returning_calls(binding.node) if binding is not None else None
        return isinstance(built, cst.Call) and isinstance(built.func, (cst.Call, cst.Subscript))

    def _eval_message(self, call: _ModuleCall, collected: _Collection | None) -> tuple[str, str]:
        if collected is not None:
            message = (f"'{_short(call.target)}' runs in eval mode with grad on; "
                       f"'{_short(collected.container)}' keeps its graphs")
        elif call.mode_from_callers:
            message = (f"'{_short(call.target, 60)}' is in eval mode (every caller hands it in so) but runs "
                       "with autograd enabled")
        else:
            message = f"'{_short(call.target, 60)}' is in eval mode but runs with autograd enabled"
        return message, "run it under 'with torch.no_grad():' (or torch.inference_mode())"

    def _loop_message(self, call: _ModuleCall, collected: _Collection) -> tuple[str, str]:
        return (
            f"'{_short(call.target)}' runs inference with grad on; "
            f"'{_short(collected.container)}' keeps each step's graph",
            "run the loop under 'with torch.no_grad():' (or torch.inference_mode()), or collect detached outputs",
        )

    def _untrainable_message(self, call: _ModuleCall, collected: _Collection) -> tuple[str, str]:
        return (
            f"'{_short(call.target)}' is loaded here and never trained, yet runs with grad on; "
            f"'{_short(collected.container)}' keeps each graph",
            "run the loop under 'with torch.no_grad():' (or torch.inference_mode()), and call "
            f"{_short(call.target)}.eval() for inference",
        )

    def _untrained_message(self, call: _ModuleCall, evidence: str) -> tuple[str, str]:
        return (
            f"'{_short(call.target)}' is not trained ({evidence}) but runs with grad on",
            f"call it under 'with torch.no_grad():' and freeze it with {_short(call.target)}.requires_grad_(False)",
        )

    VALID = [
        # a module file's smoke test: masks built from made-up tensors (a comparison, ~, torch.triu
        # of torch.ones) are made up too; one forward at toy size, its graph dies with the statement
        """
import torch
from torch import nn

if __name__ == "__main__":
    attn = nn.MultiheadAttention(32, 4, batch_first=True)
    attn.eval()
    query = torch.randn(10, 7, 32)
    key_padding_mask = ~(torch.arange(7)[None] < torch.randint(1, 7, (10,))[:, None])
    attn_mask = torch.triu(torch.ones(7, 7, dtype=torch.bool), 1)
    attn(query, query, query, attn_mask=attn_mask, key_padding_mask=key_padding_mask)[1][0, 0]
""",
        # the same helper, but one caller hands the model in train mode (and trains on the output)
        """
import torch


def greedy_generate(model, input_ids, steps):
    generated = input_ids
    for _ in range(steps):
        logits = model(generated)
        generated = torch.cat([generated, logits[:, -1].argmax(-1, keepdim=True)], dim=-1)
    return generated


def sanity_check(model, input_ids):
    model.eval()
    print(greedy_generate(model, input_ids, 32).tolist())


def rollout_loss(model, input_ids, reward):
    model.train()
    tokens = greedy_generate(model, input_ids, 8)
    return reward(tokens)
""",
        # every caller hands it in eval mode, but the helper is also handed on uncalled (a callback
        # another caller may run with any model)
        """
import torch


def score(model, x):
    return model(x).softmax(-1)


def check(model, x, hooks):
    model.eval()
    print(score(model, x))
    hooks.append(score)
""",
        # eval mode handed in, but the helper feeds the model a volatile Variable: code for a
        # PyTorch that honours the flag (its 0.3 branch), whose callers' grad mode says nothing
        """
import torch
import torch.nn.functional as F
from torch.autograd import Variable


def predict_whole(net, image, size):
    prediction = net(Variable(torch.from_numpy(image), volatile=True).cuda())
    prediction = F.interpolate(prediction, size=size, mode="bilinear")
    return prediction.cpu().data.numpy()


def main(model, images):
    model.eval()
    for image in images:
        if torch.__version__[:3] == "0.3":
            output = predict_whole(model, image, (512, 512))
        else:
            with torch.no_grad():
                output = predict_whole(model, image, (512, 512))
        print(output.argmax())
""",
        # eval mode handed in, but the features leave the helper with their graphs (returned;
        # handed to a function that trains a probe on them): who uses them is not seen here
        """
import torch


def embed(model, x):
    return model(x)


def fit_probe(features, labels):
    probe = torch.nn.Linear(features.shape[1], 10)
    torch.nn.functional.cross_entropy(probe(features), labels).backward()


def features_of(model, loader):
    feats = []
    for x, _ in loader:
        feats.append(model(x))
    fit_probe(torch.cat(feats), None)


def main(model, loader, x):
    model.eval()
    print(embed(model, x).shape)
    features_of(model, loader)
""",
        # eval mode handed in, but the caller backpropagates through the result (an adversarial
        # example built on a model in eval mode)
        """
import torch


def logits_of(model, x):
    return model(x)


def attack(model, x, y, eps):
    model.eval()
    x = x.clone().requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(logits_of(model, x), y)
    loss.backward()
    return (x + eps * x.grad.sign()).detach()
""",
        # a discriminator scoring patches inside the generator's backward: what the loop adds to
        # the loss reaches self.loss_G_A (+=), which self.loss_G backpropagates in the same call
        """
import torch
from torch import nn


class Model:
    def __init__(self, opt):
        self.opt = opt
        self.netG = nn.Linear(4, 4).cuda()
        self.netD_P = nn.Linear(4, 1).cuda()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters())
        self.optimizer_D_P = torch.optim.Adam(self.netD_P.parameters())

    def backward_G(self):
        self.fake = self.netG(self.real)
        self.loss_G_A = self.netD_P(self.fake).mean()
        loss_G_A = 0
        for i in range(self.opt.patches):
            pred_fake_patch_1 = self.netD_P.forward(self.fake[i])
            pred_real_patch_1 = self.netD_P.forward(self.real[i])
            loss_G_A += (pred_real_patch_1 - torch.mean(pred_fake_patch_1)).mean()
        self.loss_G_A += loss_G_A / float(self.opt.patches + 1)
        self.loss_G = self.loss_G_A * 2
        self.loss_G.backward()

    def backward_D_P(self):
        loss = self.netD_P(self.real).mean() - self.netD_P(self.fake.detach()).mean()
        loss.backward()

    def optimize_parameters(self, real):
        self.real = real
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
        self.optimizer_D_P.zero_grad()
        self.backward_D_P()
        self.optimizer_D_P.step()
""",
        # the batch-norm update pass under no_grad: train mode still updates the statistics
        """
import torch


def update_bn(loader, model):
    model.train()
    with torch.no_grad():
        for images, _ in loader:
            model(images.cuda())
""",
        # an evaluation that asks for input gradients (img.requires_grad = True, a Sobolev or
        # saliency term computed by a criterion it cannot read): grad on is the point
        """
import torch

def test(test_loader, snet, criterion_kd):
    snet.eval()
    for img, target in test_loader:
        img = img.cuda()
        img.requires_grad = True
        out_s = snet(img)
        kd_loss = criterion_kd(out_s, img, target)
        print(kd_loss.item())
""",
        # a linear regressor (one nn.Linear) run with grad on and read detached: its graph saves
        # only its input and weight, both alive anyway
        """
import numpy as np
import torch
import torch.nn as nn


class LinearModel(nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, output_dim)

    def forward(self, x):
        y = self.fc1(x)
        return y


class Classifier:
    def __init__(self, nets, input_dim):
        self.nets = nets
        self.model = LinearModel(input_dim, 1)

    def predict_mean(self):
        outputs = self.model.forward(self.nets)
        return np.mean(outputs.detach().cpu().numpy())
""",
        # a GAN step that reuses the generator's output with its graph for the generator's loss
        """
import torch


def train(netG, netD, loader, nz):
    optD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
    optG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)
    for real in loader:
        noise = torch.randn(real.size(0), nz, 1, 1)
        fake = netG(noise)
        errD = netD(fake.detach()).mean() - netD(real).mean()
        optD.zero_grad()
        errD.backward()
        optD.step()
        errG = -netD(fake).mean()
        optG.zero_grad()
        errG.backward()
        optG.step()
""",
        # a shape probe on a random tensor under __main__; the same name is bound to real data
        # only further down (that forward is another call, checked on its own)
        """
import torch
import torchvision

if __name__ == "__main__":
    model = torchvision.models.alexnet()
    model.eval()
    input = torch.randn(1, 3, 224, 224)
    output = model(input)
    print(output.size())
    model.load_state_dict(torch.load("alexnet.pth"))
    input = preprocess("cat.jpg")
    with torch.no_grad():
        print(model(input).argmax())
""",
        # checking a traced model against the eager one on example inputs: one forward at toy size
        """
import torch

def convert_to_torchscript(model, history, features, save_path):
    model.model.eval()
    example = torch.rand(2, history, features)
    traced = torch.jit.trace(model.model, example)
    check = torch.rand(4, history, features)
    assert torch.eq(traced(check), model.model(check)).all()
    traced.save(save_path)
""",
        # a teacher whose parameters a helper of the module freezes (requires_grad False on each): its
        # forward on inputs that need no grad records nothing
        """
import copy
import torch
from torch import nn

class Teacher(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.student = backbone
        self.teacher = copy.deepcopy(backbone)
        freeze(self.teacher)

model = Teacher(nn.Linear(8, 8))
optimizer = torch.optim.AdamW(model.student.parameters(), lr=1e-4)
for x, y in loader:
    target = model.teacher(x)
    loss = torch.nn.functional.mse_loss(model.student(y), target)
    loss.backward()
    optimizer.step()

def freeze(module):
    for p in module.parameters():
        p.requires_grad_(False)
""",
        # a test function (no arguments, pytest's naming) that runs a real model and checks a shape:
        # its graph dies with the test
        """
import torch
import torchaudio

def test():
    for name in ("small", "large"):
        model = build(name)
        wav, sr = torchaudio.load(f"test_{name}.wav")
        out = model(wav.unsqueeze(0))[0]
        assert out.shape == wav.shape
""",
        # a module's forward that puts its inner model in eval mode and returns its output: the
        # module's callers (a predict loop under no_grad, a framework) choose the grad mode
        """
import torch
from torch import nn

class Detector(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        self.model.eval()
        return self.model(x)
""",
        # ... also when it detaches what it hands back (a vocoder wrapper)
        """
import torch
from torch import nn

class Vocoder(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        model = self.model.eval()
        return model(x.transpose(-1, -2)).detach()
""",
        # the model's forward optimises its labels by gradient descent: it needs grad on
        """
import torch
from torch import nn

class EnergyModel(nn.Module):
    def __init__(self, net, n_cls, n_iter):
        super().__init__()
        self.net, self.n_cls, self.n_iter = net, n_cls, n_iter

    def forward(self, x):
        y = torch.zeros(x.size(0), self.n_cls, requires_grad=True)
        for _ in range(self.n_iter):
            energy = self.net(x, y).sum()
            (grad,) = torch.autograd.grad(energy, y, create_graph=True)
            y = y - 0.1 * grad
        return y

def test(model, loader):
    model.eval()
    correct = 0
    for x, target in loader:
        correct += model(x).argmax(1).eq(target).sum().item()
    return correct

def main(net, loader):
    return test(EnergyModel(net, 10, 5), loader)
""",
        # a criterion module built in the loss function (no parameters): its result is the loss
        """
import torch
from torch import nn

def compute_loss(predictions, targets):
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0]))
    total = torch.zeros(1)
    for layer_predictions, layer_targets in zip(predictions, targets):
        total += bce(layer_predictions[..., 4], layer_targets)
    return total
""",
        # ... on a made-up input moved and scaled (torch.ones(...).to(device) * 255.)
        """
import torch
from torch import nn

if __name__ == "__main__":
    model = nn.Conv2d(3, 8, 3).to("cuda")
    model.eval()
    image = torch.ones(1, 3, 64, 64).to("cuda") * 255.
    print(model(image).view(-1).cpu().detach().numpy())
    cropped = model(image[:, :, :32])
    print(cropped.shape)
""",
        # the actor's optimizer is handed in (built elsewhere): whether it holds the actor is unknown
        """
import torch
import torch.nn.functional as F


class SAC:
    def __init__(self, actor, critic, actor_optimizer):
        self.actor = actor
        self.critic = critic
        self.actor_optimizer = actor_optimizer
        self.critic_optimizer = torch.optim.Adam(critic.parameters(), lr=3e-4)

    def train(self, observations, targets):
        new_actions = self.actor(observations)
        policy_loss = F.mse_loss(self.critic(observations), new_actions)
        self.actor_optimizer.zero_grad()
        self.critic_optimizer.zero_grad()
        policy_loss.backward()
        self.actor_optimizer.step()
        self.critic_optimizer.step()
""",
        # a timing loop in a model file's __main__ block: random inputs, outputs never read
        """
import time
import torch
from torch import nn

if __name__ == "__main__":
    net = nn.Conv2d(8, 8, 3).cuda()
    net.eval()
    x = torch.randn(4, 8, 32, 32).cuda()
    for _ in range(5):
        y = net(x)
    start = time.time()
    for _ in range(10):
        y = net(x)
    print((time.time() - start) / 10)
""",
        # a smoke test of a model file, run from its __main__ block: one forward on random inputs
        """
import torch
from torch import nn

def _test_decoder():
    m = nn.TransformerDecoderLayer(16, 2)
    m.eval()
    memory = torch.randn(7, 2, 16)
    out = m(torch.randn(5, 2, 16), memory)
    print(out.shape)

if __name__ == "__main__":
    _test_decoder()
""",
        # the same rollout, but a caller trains on what is returned (its loss is backpropagated)
        """
import torch
from torch import nn

class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 8)

    def simulate(self, x0, steps):
        states = [x0]
        for _ in range(steps):
            states.append(states[-1] + self.net(states[-1]))
        return torch.stack(states)

class Experiment:
    def __init__(self, system: Dynamics, optimizer):
        self.system = system
        self.optimizer = optimizer

    def predict(self, trajectories):
        predictions = []
        for traj in trajectories:
            predictions.append(self.system.simulate(traj[0], len(traj) - 1))
        return predictions

    def fit(self, trajectories):
        predictions = self.predict(trajectories)
        loss = sum(((p - t) ** 2).mean() for p, t in zip(predictions, trajectories))
        loss.backward()
        self.optimizer.step()
""",
        # the caller hands the outputs on (returns them): someone unseen chooses what to do
        """
import torch
from torch import nn

class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 8)

    def simulate(self, x0, steps):
        states = [x0]
        for _ in range(steps):
            states.append(states[-1] + self.net(states[-1]))
        return torch.stack(states)

class Experiment:
    def __init__(self, system: Dynamics):
        self.system = system

    def predict(self, trajectories):
        predictions = []
        for traj in trajectories:
            predictions.append(self.system.simulate(traj[0], len(traj) - 1))
        return predictions

    def evaluation(self, trajectories):
        predictions = self.predict(trajectories)
        return predictions, len(predictions)
""",
        # the model's method turns grad off itself: what it returns holds no graph
        """
import torch
from torch import nn

class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 8)

    @torch.no_grad()
    def simulate(self, x0, steps):
        states = [x0]
        for _ in range(steps):
            states.append(states[-1] + self.net(states[-1]))
        return torch.stack(states)

class Experiment:
    def __init__(self, system: Dynamics):
        self.system = system

    def predict(self, trajectories):
        predictions = []
        for traj in trajectories:
            predictions.append(self.system.simulate(traj[0], len(traj) - 1))
        return predictions

    def error(self, trajectories):
        predictions = self.predict(trajectories)
        return sum(((p - t) ** 2).mean().item() for p, t in zip(predictions, trajectories))
""",
        # a factory's closure: it runs where the factory's callers call it (under no_grad in a
        # sampler, with grad in a loss), so they choose the grad mode
        """
import torch
def get_model_fn(model, train=False):
    def model_fn(x, labels):
        if not train:
            model.eval()
            return model(x, labels)
        model.train()
        return model(x, labels)
    return model_fn
""",
        # no_grad context
        """
import torch
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
""",
        # no_grad decorator, no_grad via the caller, inference_mode
        """
import torch
@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return [model(x) for x in loader]

def validate(model, loader):
    model.eval()
    return [model(x) for x in loader]

def fit(model, loader):
    with torch.inference_mode():
        validate(model, loader)
""",
        # only called from a function that is itself only called under no_grad (two levels)
        """
import torch
class FID:
    def features(self, images):
        self.inception.eval()
        return self.inception(images)[0]

    def dataset_stats(self, loader):
        return [self.features(x) for x in loader]

    @torch.inference_mode()
    def score(self, loader):
        return self.dataset_stats(loader)
""",
        # saliency: the eval-mode output is backpropagated to the input
        """
import torch
def saliency(model, image, target):
    model.eval()
    image.requires_grad_()
    out = model(image)
    out[0, target].backward()
    return image.grad.abs()
""",
        # a model that differentiates its inputs inside forward (forces of an interatomic potential):
        # the inputs are made to require grad, the eval-mode forward needs autograd
        """
import torch
def predict_forces(model, loader, device):
    model.eval()
    results = []
    for batch in loader:
        batch = batch.to(device)
        batch["pos"].requires_grad_(True)
        output = model(batch)
        results.append(output.detach().cpu())
    return results
""",
        # adversarial examples with autograd.grad
        """
import torch
import torch.nn.functional as F
def fgsm(model, x, y, eps):
    model.eval()
    x_adv = x.clone().requires_grad_(True)
    loss = F.cross_entropy(model(x_adv), y)
    grad, = torch.autograd.grad(loss, [x_adv])
    return x_adv + eps * grad.sign()
""",
        # Grad-CAM: a backward pass through a score of the eval-mode output, with a one-hot gradient,
        # and a second (text) tower: the gradients are the point, nothing is trained
        """
import torch
class GradCAM:
    def __call__(self, image, class_idx):
        self.model.eval()
        logits = self.model(image)
        one_hot = torch.zeros_like(logits)
        one_hot[:, class_idx] = 1.0
        self.model.zero_grad()
        logits.backward(one_hot)
        return (self.gradients.mean((2, 3), keepdim=True) * self.activations).sum(1).relu()

def explain_similarity(image_encoder, text_encoder, image, tokens):
    image_encoder.eval()
    image_features = image_encoder(image)
    text_features = text_encoder(tokens)
    score = (image_features * text_features).sum()
    score.backward()
    return image_encoder.grads
""",
        # a method merely named eval on something that is not a module
        """
import torch
def run(env, agent):
    env.eval()
    state = env.reset()
    return state
""",
        # back in train mode before the call
        """
import torch
def epoch(model, train_loader, opt, crit):
    model.eval()
    model.train()
    for x, y in train_loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
""",
        # training in eval mode on purpose (frozen batch norm): the output is backpropagated
        """
import torch
def finetune(model, loader, opt, crit):
    model.eval()
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
""",
        # a frozen teacher does not record a graph (also when frozen in a chain of calls)
        """
import torch
def distill(teacher, student, loader, opt, kd):
    teacher.eval()
    teacher.requires_grad_(False)
    for x, y in loader:
        loss = kd(student(x), teacher(x))
        loss.backward()
        opt.step()

def sample(sampler, labels):
    sampler.eval().requires_grad_(False).to("cuda")
    dist = []
    for c in labels:
        dist.append(sampler(c))
    return torch.cat(dist).cpu().numpy()
""",
        # a GAN generator step through an eval-mode discriminator: the backward must pass
        # through it to reach the generator, so its activations are needed (fastai GANTrainer)
        """
import torch
def generator_step(generator, discriminator, loader, opt_g, crit):
    discriminator.eval()
    generator.train()
    for z, _ in loader:
        fake = generator(z)
        loss = crit(discriminator(fake), torch.ones(z.size(0)))
        opt_g.zero_grad()
        loss.backward()
        opt_g.step()
""",
        # two towers both in the optimizer, one kept in eval mode (frozen batch-norm statistics)
        """
import torch
def train(image_tower, text_tower, loader, clip_loss):
    opt = torch.optim.AdamW(list(image_tower.parameters()) + list(text_tower.parameters()))
    image_tower.eval()
    for images, tokens in loader:
        loss = clip_loss(image_tower(images), text_tower(tokens))
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # the PyTorch transfer-learning tutorial: one loop for both phases, grad on only for "train";
        # the criterion fed with the model's output is not "another module being trained"
        """
import torch
def train_model(model, criterion, optimizer, dataloaders, num_epochs=25):
    for epoch in range(num_epochs):
        for phase in ["train", "val"]:
            if phase == "train":
                model.train()
            else:
                model.eval()
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
    return model
""",
        # Lightning runs validation_step under no_grad
        """
import torch
import lightning as L
class Model(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.backbone.eval()
        return self.backbone(batch)
""",
    ]

    VALID += [
        # the output reaches a loss handed to a step of another object (which may backpropagate
        # it): not only read down to numbers
        """
import torch

def fit_epoch(model, loader, trainer):
    for x, y in loader:
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        trainer.step(loss)
        print(out.shape[0], loss.item())
""",
        # a decorator of the file whose wrapper runs the function under no_grad
        """
import torch
import torch.nn as nn

def make_nograd_func(func):
    def wrapper(*f_args, **f_kwargs):
        with torch.no_grad():
            ret = func(*f_args, **f_kwargs)
        return ret
    return wrapper

model = nn.Linear(4, 2)

@make_nograd_func
def test_sample(sample):
    model.eval()
    return model(sample)[-1]
""",
        # a module file's smoke test: a module that draws its own values, run once under __main__
        """
import torch
import torch.nn as nn

class L0Module(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.log_alpha = nn.Parameter(torch.zeros(n))
    def forward(self):
        return torch.sigmoid(self.log_alpha + torch.rand_like(self.log_alpha))

if __name__ == "__main__":
    l0_module = L0Module(12)
    l0_module.eval()
    zs = l0_module()
    print(zs.sum())
""",
        # read detached for the discriminator, but the same function backpropagates the generator
        # through it; and a sample also returned as it is (its caller chooses)
        """
import torch
import torch.nn as nn

class GAN:
    def __init__(self):
        self.gen, self.dis = nn.Linear(8, 8), nn.Linear(8, 1)

    def train_step(self, z, opt_d):
        fake = self.gen(z)
        d_loss = self.dis(fake.detach()).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = -self.dis(fake).mean()
        g_loss.backward()

    def sample(self, z, log):
        out = self.gen(z)
        log.append(out.detach().cpu())
        return out
""",
        # the global model is put back in training mode by a function of the module: its mode where
        # transcribe() runs is unknown
        """
import torch
import torch.nn as nn

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(80, 16)
    def forward(self, feats):
        return self.proj(feats)

model = Encoder()
model.eval()

def transcribe(feats, decoder):
    logits = model(feats)
    return decoder.decode(logits)

def finetune(loader, optimizer):
    model.train()
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # every caller runs it under no_grad
        """
import torch
import torch.nn as nn

model = nn.Linear(80, 16)
model.eval()

def transcribe(feats):
    logits = model(feats)
    return logits.argmax(-1).tolist()

def serve(requests):
    with torch.no_grad():
        return [transcribe(r) for r in requests]
""",
        # Grad-CAM through an attribute: the score kept on self is what is backpropagated
        """
import torch
class ModelWithHooks:
    def __init__(self, model):
        self.model = model
    def class_score(self, logits, class_idx):
        return logits[:, class_idx].squeeze()
    def __call__(self, x, class_idx):
        self.model.eval()
        logits = self.model(x)
        self.score = self.class_score(logits, class_idx)
        self.model.zero_grad()
        self.score.sum().backward()
        return logits
""",
        # a forward pass layer by layer, keeping the outputs later layers read (YOLO-style)
        """
import torch
from torch import nn
class Net(nn.Module):
    def _predict_once(self, x):
        y = []
        for m in self.model:
            if m.f != -1:
                x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]
            x = m(x)
            y.append(x if m.i in self.save else None)
        return x
""",
        # a grad context held in a variable, or chosen by an if-expression (lightning)
        """
import contextlib
import torch
def extract(model, loader, freeze=True):
    model.eval()
    ctx = torch.no_grad() if freeze else contextlib.nullcontext()
    feats = []
    with ctx:
        for x in loader:
            feats.append(model(x).cpu())
    with contextlib.nullcontext() if not freeze else torch.no_grad():
        last = model(x)
    return feats, last
""",
        # the global switch as a statement
        """
import torch
def evaluate(model, loader):
    model.eval()
    torch.set_grad_enabled(False)
    return [model(x).argmax(1) for x, y in loader]
""",
        # set_grad_enabled(flag): grad may be off, so not reported (skorch, speechbrain)
        """
import torch
def evaluate(model, loader, training=False):
    model.eval()
    outs = []
    for x in loader:
        with torch.set_grad_enabled(training):
            outs.append(model(x))
    return outs
""",
        # frozen through its parameters (speechbrain's freeze_model)
        """
import torch
def distill(student, teacher, loader, opt, crit):
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad = False
    for x, y in loader:
        loss = crit(student(x), teacher(x))
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # a loop shared by training and evaluation: grad follows the flag, or the evaluating
        # call turns it off, or no call in view says which path runs, or the output is returned
        """
import torch
import torch.nn.functional as F
def run_epoch(model, loader, optimizer, is_train=True):
    with torch.set_grad_enabled(is_train):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            if is_train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

def run_split(model, loader, optimizer, phase):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if phase == "train":
            loss.backward()
            optimizer.step()

def step_all(model, loader, optimizer, train):
    outputs = []
    for x, y in loader:
        out = model(x)
        if train:
            F.cross_entropy(out, y).backward()
            optimizer.step()
        outputs.append(out)
    return outputs

def main(model, train_loader, val_loader, optimizer):
    run_epoch(model, val_loader, optimizer, is_train=False)
    run_split(model, train_loader, optimizer, "train")
    with torch.no_grad():
        run_split(model, val_loader, optimizer, "val")
    step_all(model, val_loader, optimizer, train=False)
""",
        # outputs collected and returned: to callers unseen (not called in the file), called
        # under no_grad, or in a file that trains on them
        """
import torch
def embed_all(encoder: torch.nn.Module, images):
    feats = []
    for image in images:
        feats.append(encoder(image))
    return torch.cat(feats)

def features(backbone: torch.nn.Module, images):
    out = []
    for image in images:
        out.append(backbone(image))
    return torch.stack(out)

def train_head(backbone, head, images, labels, optimizer):
    loss = torch.nn.functional.cross_entropy(head(features(backbone, images)), labels)
    loss.backward()
    optimizer.step()

if __name__ == "__main__":
    encoder = torch.hub.load("facebookresearch/dino:main", "dino_vits16")
    with torch.no_grad():
        torch.save(embed_all(encoder, torch.randn(100, 1, 3, 224, 224)), "feats.pt")
""",
        # mode chosen by a branch: unknown afterwards
        """
import torch
def run_epoch(model, loader, phase):
    if phase == "train":
        model.train()
    else:
        model.eval()
    for x, y in loader:
        out = model(x)
""",
        # a dry run before tracing: the result is dropped at once
        """
import torch
def export(model, example, path):
    model.eval()
    model(example)
    _ = model(example)
    traced = torch.jit.trace(model, example)
    traced.save(path)
""",
        # inference loops that keep no graph: reduced per batch, detached, or under no_grad
        """
import torch
def predict(model, loader):
    preds, embeddings = [], []
    for x in loader:
        out = model(x)
        preds.append(out.argmax(-1))
        embeddings.append(out.detach().cpu())
    return torch.cat(preds), torch.cat(embeddings)
""",
        # outputs collected in a rollout whose container reaches a backward pass, here or in a
        # function it is handed to (REINFORCE), or that is returned to the caller (an RNN unroll)
        """
import torch
def reinforce(policy, env, optimizer, episodes):
    for episode in range(episodes):
        state, log_probs, rewards, done = env.reset(), [], [], False
        while not done:
            probs = policy(state)
            action = torch.distributions.Categorical(probs).sample()
            log_probs.append(torch.distributions.Categorical(probs).log_prob(action))
            state, reward, done = env.step(action)
            rewards.append(reward)
        update_policy(optimizer, log_probs, rewards)

def rollout(policy, env, steps):
    log_probs = []
    for t in range(steps):
        log_probs.append(policy(env.state()))
    return torch.stack(log_probs)
""",
        # a training step where the second model is trained too (mutual learning), and a
        # teacher whose output is detached... still in the student's optimizer: trained
        """
import torch
import torch.nn.functional as F
def mutual(net_a, net_b, loader):
    opt = torch.optim.SGD(list(net_a.parameters()) + list(net_b.parameters()), lr=0.1)
    for x, y in loader:
        out_a, out_b = net_a(x), net_b(x)
        loss = F.cross_entropy(out_a, y) + F.cross_entropy(out_b, y) + F.mse_loss(out_a, out_b.detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # FixMatch: the same model makes the pseudo-labels and is trained on them
        """
import torch
import torch.nn.functional as F
def fixmatch_step(model, weak, strong, opt):
    pseudo = model(weak).softmax(-1).argmax(-1)
    loss = F.cross_entropy(model(strong), pseudo)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
        # a teacher under no_grad (the PyTorch distillation tutorial)
        """
import torch
import torch.nn as nn
def train_knowledge_distillation(teacher, student, train_loader, epochs, T):
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
    teacher.eval()
    student.train()
    for epoch in range(epochs):
        for inputs, labels in train_loader:
            optimizer.zero_grad()
            with torch.no_grad():
                teacher_logits = teacher(inputs)
            student_logits = student(inputs)
            soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
            soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
            loss = -(soft_targets * soft_prob).sum() / soft_prob.size(0)
            loss.backward()
            optimizer.step()
""",
        # a model built here but handed to a helper that may train it, or held by an optimizer;
        # a module's own method building a layer it runs
        """
import torch
from transformers import AutoModel
def finetune_and_embed(pages, tokenizer, train_fn):
    model = AutoModel.from_pretrained("bert-base-uncased")
    train_fn(model)
    outs = []
    for page in pages:
        outs.append(model(tokenizer(page, return_tensors="pt").input_ids)[1])
    return outs

def embed_with_optimizer(pages):
    model = AutoModel.from_pretrained("bert-base-uncased")
    opt = torch.optim.AdamW(model.parameters())
    outs = []
    for ids in pages:
        outs.append(model(ids)[1])
    return outs, opt

class MultiScale(torch.nn.Module):
    def down_sample(self, x, layers):
        pool = torch.nn.Conv1d(8, 8, 3, stride=2)
        outs = []
        for _ in range(layers):
            x = pool(x)
            outs.append(x)
        return outs
""",
        # a cached prediction computed under no_grad, or cached detached; a class that trains through it
        """
import functools
import torch
class Posterior:
    def __init__(self, model, x):
        self.model = model
        self.x = x
        self._probs = None

    @functools.cached_property
    @torch.no_grad()
    def predictions(self):
        return self.model(self.x)

    @property
    def probs(self):
        if self._probs is None:
            self._probs = self.model(self.x).softmax(-1).detach()
        return self._probs

class OpenVinoBackend:
    def __init__(self, core, ov_model):
        self.compile_model = functools.partial(core.compile_model, device_name="CPU")
        self.ov_compiled = None
        self.ov_model = ov_model

    def compiled(self):
        if self.ov_compiled is None:
            self.ov_compiled = self.compile_model(self.ov_model)
        return self.ov_compiled

class Learner:
    def __init__(self, model, x, optimizer):
        self.model, self.x, self.optimizer = model, x, optimizer
        self._out = None

    @property
    def out(self):
        if self._out is None:
            self._out = self.model(self.x)
        return self._out

    def step(self, y):
        (self.out - y).pow(2).mean().backward()
        self.optimizer.step()
""",
        # a perceptual loss: the feature network runs in eval mode inside the loss module's
        # forward, whose result the caller backpropagates into the generator
        """
import torch
from torch import nn
class FeatureLoss(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.model = features
        self.model.eval()
        self.criterion = nn.L1Loss()
    def forward(self, pred, gt):
        self.model.eval()
        pred_feature = self.model(pred)
        gt_feature = self.model(gt).detach()
        return self.criterion(pred_feature, gt_feature)
""",
        # a module's own method that runs its parts tile by tile and returns the joined output:
        # part of the module's computation, in whatever grad mode its caller chose
        """
import torch
from torch import nn
class AutoencoderKL(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv3d(3, 8, 3, padding=1)
    def tiled_encode(self, x, tile=64):
        rows = []
        for i in range(0, x.shape[-2], tile):
            row = []
            for j in range(0, x.shape[-1], tile):
                time = []
                for k in range(x.shape[2] // 4):
                    time.append(self.encoder(x[:, :, 4 * k:4 * k + 4, i:i + tile, j:j + tile]))
                row.append(torch.cat(time, dim=2))
            rows.append(row)
        result_rows = []
        for row in rows:
            result_rows.append(torch.cat([t[..., :tile, :tile] for t in row], dim=-1))
        return torch.cat(result_rows, dim=-2)
""",
        # the class's forward turns grad off itself: calling the module records nothing
        """
import torch
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
    @torch.no_grad()
    def forward(self, src):
        return self.model.decoder(self.model.encoder(src))
def test(model, loader):
    generator = Generator(model).cuda()
    generator.eval()
    return [generator(src).cpu() for src in loader]
""",
    ]

    INVALID = [
        # a decoding helper handed the model by its one caller right after model.eval(), and
        # nothing backpropagates: every decode step records a graph for nothing
        Invalid("""
import torch


def greedy_generate(model, input_ids, steps):
    generated = input_ids
    for _ in range(steps):
        logits = model(generated)
        generated = torch.cat([generated, logits[:, -1].argmax(-1, keepdim=True)], dim=-1)
    return generated


def sanity_check(model, input_ids):
    model.eval()
    output_ids = greedy_generate(model, input_ids, 32)
    print(output_ids.tolist())
""", line=8),
        # SWA's batch-norm update: a pass over the loader run only for the statistics, its output
        # thrown away, in a function that backpropagates nothing: every pass records a graph
        Invalid("""
import torch


def update_bn(loader, model):
    model.train()
    for images, _ in loader:
        model(images.cuda())
""", line=8),
        # a sampling loop in a __main__ block: each output on random noise is read (saved), in eval mode
        Invalid("""
import torch
from torch import nn

if __name__ == "__main__":
    net = nn.ConvTranspose2d(8, 3, 4).cuda()
    net.eval()
    for i in range(100):
        image = net(torch.randn(1, 8, 16, 16).cuda())
        torch.save(image, f"sample_{i}.pt")
""", line=9),
        # the critic's phase of a GAN step: the generator's output is only read detached (the
        # generator's own loss runs it again), so its recorded graph serves nothing
        Invalid("""
import torch


def train(netG, netD, loader, nz):
    optD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
    optG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)
    for real in loader:
        noise = torch.randn(real.size(0), nz, 1, 1)
        fake = netG(noise)
        errD = netD(fake.detach()).mean() - netD(real).mean()
        optD.zero_grad()
        errD.backward()
        optD.step()
        errG = -netD(netG(noise)).mean()
        optG.zero_grad()
        errG.backward()
        optG.step()
""", line=10),
        # a script's def test(): evaluates the global model and reports accuracy (no assert): an
        # evaluation pass, not a pytest test
        Invalid("""
import torch

model = GCN(nfeat, nhid, nclass).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

def test():
    model.eval()
    output = model(features, adj)
    acc = accuracy(output[idx_test], labels[idx_test])
    print("accuracy", acc.item())

for epoch in range(200):
    model.train()
    optimizer.zero_grad()
    loss = torch.nn.functional.nll_loss(model(features, adj)[idx_train], labels[idx_train])
    loss.backward()
    optimizer.step()
test()
""", line=9),
        # a validation helper without no_grad: every output is reduced to a number at once
        Invalid("""
import math
import torch
import torch.nn as nn

mse_sum = nn.MSELoss(reduction="sum")

def validate(model, validation):
    total_mse, count = 0.0, 0
    for properties in validation:
        _, predicted = model(properties["species"].cuda(), properties["aevs"].cuda())
        total_mse += mse_sum(predicted, properties["energies"].cuda()).item()
        count += predicted.shape[0]
    return math.sqrt(total_mse / count)
""", line=11),
        # a sample grid made during training: the output is only ever read detached
        Invalid("""
import os
import torch
import torch.nn as nn

class GAN:
    def __init__(self):
        self.gen = nn.Linear(512, 3 * 64 * 64)

    def create_grid(self, fixed_input, sample_dir, epoch):
        samples = self.gen(fixed_input)
        torch.save(samples.detach().cpu(), os.path.join(sample_dir, f"gen_{epoch}.pt"))
""", line=11),
        # a global model put in eval mode at module level, run with grad on by a service function
        Invalid("""
import torch
import torch.nn as nn

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(80, 64), nn.ReLU(), nn.Linear(64, 16))
    def forward(self, feats):
        return self.proj(feats)

model = Encoder()
model.eval()

def transcribe(feats):
    logits = model(feats)
    return logits.argmax(-1).tolist()
""", line=16),
        # put in eval mode as it is made (a chain of self-returning calls), then run with grad on
        Invalid("""
import torch
from torch import nn

def detect(frames, device):
    model = nn.Conv2d(3, 8, 3).to(device).eval()
    for frame in frames:
        pred = model(frame.to(device).unsqueeze(0))
        print(pred.amax().item())
""", line=8),
        # a model's own rollout method (it runs the model and returns a graph of its making),
        # collected and returned to a caller that reads the outputs down to numbers
        Invalid("""
import torch
from torch import nn

class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 8)

    def simulate(self, x0, steps):
        states = [x0]
        for _ in range(steps):
            states.append(states[-1] + self.net(states[-1]))
        return torch.stack(states)

class Experiment:
    def __init__(self, system: Dynamics, device="cuda"):
        self.system = system.to(device)

    def predict(self, trajectories):
        predictions = []
        for traj in trajectories:
            predictions.append(self.system.simulate(traj[0], len(traj) - 1))
        return predictions

    def error(self, trajectories):
        predictions = self.predict(trajectories)
        errors = [((p - t) ** 2).mean().item() for p, t in zip(predictions, trajectories)]
        return sum(errors) / len(errors)
""", line=23),
        # outputs collected with their graphs and returned to a caller in a file that trains
        # nothing: nobody will backpropagate them
        Invalid("""
import torch
def embed_all(encoder: torch.nn.Module, images):
    feats = []
    for image in images:
        feats.append(encoder(image))
    return torch.cat(feats)

if __name__ == "__main__":
    encoder = torch.hub.load("facebookresearch/dino:main", "dino_vits16")
    torch.save(embed_all(encoder, torch.randn(100, 1, 3, 224, 224)), "feats.pt")
""", line=6),
        # a train/eval loop run for evaluation: the forward runs, the backward is switched off
        Invalid("""
import torch
import torch.nn.functional as F
def train_and_valid(model, optimizer, loader, is_train=True):
    total = 0.0
    for x, y in loader:
        pred = model(x)
        loss = F.mse_loss(pred, y)
        if is_train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total

def main(model, optimizer, train_loader, val_loader):
    for epoch in range(10):
        train_and_valid(model, optimizer, train_loader, is_train=True)
        train_and_valid(model, optimizer, val_loader, is_train=False)
""", line=7),
        # the same through a helper of the file that runs the model, in the evaluation branch
        Invalid("""
import torch
def forward_model(model, cost, inp, lab):
    out = model(inp)
    return {"loss": cost(out, lab), "err": (out.argmax(1) != lab).float().mean()}

def run_nn(model, optimizer, batches, to_do):
    cost = torch.nn.CrossEntropyLoss()
    loss_sum = 0.0
    for inp, lab in batches:
        if to_do == "train":
            outs = forward_model(model, cost, inp, lab)
            optimizer.zero_grad()
            outs["loss"].backward()
            optimizer.step()
        else:
            outs = forward_model(model, cost, inp, lab)
        loss_sum += outs["loss"].item()
    return loss_sum / len(batches)

def main(model, optimizer, dev):
    print(run_nn(model, optimizer, dev, "valid"))
""", line=17),
        # a module that holds a model passed in and runs its parts: it has parameters
        Invalid("""
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self, model, beam=5):
        super().__init__()
        self.model = model
        self.beam = beam
    def forward(self, src):
        return self.model.decoder(self.model.encoder(src))
def test(model, loader):
    generator = Generator(model).cuda()
    generator.eval()
    return [generator(src).cpu() for src in loader]
""", line=13),
        # an ensemble over every batch: the loop over the models sits inside the loop over data
        Invalid("""
import torch
def ensemble_predict(models, loader):
    for m in models:
        m.eval()
    outputs = []
    for x in loader:
        for m in models:
            outputs.append(m(x))
    return torch.stack(outputs).mean(0).argmax(-1)
""", line=9),
        Invalid("""
import torch
def evaluate(model, loader, crit):
    model.eval()
    total = 0.0
    for x, y in loader:
        out = model(x)
        total += crit(out, y).item()
    return total
""", line=7),
        # validation loop inside the training epoch, without no_grad
        Invalid("""
import torch
def train(model, train_loader, val_loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        for x, y in val_loader:
            preds = model(x).argmax(1)
            correct += (preds == y).sum().item()
""", line=14),
        # model.forward and .train(False)
        Invalid("""
import torch
def predict(net, batches):
    net.train(False)
    return [net.forward(b).argmax(-1) for b in batches]
""", line=5),
        # a teacher in eval mode, called outside no_grad while the student trains
        Invalid("""
import torch
import torch.nn.functional as F
def distill(teacher, student, loader, opt):
    teacher.eval()
    student.train()
    for x, y in loader:
        t_out = teacher(x)
        s_out = student(x)
        loss = F.kl_div(F.log_softmax(s_out, -1), F.softmax(t_out, -1)) + F.cross_entropy(s_out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""", line=8),
        # eval mode set before a branch still holds inside it
        Invalid("""
import torch
def predict(model, batches, verbose):
    model.eval()
    if verbose:
        return [model(b) for b in batches]
    return None
""", line=6),
        # module-level script
        Invalid("""
import torch
from torch import nn
model = nn.Sequential(nn.Linear(4, 4))
model.eval()
x = torch.randn(2, 4)
y = model(x)
""", line=7),
        # inference with a pretrained model never put in eval(): outputs collected with their graphs
        Invalid("""
import torch
from transformers import AutoModel
model = AutoModel.from_pretrained("bert-base-uncased").to("cuda")
embeddings = []
for batch in loader:
    out = model(**batch)
    embeddings.append(out.last_hidden_state[:, 0])
torch.save(torch.cat(embeddings), "embeddings.pt")
""", line=7),
        # ten full forward passes kept alive until the argmax (pytorch/examples' forward-forward predict)
        Invalid("""
import torch
class Net(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = torch.nn.ModuleList([Layer(dims[d], dims[d + 1]) for d in range(len(dims) - 1)])

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness += [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        return torch.cat(goodness_per_label, 1).argmax(1)
""", line=14),
        # a teacher never put in eval mode, called with grad on (the distillation shape of the
        # memory guides); and a DQN target network whose output is only the TD target
        Invalid("""
import torch
import torch.nn.functional as F
def train_student(student_model, teacher_model, train_loader, epochs, T=4.0):
    optimizer = torch.optim.SGD(student_model.parameters(), lr=0.01)
    for epoch in range(epochs):
        for inputs, labels in train_loader:
            teacher_outputs = teacher_model(inputs)
            student_outputs = student_model(inputs)
            loss = F.kl_div(F.log_softmax(student_outputs / T, dim=1), F.softmax(teacher_outputs / T, dim=1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""", line=8),
        Invalid("""
import torch
import torch.nn.functional as F
def dqn_update(q_net, target_net, batch, gamma):
    optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-4)
    q = q_net(batch.obs).gather(1, batch.actions)
    next_q = target_net(batch.next_obs).max(1)[0]
    td_target = batch.rewards + gamma * next_q
    loss = F.mse_loss(q.squeeze(1), td_target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""", line=7),
        # a pretrained model loaded here, never trained, its outputs collected and returned (longformer#36)
        Invalid("""
import torch
from transformers import AutoModel
def embed_pages(pages, tokenizer):
    model = AutoModel.from_pretrained("allenai/longformer-base-4096")
    output_vec = []
    for page in pages:
        input_ids = torch.tensor(tokenizer.encode(page)).unsqueeze(0)
        output = model(input_ids)
        output_vec.append(output[1])
    return output_vec
""", line=9),
        # a prediction cached by an object, computed with grad on (a cached_property, a memoising property)
        Invalid("""
import functools
import torch
class Posterior:
    def __init__(self, model, x):
        self.model = model
        self.x = x
        self._probs = None

    @functools.cached_property
    def predictions(self):
        return self.model(self.x)

    @property
    def probs(self):
        if self._probs is None:
            self._probs = self.model(self.x).softmax(-1)
        return self._probs
""", line=12),
    ]


# ----- helpers -------------------------------------------------------------------------------------
def _called_module(call: cst.Call) -> str | None:
    """``model`` for ``model(x)`` and ``model.forward(x)``; ``self`` for ``self(x)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "forward":
        return dotted_name(func.value)
    if isinstance(func, (cst.Name, cst.Attribute)):
        return dotted_name(func)
    return None


def _short(name: str, limit: int = 20) -> str:
    return name if len(name) <= limit else name[: limit - 3] + "..."


def _walks_the_called_modules(loop: Loop, call: _ModuleCall) -> bool:
    """Does ``loop`` walk over the modules being called (``for layer in self.layers``), not over data?"""
    return call.target.split(".", 1)[0] in loop.target_names and not loop.iterates_data


# Functions that trace, script or export a model from example inputs.
_EXPORTERS = frozenset({"torch.jit.trace", "torch.jit.script", "torch.jit.trace_module", "torch.onnx.export",
                        "torch.onnx.dynamo_export", "torch.export.export"})


def _reads_grad_fn(function: FunctionScope) -> bool:
    """Does ``function`` (its nested functions included: a forward hook it registers) read the
    ``grad_fn`` of a tensor? It inspects the graph a forward records: the graph is the point."""
    node = function.node
    if not isinstance(node, cst.FunctionDef):
        return False
    return any(isinstance(child, cst.Attribute) and child.attr.value == "grad_fn" for child in descendants(node))


def _is_test_function(function: FunctionScope) -> bool:
    """``def test():`` / ``def test_decode():`` taking no arguments and asserting: a test in
    pytest's sense (or one a module's ``__main__`` runs). Not an evaluation pass given a model
    and a loader (``def test(model, loader):``), nor a script's ``def test():`` that evaluates a
    global model and reports a metric without asserting anything: those stay checked."""
    node = function.node
    if not isinstance(node, cst.FunctionDef) or not (function.name == "test" or function.name.startswith("test_")):
        return False
    params = node.params
    if params.params or params.posonly_params or params.kwonly_params or isinstance(params.star_arg, cst.Param) \
            or params.star_kwarg is not None:
        return False
    return _asserts(node.body)


def _asserts(body: cst.CSTNode) -> bool:
    """Is there an ``assert`` in ``body`` (not in a function defined inside it)?"""
    found = False

    class _Asserts(cst.CSTVisitor):
        def visit_Assert(self, node: cst.Assert) -> bool:
            nonlocal found
            found = True
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    body.visit(_Asserts())
    return found


def _is_test_file(path: str) -> bool:
    """pytest's and unittest's conventions: test_*.py, *_test.py, tests.py, conftest.py, or a
    file under a tests/ or test/ folder."""
    pure = PurePath(path)
    name = pure.name
    if name.startswith("test_") or name.endswith("_test.py") or name in ("tests.py", "conftest.py"):
        return True
    return any(part in ("tests", "test") for part in pure.parts[:-1])


def _is_main_guard(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 \
            or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = {literal_value(test.left), literal_value(test.comparisons[0].comparator)}
    names = {dotted_name(test.left), dotted_name(test.comparisons[0].comparator)}
    return "__main__" in sides and "__name__" in names


def _discarded(statement: cst.CSTNode | None, call: cst.Call) -> bool:
    """Is ``call``'s result dropped at the end of its statement: ``model(x)`` alone on a line,
    or bound to ``_``?"""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Expr) and small.value is call:
            return True
        if isinstance(small, cst.Assign) and small.value is call and all(
                isinstance(t.target, cst.Name) and t.target.value.strip("_") == "" for t in small.targets):
            return True
    return False


# Reads that drop the graph (not ``.numpy()``: it raises on a tensor with a graph, so a program
# that runs shows the output had none)
_DETACHING = frozenset({"detach", "detach_", "item", "tolist", "data"})


class _Reads(cst.CSTVisitor):
    """How a local is read in a function body (nested functions left out): every read, the
    reads that drop its graph, and how often it is bound. A read drops the graph when it
    detaches the local (``x.detach()``, ``x.item()``, ``x.data``), reads its metadata
    (``x.shape``, ``x.size(0)``), or sits inside an expression reduced to a number or detached
    (``mse(x, y).item()``, ``(x.argmax(1) == y).sum().tolist()``, ``x.mean(dim=1).detach()``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.total = self.detached = self.bound = 0
        self._detached_nodes: set[int] = set()
        self._bound_nodes: set[int] = set()
        self._reduced: set[int] = set()  # id()s of expressions whose value ends as a number
        self._depth = 0  # how many such expressions the walk is inside

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self._reduced:
            self._depth += 1
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if id(original_node) in self._reduced:
            self._depth -= 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        for element in _flat_targets(node.target):
            if isinstance(element, cst.Name) and element.value == self.name:
                self._bound_nodes.add(id(element))
                self.bound += 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attribute = node.attr.value
        if isinstance(node.value, cst.Name) and node.value.value == self.name and (
                attribute in _DETACHING or attribute in _METADATA):
            self._detached_nodes.add(id(node.value))
        elif attribute in _TO_NUMBERS or attribute in _DETACHING:
            self._reduced.add(id(node.value))  # out.mean(dim=1).detach(): what it reads ends detached

    def visit_Name(self, node: cst.Name) -> None:
        if node.value != self.name or id(node) in self._bound_nodes:
            return
        self.total += 1
        if id(node) in self._detached_nodes or self._depth:
            self.detached += 1


# Reads of a tensor's metadata (no graph used) and calls that end a value as Python numbers.
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "size", "dim", "numel"})
_TO_NUMBERS = frozenset({"item", "tolist"})


def _carries(value) -> bool:
    """A graph for sure: carried now, or what a module's forward returns, not resolved yet (a
    module of another module of the project: its output carries a graph unless the summary
    proves otherwise)."""
    return value.state is Graph.CARRIES or any(call.module_call for call in value.pending)


def _flat_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [leaf for element in target.elements for leaf in _flat_targets(element.value)]
    return [target]


def _scope_of(target: str, function: FunctionScope) -> str:
    root = target.split(".", 1)[0]
    if root in ("self", "cls"):
        return "self"
    if root in function.bindings or root in function.inputs or function.parent is None:
        return "local"
    return "global"


def _trains(function: FunctionScope) -> bool:
    """Is this a training step: a backward pass and an optimizer step, or a framework's
    training-step method (the framework steps)?"""
    if function.has_backward and function.has_optimizer_step:
        return True
    return function.class_info is not None and function.name in _TRAINING_STEP_METHODS


def _makes_an_optimizer(qualified: str | None, facts) -> bool:
    """A torch optimizer's constructor, or a factory named for one (``create_optimizer(model, ...)``,
    ``build_optimizer(cfg, net)``), whose parameters are then unknown."""
    return _is_optimizer_constructor(qualified, facts) or (
        qualified is not None and "optim" in qualified.rsplit(".", 1)[-1].lower())


def _is_optimizer_constructor(qualified: str | None, facts) -> bool:
    if qualified is None:
        return False
    last = qualified.rsplit(".", 1)[-1]
    if qualified.startswith("torch.optim.") and "lr_scheduler" not in qualified and "swa_utils" not in qualified:
        return last[:1].isupper() and last != "Optimizer"
    return last in _OPTIMIZER_CLASSES


def _is_loss_call(call: cst.Call, facts) -> bool:
    """``F.mse_loss(...)``, ``criterion(...)``, ``kd_loss(...)``, ``nn.KLDivLoss()(...)``."""
    func = call.func
    if isinstance(func, cst.Call):  # nn.MSELoss()(a, b)
        name = facts.qualified_name(func.func) or ""
        return bool(_LOSS_NAME.search(name.rsplit(".", 1)[-1]))
    qualified = facts.qualified_name(func)
    if qualified is None:
        return False
    last = qualified.rsplit(".", 1)[-1]
    if qualified.startswith("torch.nn.functional."):
        return any(word in last for word in FUNCTIONAL_LOSS_WORDS)
    return bool(_LOSS_NAME.search(last))


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [word for word in spaced.lower().split() if word]


def _string(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _comprehension_targets(expressions: list[cst.BaseExpression]) -> set[str]:
    found: set[str] = set()
    for expression in expressions:
        for node in descendants(expression):
            if isinstance(node, cst.CompFor):
                found |= names_in(node.target)
    return found


def _parts(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The elements of a returned tuple/list/dict, or the value itself."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return [part for element in value.elements for part in _parts(element.value)]
    if isinstance(value, cst.Dict):
        return [part for element in value.elements if isinstance(element, cst.DictElement)
                for part in _parts(element.value)]
    return [value]


def _ends_graph(value: cst.BaseExpression, facts) -> bool:
    """Does the expression's last operation hand back no graph (``.argmax(1)``, ``.item()``,
    ``.cpu().numpy()``, ``float(...)``)? Read from its form, whatever it was computed from."""
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in GRAPH_ENDING_METHODS:
            return True
        qualified = facts.qualified_name(func)
        return qualified is not None and qualified in GRAPH_ENDING_FUNCTIONS
    return isinstance(value, (cst.Comparison, cst.BaseString, cst.Integer, cst.Float))


def _returned_closure(function: FunctionScope) -> bool:
    """A function defined inside another one that returns it (a factory's ``model_fn``): it runs
    wherever the caller of the factory calls it, under whatever grad mode that caller chose."""
    parent = function.parent
    return isinstance(parent, FunctionScope) and function.name in parent.returned_names


_UNKNOWN = NOT_A_LITERAL


def _parameter_literals(passed: dict[str, object], function: cst.FunctionDef,
                       given_values: bool = False) -> dict[str, object]:
    """The parameters of ``function`` that a call fills with a literal, its own or a default.
    ``passed``: parameter -> the expression passed (or, ``given_values``, its literal value)."""
    values: dict[str, object] = {}
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        name = param.name.value
        if name in passed:
            value = passed[name] if given_values else literal_value(passed[name])
        else:
            value = literal_value(param.default) if param.default else _UNKNOWN
        if value is not _UNKNOWN:
            values[name] = value
    return values


def _holds(condition: _Condition, values: dict[str, object], function: FunctionScope) -> bool | None:
    """Is a branch condition true for these parameter values? None when it cannot be told."""
    result = _evaluate(condition.test, values, function, 0)
    if result is _UNKNOWN:
        return None
    return (not result) if condition.negated else bool(result)


def _evaluate(node: cst.BaseExpression, values: dict[str, object], function: FunctionScope, depth: int) -> object:
    """A test made of parameters with literal values, literals, ``not``/``and``/``or`` and
    comparisons (``phase == "train"``, ``mode in ("train", "finetune")``, ``x is None``), or a
    local assigned once from such a test; _UNKNOWN otherwise."""
    if depth > 4:
        return _UNKNOWN
    if isinstance(node, cst.Name):
        if node.value in values:
            binding = function.bindings.get(node.value)
            if binding is None or isinstance(binding.node, cst.Param):
                return values[node.value]
            return _UNKNOWN  # reassigned in the function
        literal = literal_value(node)
        if literal is not _UNKNOWN:
            return literal
        binding = function.bindings.get(node.value)
        if binding is not None and isinstance(binding.node, cst.BaseExpression) and binding.node is not node \
                and not isinstance(binding.node, cst.Param):
            return _evaluate(binding.node, values, function, depth + 1)
        return _UNKNOWN
    if isinstance(node, (cst.SimpleString, cst.Integer)):
        return literal_value(node)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = _evaluate(node.expression, values, function, depth + 1)
        return _UNKNOWN if inner is _UNKNOWN else not inner
    if isinstance(node, cst.BooleanOperation):
        left = _evaluate(node.left, values, function, depth + 1)
        right = _evaluate(node.right, values, function, depth + 1)
        if isinstance(node.operator, cst.And):
            if left is not _UNKNOWN and not left or right is not _UNKNOWN and not right:
                return False
        elif left is not _UNKNOWN and left or right is not _UNKNOWN and right:
            return True
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        return (left and right) if isinstance(node.operator, cst.And) else (left or right)
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        target = node.comparisons[0]
        left = _evaluate(node.left, values, function, depth + 1)
        if left is _UNKNOWN:
            return _UNKNOWN
        operator = target.operator
        if isinstance(operator, (cst.In, cst.NotIn)) and isinstance(target.comparator, (cst.Tuple, cst.List, cst.Set)):
            options = [literal_value(element.value) for element in target.comparator.elements]
            if _UNKNOWN in options:
                return _UNKNOWN
            return (left in options) if isinstance(operator, cst.In) else (left not in options)
        right = _evaluate(target.comparator, values, function, depth + 1)
        if right is _UNKNOWN:
            return _UNKNOWN
        if isinstance(operator, cst.Equal):
            return left == right
        if isinstance(operator, cst.NotEqual):
            return left != right
        if isinstance(operator, cst.Is):
            return left is right
        if isinstance(operator, cst.IsNot):
            return left is not right
    return _UNKNOWN
