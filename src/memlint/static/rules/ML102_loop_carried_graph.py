"""ML102 loop-carried-graph: a graph-carrying value is fed back into the next iteration of a
training loop without being detached.

Recurrent state (``out, hidden = rnn(x, hidden)``), running statistics
(``centre = 0.99 * centre + 0.01 * feats.mean(0)``, ``centers[c] = m * centers[c] + ...``)
and memory banks (``bank = torch.cat([bank, feats])[-K:]``) computed with autograd on hang
every step's graph on the previous step's: the graph, and the memory it holds, grows every
step. A backward pass through it then fails on the second step ("Trying to backward through
the graph a second time"), which people silence with ``retain_graph=True`` (ML103). The
PyTorch FAQ's example is truncated back-propagation through time: detach the hidden state
once per iteration.

ML101 reports values that are only accumulated (``total += loss``); this rule reports values
that are read again as inputs: passed back to the model, or used in the loss.

Also, with no backward pass at all: recurrent state streamed or sampled through a model when
nothing computed from it leaves the function with a graph (the chain serves no one); state
of a rollout stored into a buffer with its graph; state scaled in place by a loss
(``self.alpha[i] *= torch.pow(b, loss)``); a running statistic a module's ``forward`` keeps on
itself (a warning when its graph comes from the forward's input, named in the message).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from memlint.static.facts import (
    GRAPH_ENDING_METHODS, TENSOR_METHODS, backpropagated_expr, block_statements, builds_a_sequence, concatenated_onto,
    FunctionScope, Graph, GraphValue, Loop, Pending, dotted_name, names_in, reaches, root_name, storage_name,
)
from memlint.static.triggers import TORCH_PACKAGES
from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML101_graph_accumulation import fit, source_of

# Callees whose name says they cut a value from its graph: repackage_hidden(h), detach_state(s).
_DETACH_WORDS = ("detach", "repackage")
_BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
# Methods a framework calls once per training step, stepping the optimizer after each call.
_FRAMEWORK_STEP_METHODS = frozenset({"training_step", "train_step"})
_AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.backward", "torch.autograd.grad"})
# Builtins that read their arguments and keep nothing of them.
_ONLY_READING = frozenset({"len", "print", "isinstance", "str", "repr", "range", "enumerate", "zip", "sorted",
                           "reversed", "iter", "float", "int", "bool", "type", "id", "hasattr", "getattr"})
_COLLECTING_METHODS = frozenset({"append", "extend", "insert", "appendleft", "add"})


@dataclass
class _Carry:
    node: cst.CSTNode
    name: str  # the carried variable: "hidden", "self.h", "centers"
    kind: str  # "recurrent" | "running" | "accumulated" | "bank"
    loops: list[Loop]  # enclosing loops (innermost first) whose iteration the name outlives
    graph: GraphValue  # of what is combined with the old value
    other: str  # source of that part, for the message
    callee: str = ""
    # outs = torch.cat([outs, out]): a growing record; ML101's finding unless read back into a loss
    concatenation: bool = False
    # self.x updated in a method that runs once per step (not a framework's training_step): the
    # graph of the update in terms of the method's parameters (Facts.summary_form), decided
    # with what its callers pass
    per_call: GraphValue | None = None
    in_place: bool = False  # self.alpha[i] *= v: scaled in place
    other_names: frozenset[str] = frozenset()  # what the parts combined with the old value read
    # in a module's forward: the update's graph in terms of the forward's parameters
    input_form: GraphValue | None = None
    # recurrent: the module that returns the state is a torch.nn class (nn.LSTM, nn.GRUCell), whose
    # state is known to carry the graph; otherwise its forward is not seen (or only summarised)
    torch_module: bool = False
    # recurrent: the module's class is not known at all (a parameter, built by a factory): that its
    # state carries a graph is presumed, not seen
    unseen_module: bool = False
    scope_id: int = 0  # id() of the function it is carried in
    # rebuilt by a call of a function of the file or of the project: what it gives the state
    returned: GraphValue | None = None


class LoopCarriedGraph(Rule):
    code = "ML102"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._statement: cst.CSTNode | None = None
        self._cut: dict[int, set[str]] = {}  # id(loop) -> names detached or reset in its body
        self._carries: dict[int, list[_Carry]] = {}
        self._backpropagated: dict[int, list[frozenset[str]]] = {}  # id(loop) -> backward tensors' names
        self._retaining: set[int] = set()  # id() of functions with a backward pass that may retain the graph
        # training_step state (self.queue, self.hidden): decided at module end, once every method
        # of the class that may reset or detach it has been seen.
        self._class_cut: dict[str, set[str]] = {}  # class name -> self.x reset/detached in a method
        self._step_carries: list[tuple[str, _Carry]] = []
        self._method_carries: list[tuple[FunctionScope, _Carry]] = []
        # Attributes (last part) reset or detached through an object other than self, anywhere
        # in the module: ``agent.state = None``, ``model.hidden = model.hidden.detach()``.
        self._cut_from_outside: set[str] = set()
        # id(loop) -> (object, names of the arguments) of calls storing values into an object
        # that outlives the function: buffer.store(obs, hidden=h), self.memory.push(...)
        self._stored: dict[int, list[tuple[str, frozenset[str], cst.Call]]] = {}
        # id(function) -> names of values that may carry a graph and leave the function other
        # than by ``return``: passed to a call that may keep them, stored on an object
        self._handed_on: dict[int, set[str]] = {}
        self._reported_stores: set[int] = set()  # id() of store calls reported
        # (method, self.x, parameters stored, node): a method storing what it is passed
        self._handed_in: list[tuple[FunctionScope, str, frozenset[str], cst.Assign]] = []
        # (caller, method name, [(position or keyword, names, carries a graph)]): self.m(...) calls
        self._self_calls: list[tuple[FunctionScope, str, list]] = []
        self._resets: dict[tuple[str, str], set[str]] = {}  # (class, self.x) -> methods rebinding it
        # running statistics a module's forward keeps on itself: (forward, carry, its graph in
        # terms of the forward's parameters), decided at the end of the module
        self._layer_statistics: list[tuple[FunctionScope, _Carry]] = []

    # ----- candidates ----------------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        self._note_outside_cut(node)
        self._note_kept_on_object(node)
        self._note_state_handed_in(node)
        loops = self.facts.loops_in_function()
        function = self.facts.function
        per_step = not loops and function.name in _FRAMEWORK_STEP_METHODS and function.class_info is not None
        if not loops and not per_step and (function.class_info is None or function.name == "__init__"):
            return  # only methods can reset a training_step's self.x
        # A method of a class that is not a framework's step: its self.x outlives the call, and
        # whether it runs once per step is known at the end of the module.
        # (forward and other per-step methods keep caches, or state their model detaches: only
        # methods called from a step loop in view)
        in_method = function.class_info is not None and function.name != "__init__" and not per_step \
            and not function.is_per_step_method
        # Recurrent state (``self.hidden = self.rnn(x, self.hidden)``) is also carried by a
        # per-step-named method (``step``, ``act``), decided with its callers in view.
        recurrent_in_method = function.class_info is not None and function.name not in ("__init__", "forward") \
            and not per_step
        value_names = names_in(node.value)
        for target in node.targets:
            for element in _flatten(target.target):
                name = storage_name(element)
                if name is None:
                    continue
                kept_by_object = (in_method or recurrent_in_method) and name.startswith("self.")
                through = self._recurrent_call(node.value, name, kept_by_object) if element is target.target and (
                    loops or kept_by_object) else None
                if through is not None and not self.facts.grad_off:
                    self._candidate(node, name, element, node.value, loops, through=through)
                    continue
                if name not in value_names or self.facts.grad_off or self._unpacked_without_graph(
                        target.target, element, node.value) or (
                        element is target.target and self.facts.graph_value(node.value).state is Graph.NONE):
                    # rebound from something else, or from itself without a graph (``h = h.data``):
                    # the old value is dropped
                    self._mark_cut(name)
                    continue
                # a module's forward keeping a running statistic on itself (decided as one)
                forward_state = function.name == "forward" and name.startswith("self.") and (
                    function.class_info is not None and function.class_info.is_module) and isinstance(
                    node.value, cst.BinaryOperation)
                if loops or (per_step and name.startswith("self.")) or forward_state or (kept_by_object and (
                        in_method or self._is_module_call_on(node.value, name))):
                    self._candidate(node, name, element, node.value, loops)

    def _returned_by_callee(self, node: cst.CSTNode, element: cst.BaseExpression,
                            value: cst.BaseExpression) -> GraphValue | None:
        """What a call of a function of this module or of the project gives the carried name (the
        part of the tuple it is unpacked from), by the callee's summary; None for other calls."""
        if not isinstance(value, cst.Call):
            return None
        facts = self.facts
        callees = facts.callees(value)
        qualified = facts.qualified_name(value.func)
        if not ((callees is not None and callees[0])
                or (qualified is not None and facts.project_definition(qualified) is not None)):
            return None
        for target in (node.targets if isinstance(node, cst.Assign) else ()):
            part = self._unpacked_part(target.target, element, value)
            if part is not None:
                return part
        return facts.graph_value(value)

    def _unpacked_part(self, target: cst.BaseExpression, element: cst.BaseExpression,
                       value: cst.BaseExpression) -> GraphValue | None:
        """``a, b = value``: the part of ``value`` that ``element`` of ``target`` receives (None: not
        unpacked there, a starred target, or parts not known)."""
        if not isinstance(target, (cst.Tuple, cst.List)):
            return None
        index = next((i for i, item in enumerate(target.elements) if item.value is element), None)
        if index is None or any(isinstance(item, cst.StarredElement) for item in target.elements):
            return None
        return self.facts.graph_value(value).part(index)

    def _unpacked_without_graph(self, target: cst.BaseExpression, element: cst.BaseExpression,
                                value: cst.BaseExpression) -> bool:
        """``loss, mean, lengths = helper(x, mean)`` where the helper's summary says the part
        ``mean`` receives has no graph (``return penalty, mean.detach(), lengths``)."""
        part = self._unpacked_part(target, element, value) if isinstance(value, cst.Call) else None
        if part is None:
            return False
        try:
            return self.facts.resolve(part).state is Graph.NONE
        except Pending:  # a summary not known yet (the helper is defined below): decide as before
            return False

    def _is_module_call_on(self, value: cst.BaseExpression, name: str) -> bool:
        """``rnn(x, name)``: a module called with the carried value as an argument."""
        facts = self.facts
        return isinstance(value, cst.Call) and _runs_a_module(value, facts) and any(
            name in names_in(arg.value) for arg in value.args)

    def _note_outside_cut(self, node: cst.Assign) -> None:
        for target in node.targets:
            for element in _flatten(target.target):
                name = storage_name(element)
                if name is not None and _through_another_object(name):
                    self._cut_from_outside.add(name.split("[", 1)[0].rsplit(".", 1)[-1])

    def _recurrent_call(self, value: cst.BaseExpression, name: str, per_call: bool = False) -> cst.Call | None:
        """``h = h_new`` (or ``state = result.state``, ``self.memory[agent] = memories[0, i]``)
        after ``h_new = model(x, h)`` earlier in this iteration (or, in a method, this call):
        the model call the carried value comes back from."""
        facts = self.facts
        if isinstance(value, cst.Tuple) and value.elements:  # self.state = (h, c), both from one call
            calls = {id(call): call for call in (self._recurrent_call(element.value, name, per_call)
                                                 for element in value.elements) if call is not None}
            return next(iter(calls.values())) if len(calls) == 1 else None
        root = root_name(value)
        if root is None or root == name or dotted_name(value) == name:
            return None
        fed_back = facts.graph_value(value)
        if fed_back.pending:
            try:  # (what another module's forward returns, read through the project's summaries)
                fed_back = facts.resolve(fed_back)
            except Pending:
                pass
        if fed_back.state is Graph.NONE:
            return None  # x = logits[:, -1:].argmax(-1): what is fed back carries no graph
        loop = facts.loop
        function = facts.function
        if per_call or loop is None:  # self.x of a method: carried from one call to the next
            if root not in function.bindings:
                return None
        elif root not in loop.bound_this_iteration:
            return None
        binding = facts.lookup(root)
        if binding is None or binding.graph.state is Graph.NONE:  # computed under no_grad
            return None
        call = binding.node
        if not isinstance(call, cst.Call) or not _runs_a_module(call, facts):
            return None
        if not any(_derives_from_place(names_in(arg.value), name, function) for arg in call.args):
            return None
        return call

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        loops = self.facts.loops_in_function()
        name = dotted_name(node.target)
        if loops and name is not None and isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self._candidate(node, name, node.target, node.value, loops, accumulated=True)
            return
        # state scaled in place (self.alpha[i] *= torch.pow(b, loss)): x = x * v, a running update
        place = storage_name(node.target)
        function = self.facts.function
        if place is not None and isinstance(node.operator, (cst.MultiplyAssign, cst.DivideAssign)) and (
                loops or (place.startswith("self.") and function.class_info is not None
                          and function.name != "__init__")):
            self._candidate(node, place, node.target, node.value, loops, scaled=True)

    def _candidate(self, node: cst.CSTNode, name: str, target: cst.BaseExpression, value: cst.BaseExpression,
                   loops: list[Loop], accumulated: bool = False, through: cst.Call | None = None,
                   scaled: bool = False) -> None:
        facts = self.facts
        if facts.grad_off:
            return
        outlived = [loop for loop in reversed(loops) if name not in loop.bound_this_iteration]
        if not outlived and loops:
            return
        callee = ""
        torch_module = unseen = False
        returned = None
        if accumulated:
            kind, parts = "accumulated", [value]
            graph = facts.graph_value(value)
        elif scaled:
            kind, parts = "running", [value]
            graph = facts.graph_value(value)
        elif through is not None:  # h = h_new, with h_new = model(x, h) in this iteration
            kind, parts = "recurrent", []
            graph = GraphValue(Graph.CARRIES)
            torch_module = self._torch_module(through)
            unseen = self._unseen_module(through, torch_module)
            if facts.graph_value(value).partial:  # h = out.get("state", None): on some paths only
                graph = graph.on_some_paths()
            callee = source_of(through.func, 30)
        elif isinstance(value, cst.Call) and _runs_a_module(value, facts):
            if not any(name in names_in(arg.value) for arg in value.args):
                return
            kind, parts = "recurrent", []
            graph = GraphValue(Graph.CARRIES)
            callee = source_of(value.func, 30)
            torch_module = self._torch_module(value)
            unseen = self._unseen_module(value, torch_module)
        else:
            parts = _other_parts(value, name, frozenset(facts.imports.aliases))
            if isinstance(value, cst.BinaryOperation):
                kind = "running"
            elif isinstance(value, (cst.Call, cst.Subscript)):
                kind = "bank"
            else:
                return
            graph = GraphValue.combine(facts.graph_value(part) for part in parts)
            # self.update_stats(logits, p_model), or consistency_loss(...) of another module: when
            # what it returns (its summary) has no graph (a @torch.no_grad() method, p_model updated
            # from detached labels), the state is not chained, whatever it was handed
            returned = self._returned_by_callee(node, target, value)
        if graph.state is Graph.NONE:
            return
        # Name the part that carries the graph (t_out.mean(0), not the momentum).
        graphs = [facts.graph_value(part) for part in parts]
        # The part with the most graph; among unknown ones, one computed from more than self.x
        # (feats[...].mean(0), not the momentum).
        shown = max(range(len(parts)), key=lambda i: (graphs[i].state, any(
            not n.startswith("self") for n in names_in(parts[i])))) if parts else None
        shown_part = parts[shown] if shown is not None else None
        while isinstance(shown_part, cst.BinaryOperation):  # (1 - m) * t_out.mean(0) -> t_out.mean(0)
            left, right = shown_part.left, shown_part.right
            shown_part = left if facts.graph_value(left).state > facts.graph_value(right).state else right
        if scaled and isinstance(shown_part, cst.Call) and facts.qualified_name(shown_part.func) is not None:
            # torch.pow(self.b, losses[i]) -> losses[i]: the argument the graph comes from
            arguments = [arg.value for arg in shown_part.args]
            if arguments:
                shown_part = max(arguments, key=lambda arg: (facts.graph_value(arg).state, any(
                    not n.startswith("self") for n in names_in(arg))))
        function = facts.function
        per_call = None
        if name.startswith("self.") and function.class_info is not None and function.name != "__init__" \
                and function.name not in _FRAMEWORK_STEP_METHODS and (
                    not function.is_per_step_method or (kind == "recurrent" and function.name != "forward")):
            per_call = facts.summary_form(graph, function)
        carry = _Carry(node, name, kind, outlived, graph, source_of(shown_part) if shown_part is not None else "", callee,
                       concatenation=concatenated_onto(value, name, facts) is not None, per_call=per_call,
                       in_place=scaled, other_names=frozenset(n for part in parts for n in names_in(part)),
                       torch_module=torch_module, unseen_module=unseen, scope_id=id(facts.function),
                       returned=returned)
        if function.name == "forward" and not loops:
            carry.input_form = facts.summary_form(graph, function)
        records = self._carries.get(id(function))
        if records is None:
            records = self._carries[id(function)] = []
            self.at_function_exit(lambda: self._decide(function, records))
        records.append(carry)

    # ----- detaches and resets -----------------------------------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = node

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = None

    def _torch_module(self, call: cst.Call) -> bool:
        """Is the module ``call`` runs bound to a ``torch.nn`` class (``self.rnn = nn.LSTM(...)``)?"""
        facts = self.facts
        value = facts.bound_value(call.func)
        return isinstance(value, cst.Call) and (facts.qualified_name(value.func) or "").startswith("torch.nn.")

    def _unseen_module(self, call: cst.Call, torch_module: bool) -> bool:
        """Is the class of the module ``call`` runs unknown here (not torch.nn's, not one of this
        module or the project)?"""
        facts = self.facts
        module = call.func.value if isinstance(call.func, cst.Attribute) and call.func.attr.value == "forward" \
            else call.func
        return not torch_module and facts.instance_class_name(module) is None \
            and facts.project_instance_class(module) is None

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if method in _BACKWARD_METHODS or self.facts.qualified_name(func) in _AUTOGRAD_FUNCTIONS:
            tensor = backpropagated_expr(node)
            loops = self.facts.loops_in_function()
            if _retains(node):
                self._retaining.add(id(self.facts.function))
            if tensor is not None and loops:
                names = frozenset(names_in(tensor))
                for loop in loops:
                    self._backpropagated.setdefault(id(loop), []).append(names)
            return
        if method is not None:
            self._note_stored(node, func)
        written = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "out"), None)
        if written is not None and (self.facts.qualified_name(func) or "").startswith("torch."):
            # torch.arange(n, out=self.offsets): the tensor is filled afresh, its old value dropped
            # (and out= refuses inputs that require grad)
            name = storage_name(written)
            if name is not None:
                self._mark_cut(name)
        self._note_handed_on(node, func, method)
        self._note_self_call(node)
        for name in self._detached_by_method(func):
            self._mark_cut(name)  # self.detach_running(), whose body is self.running_mean.detach_()
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if not any(word in last.lower() for word in _DETACH_WORDS):
            return
        # What the call detaches, and what the statement binds its result to, is cut:
        # hidden = hidden.detach(), h.detach_(), hidden = tuple(h.detach() for h in hidden),
        # repackage_hidden(hidden); not the other arguments of a call the detached value is
        # passed to (buffer.store(logp=logp.detach(), h=h) stores h with its graph).
        names = names_in(node) | _assigned_names(self._statement)
        for loop in self.facts.loops:
            if isinstance(loop.node, cst.For) and names & loop.target_names:
                names |= names_in(loop.node.iter)  # for h in hidden: h.detach_()
        for name in names:
            self._mark_cut(name)

    def _detached_by_method(self, func: cst.BaseExpression) -> list[str]:
        """The attributes of ``self`` a method of this class called as ``self.m()`` cuts from
        their graph in its own body, unconditionally: ``self.x.detach_()``, ``self.x =
        self.x.detach()``."""
        info = self.facts.class_info
        if info is None or not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                                and func.value.value == "self"):
            return []
        method = next((statement for statement in block_statements(info.node.body)
                       if isinstance(statement, cst.FunctionDef) and statement.name.value == func.attr.value), None)
        if method is None:
            return []
        cut = []
        for statement in block_statements(method.body):
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
                if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                        and value.func.attr.value in ("detach", "detach_") and not value.args):
                    continue
                detached = dotted_name(value.func.value)
                if detached is None or not detached.startswith("self."):
                    continue
                if isinstance(small, cst.Expr) and value.func.attr.value == "detach_" \
                        or isinstance(small, cst.Assign) and [dotted_name(t.target) for t in small.targets] == [detached]:
                    cut.append(detached)
        return cut

    def _note_stored(self, node: cst.Call, func: cst.Attribute) -> None:
        facts = self.facts
        loops = facts.loops_in_function()
        receiver = dotted_name(func.value)
        if not loops or receiver is None or facts.grad_off or facts.is_module_expr(func.value):
            return
        root = receiver.split(".", 1)[0]
        function = facts.function
        if root != "self" and root not in function.inputs:
            return  # a local list or dict dies with the call (a decoder's outputs)
        statement = self._statement
        if statement is None or not any(isinstance(part, cst.Expr) and part.value is node for part in statement.body):
            return  # its result is used (attend = dae.attention(enc, h)): a computation, not a store
        names = frozenset(name for arg in node.args for name in names_in(arg.value))
        for loop in loops:
            self._stored.setdefault(id(loop), []).append((receiver, names, node))

    # ----- state a method stores for the next call, fed back by its caller ---------------------------
    def _note_state_handed_in(self, node: cst.Assign) -> None:
        """``self.memory_dict[agent] = memories[0, i]`` with ``memories`` a parameter of the
        method: the object keeps what its callers pass (decided with them, at the module's end);
        ``self.memories = {}`` in a method resets the place."""
        facts = self.facts
        function = facts.function
        info = function.class_info
        if info is None or function.name == "__init__" or facts.grad_off:
            return
        passed = names_in(node.value) & set(function.parameters)
        for target in node.targets:
            for element in _flatten(target.target):
                place = storage_name(element)
                if place is None or not place.startswith("self.") or place.count(".") != 1:
                    continue
                if isinstance(element, cst.Attribute) and not passed:
                    self._resets.setdefault((info.name, place), set()).add(function.name)
                elif passed:
                    if not self._handed_in:
                        self.at_module_exit(self._decide_handed_in)
                    self._handed_in.append((function, place, frozenset(passed), node))

    def _note_self_call(self, node: cst.Call) -> None:
        """``self.save_memories(ids, new_memories)``: which names each argument passes, and
        whether it may carry a graph (for :meth:`_decide_handed_in`)."""
        func = node.func
        facts = self.facts
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return
        if facts.class_info is None or facts.grad_off:
            return
        # A model's output that is fed back (decided in _decide_handed_in) is its recurrent state,
        # a tensor it computed, even where memlint cannot read its forward to tell.
        arguments = [(arg.keyword.value if arg.keyword is not None else index, frozenset(names_in(arg.value)),
                      facts.graph_value(arg.value).state is Graph.CARRIES or (
                          facts.graph_value(arg.value).state is Graph.UNKNOWN and facts.is_module_output(arg.value)))
                     for index, arg in enumerate(node.args) if not arg.star]
        self._self_calls.append((facts.function, func.attr.value, arguments))

    def _decide_handed_in(self) -> None:
        """A method stores what it is passed on the object; a caller passes it a model's output
        (a graph, with grad on, and no backward pass in the caller) computed from that same
        place, read directly or through another method of the class: every call chains the
        graph of the previous one (ml-agents' per-agent LSTM memories)."""
        for method, place, passed, node in self._handed_in:
            info = method.class_info
            if self._resets.get((info.name, place), set()) - {method.name}:
                continue  # another method resets it (an episode's start)
            readers = {f"self.{name}" for name, scope in info.methods.items()
                       if scope is not method and _derives_from_place(scope.returned_names, place, scope)}
            for caller, name, arguments in self._self_calls:
                if name != method.name or caller.class_info is not info or caller.has_backward:
                    continue
                for key, names, carries in arguments:
                    parameter = method.parameters[key] if isinstance(key, int) and key < len(method.parameters) else key
                    if parameter in passed and carries and any(
                            _derives_from_place(names, source, caller) for source in {place} | readers):
                        message = fit("'{place}' keeps what {caller}() feeds back into a model, with its graph",
                                      keep=("place",), place=place, caller=caller.name)
                        self.report(node, message, help="compute it under torch.no_grad(), or store it detached: "
                                                        "value.detach()", function=method)
                        break
                else:
                    continue
                break

    def _note_handed_on(self, node: cst.Call, func: cst.BaseExpression, method: str | None) -> None:
        """Values passed to a call that may keep or backpropagate them: not torch's functions,
        tensor methods, a module's forward (the chain itself), builtins that only read, nor a
        local list's append (followed as the list). Names only, whatever they hold (cheap, and
        erring towards "it may leave")."""
        facts = self.facts
        if not node.args or facts.grad_off:
            return
        if method is not None and (method in TENSOR_METHODS or method in GRAPH_ENDING_METHODS):
            return
        function = facts.function
        if method in _COLLECTING_METHODS and isinstance(func.value, cst.Name) \
                and func.value.value in function.bindings and func.value.value not in function.inputs:
            return  # outs.append(h): what outs holds is followed where outs goes
        qualified = facts.qualified_name(func)
        if qualified is not None and (qualified.split(".", 1)[0] in TORCH_PACKAGES or qualified in _ONLY_READING):
            return
        if facts.is_module_expr(func) or (method == "forward" and facts.is_module_expr(func.value)):
            return
        handed_on = self._handed_on.setdefault(id(function), set())
        for arg in node.args:
            value = facts.graph_value(arg.value)
            if value.state is Graph.NONE and not value.names and not value.pending:
                continue  # env.step(action.cpu().numpy()): a number or an array leaves, not a graph
            handed_on |= names_in(arg.value)

    def _note_kept_on_object(self, node: cst.Assign) -> None:
        """``self.h = h``, ``agent.state = h``: a value that may carry a graph outlives the call."""
        facts = self.facts
        if facts.grad_off:
            return
        for target in node.targets:
            for element in _flatten(target.target):
                if isinstance(element, (cst.Attribute, cst.Subscript)) and "." in (storage_name(element) or "."):
                    if facts.graph_value(node.value).state is not Graph.NONE:
                        self._handed_on.setdefault(id(facts.function), set()).update(names_in(node.value))
                        return

    def _fed_through_model(self, function: FunctionScope, carry: _Carry, loop: Loop) -> bool:
        """Does the part that ``carry`` is rebuilt with come, in this iteration, from a model
        called with the carried value (``action = policy(hist)``; ``hist = cat([hist[1:], action])``)?"""
        facts = self.facts
        for name in loop.bound_this_iteration:
            binding = function.bindings.get(name)
            call = binding.node if binding is not None else None
            if not (isinstance(call, cst.Call) and _runs_a_module(call, facts)):
                continue
            if any(_derives_from_place(names_in(arg.value), carry.name, function) for arg in call.args) and \
                    function.derives_from(carry.other_names, {name}):
                return True
        return False

    def _chain_dies_here(self, function: FunctionScope, carry: _Carry) -> bool:
        """Does nothing computed from the carried value leave ``function`` with a graph (no
        ``return`` of one, not a generator, not passed on to a call that may keep it, not
        stored on an object), and nothing in it backpropagate? Then the chain of graphs the
        loop builds is never used, only freed when the function returns."""
        if function.has_backward or function.is_generator or "." in carry.name or function is self.facts.module_scope:
            return False
        if function.is_per_step_method:
            return False  # a module's forward: its graph is what the caller backpropagates
        if function.return_graph is Graph.CARRIES:
            return False
        # Followed through names that hold a graph, or may: not through one only ever bound
        # without (``top_i = torch.multinomial(output.data.exp(), 1)``, the sampled character
        # handed on and returned is no part of the chain).
        constants = function.bound_without_graph - function.bound_with_graph
        escaping = self._handed_on.get(id(function), set()) | function.returned_names
        return not function.derives_from(escaping, _place(carry.name), skip=constants)

    def _mark_cut(self, name: str) -> None:
        if _through_another_object(name):
            self._cut_from_outside.add(name.split("[", 1)[0].rsplit(".", 1)[-1])
        for loop in self.facts.loops_in_function():
            self._cut.setdefault(id(loop), set()).add(name)
        info = self.facts.class_info
        if name.startswith("self.") and info is not None and self.facts.function.name != "__init__":
            self._class_cut.setdefault(info.name, set()).add(name)

    # ----- decision at function exit ----------------------------------------------------------------
    def _decide(self, function: FunctionScope, records: list[_Carry]) -> None:
        facts = self.facts
        for carry in records:  # what functions further down return, first: this may wait for the module's end
            facts.resolve(carry.graph)
            if carry.returned is not None:
                facts.resolve(carry.returned)
        for carry in records:
            if carry.kind == "accumulated" and carry.name in function.backward_names \
                    and facts.resolve(carry.graph).state is Graph.UNKNOWN:
                carry.graph = GraphValue(Graph.CARRIES)  # running.backward(): what it adds up carries a graph
            if carry.per_call is not None and not self._reported_in_loop(function, carry):
                # self.x of a method: decided at the end of the module, with its callers
                if not self._method_carries:
                    self.at_module_exit(self._decide_method_carries)
                self._method_carries.append((function, carry))
                continue
            if self._is_layer_statistic(function, carry):
                if not self._layer_statistics:
                    self.at_module_exit(self._decide_layer_statistics)
                self._layer_statistics.append((function, carry))
                continue
            if not facts.is_graph_carrying(carry.graph):
                continue
            if not carry.loops:  # training_step: one call is one iteration, the framework steps
                step_results = function.returned_names | function.backward_names
                if carry.kind in ("recurrent", "bank") or any(
                        function.derives_from({name}, _place(carry.name)) for name in step_results):
                    if not self._step_carries:
                        self.at_module_exit(self._decide_step_carries)
                    self._step_carries.append((function.class_info.name, carry))
                continue
            self._reported_in_loop(function, carry)

    def _reported_in_loop(self, function: FunctionScope, carry: _Carry) -> bool:
        """Report ``carry`` for the first loop whose iteration it grows across; True if reported."""
        if not carry.loops or not self.facts.is_graph_carrying(carry.graph) or self._callee_returns_no_graph(carry):
            return False
        graph = self.facts.resolve(carry.graph)
        if carry.kind == "accumulated" and graph.state is Graph.UNKNOWN and not function.is_backpropagated(
                graph.names, besides=_place(carry.name)):
            return False  # step += args.n read into an annealed coefficient: no evidence of a graph
        for loop in carry.loops:
            if carry.name in self._cut.get(id(loop), ()):
                continue  # detached or re-initialised somewhere in this loop's iteration
            if loop.bounded and not loop.has_optimizer_step:
                continue  # for conv, bn in [(c1, b1), (c2, b2)]: a fixed few layers of one computation
            # Fed back: a backward pass inside this loop goes through the carried value.
            fed_back = any(function.derives_from(names, _place(carry.name))
                           for names in self._backpropagated.get(id(loop), ()))
            if fed_back and not loop.has_backward_pass and not loop.has_optimizer_step \
                    and function.derives_from(function.returned_names, _place(carry.name)):
                # An unrolled solve: a fixed loop of torch.autograd.grad updates whose result the
                # function returns, for its caller's one backward pass through all of it.
                continue
            if fed_back and carry.kind == "recurrent" and not carry.torch_module and loop.has_backward_pass \
                    and id(function) not in self._retaining:
                # Every iteration backpropagates through the state and frees the graph: were the state
                # to carry the previous iteration's graph, the next backward pass would fail ("backward
                # through the graph a second time"). Code that runs past its second step has the model
                # cut it (memories detached in its forward); one that does not fails at once, no leak.
                continue
            kept_across_steps = carry.kind == "recurrent" or (carry.kind == "bank" and not carry.concatenation)
            # A stream fed through a recurrent model with grad on and no backward pass at all:
            # nothing ever frees the chain of graphs.
            # Also a sequence (time steps, sampling steps) whose chain of graphs nothing uses.
            streamed = carry.kind == "recurrent" and not function.has_backward and (
                (loop.iterates_data and not loop.counts_in_module_method and not builds_a_sequence(loop)) or (
                    self._chain_dies_here(function, carry) and not _callee_walked(loop, carry)))
            if fed_back or (kept_across_steps and loop.has_optimizer_step) or streamed:
                self._report_carry(carry, never_freed=streamed and not fed_back)
                return True
            # A history rebuilt from itself and what a model computed from it (an observation
            # history fed to a policy), with no backward pass and nothing leaving with a graph.
            if carry.kind == "bank" and not function.has_backward and self._fed_through_model(function, carry, loop) \
                    and self._chain_dies_here(function, carry):
                self._report_carry(carry, never_freed=True)
                return True
            # A rollout keeping each step's state in a buffer that outlives it: every stored
            # state holds the chain of all earlier steps' graphs.
            state = _state_names(carry.name, function)
            # (not the call that feeds the state back itself: ``h, c = dae.lstm(x, (h, c))`` on a
            # model handed in is the recurrence, not a store)
            store = next((stored for stored in self._stored.get(id(loop), ()) if stored[1] & state
                          and dotted_name(stored[2].func) != carry.callee), None) \
                if carry.kind == "recurrent" and not function.has_backward and not function.is_per_step_method \
                and not loop.counts_in_module_method else None  # a forward's own layers: one computation
            if store is not None:
                # reported where the state is stored with its graph: that copy is what piles up
                # (once per store: buffer.store(h=h, c=c) keeps both parts of one state)
                if id(store[2]) not in self._reported_stores:
                    self._reported_stores.add(id(store[2]))
                    self._report_carry(carry, stored_in=store[0], at=store[2])
                return True
            # Otherwise (only accumulated, or backpropagated once after the loop, as in
            # seq2seq decoding or MAML's meta-loss) it is not this rule's case; ML101 reports
            # plain accumulation.
        return False

    def _callee_returns_no_graph(self, carry: _Carry) -> bool:
        """Does the function that rebuilds the state return it without a graph (see _Carry.returned)?"""
        if carry.returned is None:
            return False
        try:
            return self.facts.resolve(carry.returned).state is Graph.NONE
        except Pending:
            return False

    def _decide_method_carries(self) -> None:
        """``self.protos[c] = m * self.protos[c] + (1 - m) * feats[...].mean(0)`` in a method that
        runs once per step (called from a training loop, or a per-step method, of this module),
        with a graph from the method itself or from what its callers pass."""
        facts = self.facts
        for function, carry in self._method_carries:
            if carry.name in self._class_cut.get(function.class_info.name, ()):
                continue
            if carry.kind == "recurrent":
                if carry.name.split("[", 1)[0].rsplit(".", 1)[-1] in self._cut_from_outside:
                    continue  # agent.state = None between episodes
                sites = self._calls_with_grad(function)
                if not sites:
                    continue  # no call in view repeats it with grad on
                never_freed = not any(loop.has_backward_pass for site in sites for loop in site.loops) and not any(
                    site.caller.has_backward for site in sites)
                self._report_carry(carry, never_freed=never_freed, method=function.name,
                            function=function)
                continue
            # a method that backpropagates is a training step itself, whoever calls it
            if not (facts.runs_per_step(function) or function.has_backward):
                continue
            if carry.kind == "accumulated" or (carry.kind == "running" and not carry.other):
                continue  # self.total += loss: ML101's
            if not (facts.is_graph_carrying(carry.graph, function) or facts.carries_at_calls(carry.per_call, function)):
                continue
            self._report_carry(carry, method=function.name, function=function)

    def _calls_with_grad(self, function: FunctionScope) -> list:
        """The calls in this module that run ``function`` with grad on, again and again: from
        inside a loop, or from a function that runs once per step."""
        facts = self.facts
        return [site for site in facts.calls_into.get(id(function.node), ())
                if not site.no_grad and facts.may_run_with_grad(site.caller)
                and (site.loops or facts.runs_per_step(site.caller))]

    @staticmethod
    def _is_layer_statistic(function: FunctionScope, carry: _Carry) -> bool:
        """``self.running_mean = m * mean + (1 - m) * self.running_mean`` in a module's forward."""
        info = function.class_info
        return (function.name == "forward" and info is not None and info.is_module and not carry.loops
                and carry.kind == "running" and bool(carry.other) and carry.name.startswith("self."))

    def _decide_layer_statistics(self) -> None:
        """A running statistic a module's forward keeps on itself, updated with grad on: each
        step's graph hangs on the previous one's, and nothing ever backpropagates through it.
        Certain when the update carries a graph in the forward itself (the module's
        parameters); when it comes from the forward's input, the input carries one when the
        module is a layer inside a network (a subclass of a torch.nn layer): reported as a
        warning, the link named."""
        facts = self.facts
        for function, carry in self._layer_statistics:
            per_call = carry.input_form
            if carry.name in self._class_cut.get(function.class_info.name, ()):
                continue
            if facts.is_graph_carrying(carry.graph, function):
                self._report_carry(carry, method="forward", function=function)
            elif per_call is not None and set(per_call.names) & set(function.parameters) \
                    and (_subclasses_a_torch_layer(function.class_info)
                         or self._built_inside_a_network(function.class_info)):
                message, help_text = self._message(carry, method="forward", from_input=True)
                self.report(carry.node, message, help=help_text, function=function, severity="warning")

    def _built_inside_a_network(self, info) -> bool:
        """Does another nn.Module class of this file build one (``self.act1 = PWLA3d()``, or inside
        an ``nn.Sequential``)? Then, like a torch.nn layer, it sits in a network and is fed
        activations."""
        facts = self.facts
        pattern = re.compile(rf"(?<![\w.]){re.escape(info.name)}\s*\(")
        return any(other is not info and other.is_module and (node := facts.class_nodes.get(other.name)) is not None
                   and pattern.search(self._checker.module.code_for_node(node)) is not None
                   for other in facts.classes.values())

    def _decide_step_carries(self) -> None:
        for class_name, carry in self._step_carries:
            if carry.name not in self._class_cut.get(class_name, ()):
                self._report_carry(carry)

    def _report_carry(self, carry: _Carry, function: FunctionScope | None = None, at: cst.CSTNode | None = None,
                      **how) -> None:
        message, help_text = self._message(carry, **how)
        try:
            some_paths = self.facts.resolve(carry.graph).partial
        except Pending:
            some_paths = False
        if some_paths:  # a graph on some paths only (``state = result.get("state", None)``): a warning
            message = message + " (on some paths)"
            help_text += "; on another path it is None"
        presumed = carry.kind == "recurrent" and carry.unseen_module and carry.scope_id not in self._retaining
        if presumed:  # nothing seen says the state carries a graph: what the module returns is not seen
            help_text += next((note for note in (f"; {carry.callee}() is not seen here: its state's graph is presumed",
                                                 "; the model is not seen: a graph is presumed", "")
                               if len(help_text) + len(note) <= 200), "")
        elif carry.kind != "recurrent" and self._graph_presumed(carry, function):
            presumed = True  # unknown, and only reaching a backpropagated loss says it carries a graph
            help_text += "; its graph is presumed: it reaches a backpropagated loss"
        self.report(at if at is not None else carry.node, message, help=help_text, function=function,
                    severity="warning" if some_paths or presumed else None)

    def _graph_presumed(self, carry: _Carry, function: FunctionScope | None) -> bool:
        facts = self.facts
        scope = function if function is not None else next(
            (s for s in (*facts.function_scopes.values(), facts.module_scope) if id(s) == carry.scope_id), None)
        try:
            return scope is not None and self.facts.graph_presumed(carry.graph, scope)
        except Pending:
            return False

    def _message(self, carry: _Carry, never_freed: bool = False, method: str | None = None,
                 stored_in: str | None = None, from_input: bool = False) -> tuple[str, str]:
        """The message (what is wrong) and the help (what to do) of a finding."""
        name = carry.name
        every = "every iteration" if carry.loops else "every training step"
        if method is not None:
            every = f"on every {method}() call"
        detach = f"{name} = {name}.detach()"
        if stored_in is not None:
            return (fit("'{name}' is fed back into {callee}() and stored in '{store}' {every} with its graph",
                        keep=("every",), name=name, callee=carry.callee, store=stored_in, every=every),
                    f"run the loop under torch.no_grad(), or detach it once per iteration: {detach}")
        if carry.kind == "recurrent" and never_freed:
            return (fit("'{name}' is fed back into {callee}() {every} with grad on and no backward", keep=("every",),
                        name=name, callee=carry.callee, every=every),
                    f"run the loop under torch.no_grad() (or torch.inference_mode()), or detach it once per "
                    f"iteration: {detach}")
        if carry.kind == "recurrent":
            return (fit("'{name}' is fed back into {callee}() {every} without a detach: the graph grows",
                        keep=("every",), name=name, callee=carry.callee, every=every),
                    f"detach it once per iteration: {detach} (for an LSTM's (h, c): "
                    f"tuple(t.detach() for t in {name}))")
        if carry.kind == "accumulated":
            return (fit("'{name}' accumulates '{other}' and is backpropagated {every} without a reset",
                        keep=("every",), name=name, other=carry.other, every=every),
                    f"reset it after the backward pass ({name} = 0), or accumulate {carry.other}.detach()")
        if from_input:
            return (fit("'{name}' is updated from itself and '{other}' of the input on every forward() with grad on",
                        keep=("name",), name=name, other=carry.other),
                    f"update it under torch.no_grad() (or from {carry.other}.detach()): with grad on it chains "
                    f"every step's graph")
        if carry.in_place:
            return (fit("'{name}' is scaled in place by '{other}' {every} with grad on",
                        keep=("every", "name"), name=name, other=carry.other, every=every),
                    f"scale it by {carry.other}.detach() (or .item()), or under torch.no_grad()")
        what = "updated" if carry.kind == "running" else "rebuilt"
        fix = f"from {carry.other}.detach()" if carry.other else "from detached values"
        if carry.other:
            message = fit("'{name}' is {what} from itself and '{other}' {every}, chaining the graph",
                          keep=("every", "what", "name"), name=name, what=what, other=carry.other, every=every)
        else:
            message = fit("'{name}' is {what} from itself {every}, chaining the graph",
                          keep=("every", "what", "name"), name=name, what=what, every=every)
        return message, f"compute the update {fix} or under torch.no_grad()"

    VALID = [
        # the same statistic from the detached input
        """
import torch
from torch import nn

class AdaptiveAct(nn.Module):
    def __init__(self, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.slope = nn.Parameter(torch.ones(1))
        self.register_buffer("running_mean", torch.zeros(1))

    def forward(self, x):
        mean = x.detach().mean()
        self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mean
        return torch.relu(x) * self.slope

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.act = AdaptiveAct()

    def forward(self, x):
        return self.act(self.conv(x))
""",
        # a forward running through the module's own blocks, keeping each block's output for a
        # loss of the same step: one computation, rebuilt on every forward
        """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, transformer, split):
        super().__init__()
        self.sabs = transformer.blocks[:split]
        self.tabs = transformer.blocks[split:]
        self.task_tokens = nn.ParameterList([transformer.cls_token])

    def param_groups(self):
        return {"sa": self.sabs.parameters(), "ca": self.tabs.parameters()}

    def forward_features(self, x):
        self.feats = []
        for blk in self.sabs:
            x, attn, v = blk(x)
            self.feats.append(x)
        self.feats.pop(-1)
        tokens = []
        for task_token in self.task_tokens:
            task_token = task_token.expand(x.shape[0], -1, -1)
            for blk in self.tabs:
                task_token, attn, v = blk(torch.cat((task_token, x), dim=1))
            tokens.append(task_token[:, 0])
        return tokens
""",
        # a decoder handed in runs its cells on the state and its attention on it: calls whose
        # results are used are computations, not stores into the model
        """
import torch

def decode(dae, encoded, start, steps=50):
    h, c = dae.init_hidden_state(1)
    word = start
    words = []
    for _ in range(steps):
        h, c = dae.lstm(torch.cat([dae.embed(word), h], dim=1), (h, c))
        attended = dae.attention(encoded, h)
        word = dae.fc(torch.cat([h, attended], dim=1)).argmax(-1)
        words.append(word.item())
    return words
""",
        # the state a model memlint cannot see hands back, backpropagated through every iteration
        # without retain_graph: were it to carry the last iteration's graph, the second backward
        # would fail at once; code that runs has the model cut it (memories detached in forward)
        """
import torch
def train(model, loader, opt, crit):
    h = torch.zeros(1, 8)
    for x, y in loader:
        out, h_new = model(x, h)
        loss = crit(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        h = h_new
""",
        """
import torch
def train(model, loader, opt, crit):
    state = None
    for x, y in loader:
        result = model(x, state)
        loss = crit(result.logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        state = result.state
""",
        # ... the same generation under @torch.no_grad(): nothing chains
        """
import torch
import torch.nn as nn


class LanguageModel(nn.Module):
    def __init__(self, n, hidden_size=64):
        super().__init__()
        self.encoder = nn.Embedding(n, 16)
        self.rnn = nn.LSTM(16, hidden_size)
        self.decoder = nn.Linear(hidden_size, n)

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output), hidden

    @torch.no_grad()
    def generate(self, steps, hidden, input):
        chars = []
        for i in range(steps):
            prediction, hidden = self.forward(input, hidden)
            idx = torch.multinomial(prediction.squeeze().exp(), 1)[0]
            input.fill_(int(idx))
            chars.append(int(idx))
        return chars
""",
        # a differentiable optimizer's step (higher, torchopt) returns new labels: unrolled on purpose
        """
import higher
import torch
from torch import nn

class Energy(nn.Module):
    def __init__(self, n_cls):
        super().__init__()
        self.fc = nn.Linear(784 + n_cls, 1)

    def forward(self, x, y):
        return self.fc(torch.cat((x.flatten(1), y), dim=1)).squeeze()

class UnrollEnergy(nn.Module):
    def __init__(self, enet: Energy, n_cls: int = 10, n_inner_iter: int = 5):
        super().__init__()
        self.enet, self.n_cls, self.n_inner_iter = enet, n_cls, n_inner_iter

    def forward(self, x):
        y = torch.zeros(x.size(0), self.n_cls, requires_grad=True)
        inner_opt = higher.get_diff_optim(torch.optim.SGD([y], lr=1e-1), [y])
        for _ in range(self.n_inner_iter):
            energy = self.enet(x, y)
            y, = inner_opt.step(energy.sum(), params=[y])
        return y
""",
        # a recurrence over the positions of one input inside a module's forward (the range
        # bound to a local named "steps"): one forward's computation, backpropagated by its caller
        """
import torch
from torch import nn

class LSTMAttention(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.lstm_cell = nn.LSTMCell(input_size, hidden_size)
        self.proj = nn.Linear(hidden_size, hidden_size)

    def forward(self, input, hidden):
        output = []
        steps = range(input.size(0))
        for i in steps:
            hidden = self.lstm_cell(input[i], hidden)
            hy, cy = hidden
            output.append(self.proj(hy))
        return torch.stack(output), hidden
""",
        # the hidden state rebound to its .data right after the step: the old graph is dropped
        """
import torch
from torch import nn

rnn = nn.RNN(1, 32, batch_first=True)
optimizer = torch.optim.Adam(rnn.parameters())
h_state = None
for step in range(100):
    x = torch.randn(1, 10, 1)
    prediction, h_state = rnn(x, h_state)
    h_state = h_state.data
    loss = prediction.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        # an unrolled solve in forward: a few autograd.grad updates whose result is returned,
        # for the caller's one backward pass through all of them (equilibrium aggregation)
        """
import torch
class MomentumSolver(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lr = torch.nn.Parameter(torch.tensor(0.1))

    def forward(self, x, y, energy, iterations: int = 5):
        velocity = torch.zeros_like(y)
        for _ in range(iterations):
            grad = torch.autograd.grad(energy(x, y), y, create_graph=True)[0]
            velocity = 0.9 * velocity - self.lr * grad
            y = y + velocity
        return y
""",
        # the part of a helper's result the running value is unpacked into is detached there
        """
import torch
from torch import autograd

def path_regularize(fake_img, latents, mean_path_length, decay=0.01):
    grad, = autograd.grad(outputs=fake_img.sum(), inputs=latents, create_graph=True)
    path_lengths = torch.sqrt(grad.pow(2).sum(2).mean(1))
    path_mean = mean_path_length + decay * (path_lengths.mean() - mean_path_length)
    return (path_lengths - path_mean).pow(2).mean(), path_mean.detach(), path_lengths

def train(generator, loader, g_optim):
    mean_path_length = 0
    for noise in loader:
        fake_img, latents = generator(noise, return_latents=True)
        path_loss, mean_path_length, _ = path_regularize(fake_img, latents, mean_path_length)
        path_loss.backward()
        g_optim.step()
""",
        # a temperature annealed from configuration values: a number the model is given
        """
import math
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--temp_min", type=float, default=0.5)
args = parser.parse_args()
TEMP_MIN, ANNEAL_RATE = args.temp_min, 1e-6
vae = torch.nn.Linear(8, 8).cuda()
opt = torch.optim.Adam(vae.parameters())
temp, step = 1.0, 0
for images, _ in loader:
    loss = vae(images.cuda()).div(temp).mean()
    loss.backward()
    opt.step()
    temp = max(temp * math.exp(-ANNEAL_RATE * step), TEMP_MIN)
    step += 1
""",
        # a model handed through a helper and back; the scaler scales the loss (AMP), it holds no graph
        """
import torch
def train_epoch(loader, model, optimizer, scaler, cfg, forward_step):
    for inputs, labels in loader:
        optimizer.zero_grad()
        with torch.cuda.amp.autocast():
            model, preds, loss = forward_step(model, cfg, inputs, scaler)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        # truncated BPTT done right: repackage_hidden once per batch (word_language_model)
        """
import torch
def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)

def train(model, train_data, optimizer, criterion, batch_size, bptt):
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        optimizer.step()
""",
        # detached at the end of the iteration, and an LSTM tuple detached in place
        """
import torch
def train(lstm, head, loader, opt, crit):
    state = None
    h = c = None
    for x, y in loader:
        out, state = lstm(x, state)
        loss = crit(head(out), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        state = tuple(s.detach() for s in state)

def train_inplace(lstm, loader, opt, crit, hidden):
    for x, y in loader:
        out, hidden = lstm(x, hidden)
        loss = crit(out, y)
        loss.backward()
        opt.step()
        for h in hidden:
            h.detach_()
""",
        # seq2seq decoding: the hidden state is carried over time steps, backpropagated once after
        """
import torch
def train_pair(encoder, decoder, src, tgt, enc_opt, dec_opt, criterion):
    enc_out, hidden = encoder(src)
    loss = 0
    dec_input = tgt[:, :1]
    for t in range(1, tgt.size(1)):
        out, hidden = decoder(dec_input, hidden, enc_out)
        loss += criterion(out.squeeze(1), tgt[:, t])
        dec_input = tgt[:, t:t + 1]
    loss.backward()
    enc_opt.step()
    dec_opt.step()
""",
        # running statistics updated under no_grad (DINO's centre, a center loss's centers)
        """
import torch
import torch.nn.functional as F
def train(student, teacher, loader, opt, out_dim):
    center = torch.zeros(1, out_dim)
    centers = torch.zeros(10, out_dim)
    for images, labels in loader:
        s_out = student(images)
        t_out = teacher(images)
        loss = torch.sum(-F.softmax((t_out - center) / 0.04, dim=-1) * F.log_softmax(s_out / 0.1, dim=-1), dim=-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            center = center * 0.9 + t_out.mean(dim=0, keepdim=True) * 0.1
            for c in labels.unique():
                centers[c] = 0.9 * centers[c] + 0.1 * s_out[labels == c].mean(0)
""",
        # running statistic from a detached value
        """
import torch
def train(model, loader, opt, crit):
    ema_loss = None
    mean_feat = torch.zeros(256)
    for x, y in loader:
        feats = model.encode(x)
        loss = crit(model.head(feats), y) + 0.1 * (feats - mean_feat).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        mean_feat = 0.99 * mean_feat + 0.01 * feats.detach().mean(0)
""",
        # EMA of parameters under no_grad (timm ModelEma, swa_utils)
        """
import torch
class ModelEma:
    def __init__(self, model, decay=0.9999):
        self.module = copy_model(model)
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            ema_v.copy_(ema_v * self.decay + (1.0 - self.decay) * model_v)

def train(model, ema, loader, opt, crit):
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        ema.update(model)
""",
        # memory bank (MoCo queue) filled under no_grad
        """
import torch
def train(encoder_q, encoder_k, loader, opt, crit, queue_size):
    queue = torch.randn(128, queue_size)
    for im_q, im_k in loader:
        q = encoder_q(im_q)
        with torch.no_grad():
            k = encoder_k(im_k)
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ queue], dim=1)
        loss = crit(logits, torch.zeros(len(q), dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        opt.step()
        queue = torch.cat([queue[:, len(k):], k.T], dim=1)
""",
        # gradient accumulation: the accumulated loss is reset after each backward pass
        """
import torch
def train(model, loader, opt, crit, accum_steps):
    loss = 0
    for i, (x, y) in enumerate(loader):
        loss += crit(model(x), y) / accum_steps
        if (i + 1) % accum_steps == 0:
            loss.backward()
            opt.step()
            opt.zero_grad()
            loss = 0
""",
        # the state is re-initialised each batch (stateless use of an RNN)
        """
import torch
def train(rnn, loader, opt, crit):
    for x, y in loader:
        hidden = rnn.init_hidden(x.size(0))
        for t in range(x.size(1)):
            out, hidden = rnn(x[:, t], hidden)
        loss = crit(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # MAML: the meta-loss is summed over tasks (whose loop runs autograd.grad on another
        # loss) and backpropagated once after the loop
        """
import torch
import torch.nn.functional as F
from torch.func import functional_call
def maml_step(model, tasks, meta_opt, inner_lr=0.01):
    params = dict(model.named_parameters())
    meta_loss = 0.0
    for support_x, support_y, query_x, query_y in tasks:
        inner_loss = F.cross_entropy(functional_call(model, params, (support_x,)), support_y)
        grads = torch.autograd.grad(inner_loss, list(params.values()), create_graph=True)
        fast = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
        meta_loss = meta_loss + F.cross_entropy(functional_call(model, fast, (query_x,)), query_y)
    meta_opt.zero_grad()
    (meta_loss / len(tasks)).backward()
    meta_opt.step()
""",
        # Lightning: the queue is filled under no_grad, the hidden state is detached in a hook,
        # the centre is reset at each epoch start
        """
import torch
import torch.nn.functional as F
import lightning as L
class MoCo(L.LightningModule):
    def __init__(self, encoder_q, encoder_k, rnn, dim=128, k=4096):
        super().__init__()
        self.encoder_q, self.encoder_k, self.rnn = encoder_q, encoder_k, rnn
        self.queue = F.normalize(torch.randn(dim, k), dim=0)
        self.hidden = None
        self.center = torch.zeros(1, dim)

    @torch.no_grad()
    def _enqueue(self, keys):
        self.queue = torch.cat([self.queue[:, len(keys):], keys.T], dim=1)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.hidden = tuple(h.detach() for h in self.hidden)

    def on_train_epoch_start(self):
        self.center = torch.zeros_like(self.center)

    def training_step(self, batch, batch_idx):
        im_q, im_k = batch
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            k = F.normalize(self.encoder_k(im_k), dim=1)
        out, self.hidden = self.rnn(q.unsqueeze(1), self.hidden)
        self.center = 0.9 * self.center + 0.1 * q.mean(0, keepdim=True)
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ self.queue], dim=1) / 0.07
        loss = F.cross_entropy(logits - self.center.sum(), torch.zeros(len(q), dtype=torch.long))
        self._enqueue(k)
        return loss
""",
        # forward of a module keeping an inference cache (not a training step)
        """
import torch
from torch import nn
class CachedAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.cache = None
    def forward(self, x):
        k = self.proj(x)
        self.cache = k if self.cache is None else torch.cat([self.cache, k], dim=1)
        return self.cache
""",
        # ML101's shape (accumulated, never read back): reported by ML101, not here
        """
import torch
def train(model, loader, opt, crit):
    total = 0
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        total = total + loss
""",
        """
import torch
def train(model, loader, opt, crit):
    all_logits = torch.empty(0)
    for x, y in loader:
        logits = model(x)
        loss = crit(logits, y)
        loss.backward()
        opt.step()
        all_logits = torch.cat([all_logits, logits])
""",
        # the state comes back through another name, detached (or computed without grad)
        """
import torch
def train(model, loader, opt, crit):
    h = torch.zeros(1, 8)
    for x, y in loader:
        out, h_new = model(x, h)
        loss = crit(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        h = h_new.detach()

def train_repackaged(model, loader, opt, crit):
    h = torch.zeros(1, 8)
    for x, y in loader:
        out, h_new = model(x, h)
        h_new = h_new.detach()
        loss = crit(out, y)
        loss.backward()
        opt.step()
        h = h_new

def rollout(model, policy, env_steps, opt):
    state = None
    for obs in env_steps:
        with torch.no_grad():
            result = model(obs, state)
        loss = policy(result.features).mean()
        loss.backward()
        opt.step()
        state = result.state
""",
    ]

    INVALID = [
        # a running statistic of an activation module of the file that a network of the file
        # builds (fed its conv's output): from the input's graph, with grad on (warning)
        Invalid("""
import torch
from torch import nn

class AdaptiveAct(nn.Module):
    def __init__(self, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.slope = nn.Parameter(torch.ones(1))
        self.register_buffer("running_mean", torch.zeros(1))

    def forward(self, x):
        mean = x.mean()
        self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mean
        return torch.relu(x) * self.slope

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.act = AdaptiveAct()

    def forward(self, x):
        return self.act(self.conv(x))
""", line=14),
        # an agent acting with grad on: the recurrent state chains every step's graph for the
        # whole episode; what leaves for the environment is an array, not the chain
        Invalid("""
import torch
from torch import nn

class Agent:
    def __init__(self):
        self.encoder = nn.Linear(64, 32)
        self.cell = nn.GRUCell(32, 32)
        self.actor = nn.Linear(32, 3)

    def interact(self, env, episodes):
        scores = []
        for _ in range(episodes):
            obs, done, score = env.reset(), False, 0.0
            state = torch.zeros(1, 32)
            while not done:
                state = self.cell(self.encoder(torch.as_tensor(obs).float()), state)
                action = torch.tanh(self.actor(state))
                obs, reward, done, _ = env.step(action.squeeze(0).cpu().numpy())
                score += reward
            scores.append(score)
        return scores
""", line=17),
        # the same loop where the state comes from nn.LSTM (its state carries the graph) or the
        # backward retains the graph: the chain grows (or the second step fails)
        Invalid("""
import torch
from torch import nn

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 8)

    def fit(self, loader, opt, crit):
        h = None
        for x, y in loader:
            out, h = self.rnn(x, h)
            loss = crit(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
""", line=13),
        Invalid("""
import torch
def train(model, loader, opt, crit):
    h = torch.zeros(1, 8)
    for x, y in loader:
        out, h_new = model(x, h)
        loss = crit(out, y)
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
        h = h_new
""", line=11),
        # generation through the module's own forward, with grad on: the state chains every step's graph
        Invalid("""
import torch
import torch.nn as nn


class LanguageModel(nn.Module):
    def __init__(self, n, hidden_size=64):
        super().__init__()
        self.encoder = nn.Embedding(n, 16)
        self.rnn = nn.LSTM(16, hidden_size)
        self.decoder = nn.Linear(hidden_size, n)

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output), hidden

    def generate(self, steps, hidden, input):
        chars = []
        for i in range(steps):
            prediction, hidden = self.forward(input, hidden)
            idx = torch.multinomial(prediction.squeeze().exp(), 1)[0]
            input.fill_(int(idx))
            chars.append(int(idx))
        return "".join(map(str, chars))
""", line=20),
        # sampling from a model handed in, returning the text: the sampled character (from
        # output.data) and the growing string carry nothing of the chain, which dies unused
        Invalid("""
import torch


def generate(decoder, prime_str, predict_len, temperature=0.8):
    hidden = decoder.init_hidden()
    predicted = prime_str
    inp = char_tensor(prime_str[-1])
    for p in range(predict_len):
        output, hidden = decoder(inp, hidden)
        top_i = torch.multinomial(output.data.view(-1).div(temperature).exp(), 1)[0]
        predicted_char = ALPHABET[top_i]
        predicted += predicted_char
        inp = char_tensor(predicted_char)
    return predicted
""", line=10),
        # truncated BPTT without detaching the hidden state
        Invalid("""
import torch
def train(model, train_data, optimizer, criterion, batch_size, bptt):
    model.train()
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, output.size(-1)), targets)
        loss.backward(retain_graph=True)
        optimizer.step()
""", line=9),
        # recurrent state carried within an epoch, reset only per epoch
        Invalid("""
import torch
from torch import nn
def fit(lstm: nn.LSTM, head, loader, opt, epochs):
    for epoch in range(epochs):
        state = None
        for x, y in loader:
            out, state = lstm(x, state)
            loss = nn.functional.mse_loss(head(out[:, -1]), y)
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
""", line=8),
        # a running centre used in the loss (DINO-style, without no_grad)
        Invalid("""
import torch
import torch.nn.functional as F
def train(student, teacher, loader, opt, out_dim):
    centre = torch.zeros(1, out_dim)
    for images in loader:
        s_out = student(images)
        t_out = teacher(images)
        centre = 0.99 * centre + 0.01 * t_out.mean(0, keepdim=True)
        loss = -(F.softmax(t_out - centre, -1) * F.log_softmax(s_out, -1)).sum(-1).mean()
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
""", line=9),
        # center loss: class centers updated in place from the embeddings
        Invalid("""
import torch
def train(model, loader, opt, crit, num_classes, dim, alpha=0.5):
    centers = torch.zeros(num_classes, dim)
    for x, labels in loader:
        emb, logits = model(x)
        for c in labels.unique():
            centers[c] = alpha * centers[c] + (1 - alpha) * emb[labels == c].mean(0)
        loss = crit(logits, labels) + (emb - centers[labels]).pow(2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""", line=8),
        # a memory bank of features concatenated with their graphs
        Invalid("""
import torch
def train(encoder, loader, opt, bank_size, temperature=0.1):
    bank = torch.empty(0, 128)
    for views in loader:
        z = encoder(views)
        bank = torch.cat([bank, z])[-bank_size:]
        logits = z @ bank.T / temperature
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(z)))
        opt.zero_grad()
        loss.backward()
        opt.step()
""", line=7),
        # an accumulated loss backpropagated every iteration and never reset
        Invalid("""
import torch
def train(model, loader, opt, crit):
    running = 0
    for x, y in loader:
        running += crit(model(x), y)
        opt.zero_grad()
        running.backward(retain_graph=True)
        opt.step()
""", line=6),
        # Lightning training_step: a memory bank and a recurrent state kept on self
        Invalid("""
import torch
import torch.nn.functional as F
import lightning as L
class Contrastive(L.LightningModule):
    def __init__(self, encoder, rnn, bank_size=1024):
        super().__init__()
        self.encoder = encoder
        self.rnn = rnn
        self.bank = torch.empty(0, 128)
        self.bank_size = bank_size
        self.state = None

    def training_step(self, batch, batch_idx):
        z = F.normalize(self.encoder(batch), dim=1)
        self.bank = torch.cat([self.bank, z])[-self.bank_size:]
        out, self.state = self.rnn(z.unsqueeze(0), self.state)
        loss = F.cross_entropy(z @ self.bank.T / 0.1, torch.arange(len(z))) + out.pow(2).mean()
        return loss
""", line=16),
        Invalid("""
import torch
import lightning as L
class Stateful(L.LightningModule):
    def __init__(self, rnn, head):
        super().__init__()
        self.rnn = rnn
        self.head = head
        self.hidden = None

    def training_step(self, batch, batch_idx):
        x, y = batch
        out, self.hidden = self.rnn(x, self.hidden)
        return torch.nn.functional.mse_loss(self.head(out), y)
""", line=13),
        # module-level script, GRU cell stepped over a stream
        Invalid("""
import torch
from torch import nn
cell = nn.GRUCell(32, 64)
readout = nn.Linear(64, 1)
opt = torch.optim.SGD(list(cell.parameters()) + list(readout.parameters()), lr=0.01)
h = torch.zeros(1, 64)
for step in range(10_000):
    x, y = next_sample()
    h = cell(x, h)
    loss = (readout(h) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
""", line=10),
    ]

    # ----- recurrent state and self state of per-step methods (issues 13 and 18) ----------------
    VALID += [
        # a stream fed through an LSTM under no_grad, or detached every chunk; BPTT over one
        # sequence, backpropagated once after the loop
        """
import torch
from torch import nn
def transcribe_stream(model: nn.LSTM, head, audio_stream):
    hidden = None
    tokens = []
    with torch.no_grad():
        for chunk in audio_stream:
            out, hidden = model(chunk, hidden)
            tokens.append(head(out).argmax(-1).tolist())
    return tokens

def transcribe_detached(model: nn.LSTM, head, audio_stream):
    hidden = None
    tokens = []
    for chunk in audio_stream:
        out, hidden = model(chunk, hidden)
        hidden = tuple(h.detach() for h in hidden)
        tokens.append(head(out).argmax(-1).tolist())
    return tokens

def train_sequence(model: nn.LSTM, head, sequence, targets, optimizer, criterion):
    hidden = None
    loss = 0
    for t in range(sequence.size(0)):
        out, hidden = model(sequence[t:t + 1], hidden)
        loss = loss + criterion(head(out[0]), targets[t])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        # per-agent memories updated under no_grad
        """
import torch
class Agent:
    def __init__(self, policy, agents):
        self.policy = policy
        self.agents = agents
        self.memory_dict = {agent: torch.zeros(1, 64) for agent in agents}
    @torch.no_grad()
    def act(self, observations):
        memories = torch.stack([self.memory_dict[agent] for agent in self.agents], 1)
        actions, memories = self.policy(observations, memories)
        for i, agent in enumerate(self.agents):
            self.memory_dict[agent] = memories[0, i]
        return actions
    def run(self, env, num_steps):
        obs = env.reset()
        for step in range(num_steps):
            obs, rewards, dones, infos = env.step(self.act(obs).tolist())
""",
        # prototypes updated from detached features, or under no_grad
        """
import torch
import torch.nn.functional as F
class PrototypeTrainer:
    def __init__(self, encoder, optimizer, num_classes, dim, momentum=0.9):
        self.encoder, self.optimizer, self.momentum = encoder, optimizer, momentum
        self.protos = torch.zeros(num_classes, dim)
    @torch.no_grad()
    def update_prototypes(self, feats, labels):
        for c in labels.unique():
            self.protos[c] = self.momentum * self.protos[c] + (1 - self.momentum) * feats[labels == c].mean(0)
    def update_detached(self, feats, labels):
        feats = feats.detach()
        for c in labels.unique():
            self.protos[c] = self.momentum * self.protos[c] + (1 - self.momentum) * feats[labels == c].mean(0)
    def train_epoch(self, loader):
        for images, labels in loader:
            feats = self.encoder(images)
            self.update_prototypes(feats, labels)
            self.update_detached(feats, labels)
            loss = F.cross_entropy(-torch.cdist(feats, self.protos), labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
""",
    ]

    INVALID += [
        # streaming inference through a recurrent model with grad on and no backward at all
        Invalid("""
import torch
from torch import nn
def transcribe_stream(model: nn.LSTM, head, audio_stream):
    hidden = None
    tokens = []
    for chunk in audio_stream:
        out, hidden = model(chunk, hidden)
        tokens.append(head(out).argmax(-1).tolist())
    return tokens
""", line=8),
        # per-agent memories kept in a dict by a method called once per environment step
        Invalid("""
import torch
class Agent:
    def __init__(self, policy, agents):
        self.policy = policy
        self.agents = agents
        self.memory_dict = {agent: torch.zeros(1, 64) for agent in agents}
    def act(self, observations):
        memories = torch.stack([self.memory_dict[agent] for agent in self.agents], 1)
        actions, memories = self.policy(observations, memories)
        for i, agent in enumerate(self.agents):
            self.memory_dict[agent] = memories[0, i]
        return actions
    def run(self, env, num_steps):
        obs = env.reset()
        for step in range(num_steps):
            obs, rewards, dones, infos = env.step(self.act(obs).tolist())
""", line=12),
        # a slot-wise running average of features, in a method called from the training loop
        Invalid("""
import torch
import torch.nn.functional as F
class PrototypeTrainer:
    def __init__(self, encoder, optimizer, num_classes, dim, momentum=0.9):
        self.encoder, self.optimizer, self.momentum = encoder, optimizer, momentum
        self.protos = torch.zeros(num_classes, dim)
    def update_prototypes(self, feats, labels):
        for c in labels.unique():
            self.protos[c] = self.momentum * self.protos[c] + (1 - self.momentum) * feats[labels == c].mean(0)
    def train_epoch(self, loader):
        for images, labels in loader:
            feats = self.encoder(images)
            self.update_prototypes(feats, labels)
            loss = F.cross_entropy(-torch.cdist(feats, self.protos), labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
""", line=10),
    ]

    # ----- no backward at all: chains nobody uses; state scaled in place; layer statistics (issue 23) -------
    VALID += [
        # the state detached before it is stored; a decoder whose outputs are returned with their
        # graph (a caller may train through them); a model applied layer by layer
        """
import torch
def collect(env, policy, buffer, n_steps):
    obs, h = env.reset(), None
    for _ in range(n_steps):
        logits, h = policy(obs, h)
        h = h.detach()
        obs, reward = env.step(logits.argmax(-1))
        buffer.store(obs=obs, logp=logits.log_softmax(-1).detach(), hidden=h)

def decode(decoder, hidden, steps):
    outputs = []
    token = torch.zeros(1, dtype=torch.long)
    for t in range(steps):
        out, hidden = decoder(token, hidden)
        outputs.append(out)
        token = out.argmax(-1)
    return torch.stack(outputs)

def run_layers(layers, x, h):
    for layer in layers:
        x, h = layer(x, h)
    return x.tolist()
""",
        # a module's forward unrolled over time steps: its graph is what the caller trains
        """
import torch
from torch import nn
class Unrolled(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
        self.outputs = None
    def forward(self, xs):
        h = torch.zeros(xs.size(1), 8)
        outs = torch.zeros(xs.size(0), xs.size(1), 8)
        for t in range(xs.size(0)):
            h = self.cell(xs[t], h)
            outs[t] = h
        return outs
""",
        # a sampler inside a context manager of the module that turns grad off
        """
import contextlib
import torch
@contextlib.contextmanager
def inference_context():
    with torch.inference_mode():
        yield

def sample(model, x, steps):
    with inference_context():
        for _ in range(steps):
            x = model(x)
    return x.cpu().numpy()
""",
        # per-agent memories: acting under no_grad, or stored detached, or reset at each episode
        """
import torch
class TorchPolicy:
    def __init__(self, actor):
        self.actor = actor
        self.memory_dict = {}
    def retrieve_memories(self, agent_ids):
        return torch.stack([self.memory_dict.get(a, torch.zeros(128)) for a in agent_ids])[None]
    def save_memories(self, agent_ids, memories):
        for i, agent_id in enumerate(agent_ids):
            self.memory_dict[agent_id] = memories[0, i]
    def evaluate(self, obs, agent_ids):
        memories = self.retrieve_memories(agent_ids)
        with torch.no_grad():
            actions, new_memories = self.actor(obs, memories[0])
        self.save_memories(agent_ids, new_memories)
        return actions.numpy()
    def evaluate_detached(self, obs, agent_ids):
        actions, new_memories = self.actor(obs, self.retrieve_memories(agent_ids)[0])
        self.save_memories(agent_ids, new_memories.detach())
        return actions.numpy()

class EpisodicPolicy:
    def reset(self):
        self.memory_dict = {}
    def retrieve_memories(self, agent_ids):
        return torch.stack([self.memory_dict[a] for a in agent_ids])[None]
    def save(self, agent_ids, memories):
        for i, agent_id in enumerate(agent_ids):
            self.memory_dict[agent_id] = memories[0, i]
    def act(self, obs, agent_ids):
        actions, new_memories = self.actor(obs, self.retrieve_memories(agent_ids)[0])
        self.save(agent_ids, new_memories)
        return actions.numpy()
""",
        # a configuration global read for the shape of what is backpropagated: the best value a helper
        # returns from it carries no graph (coqui-TTS's train_encoder)
        """
import torch
from trainer_utils import load_config, save_best_model
c = load_config()

def train(model, criterion, optimizer, loader):
    best_loss = {"eval_loss": float("inf")}
    for epoch in range(c.epochs):
        for inputs, labels in loader:
            outputs = model(inputs)
            loss = criterion(outputs.view(c.num_classes, outputs.shape[0] // c.num_classes, -1), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        best_loss = save_best_model({"eval_loss": loss.item()}, best_loss, c, model, optimizer)
""",
        # the history rebuilt from a detached action, or returned with its graph (a caller may train on it)
        """
import torch
def rollout(policy, history, steps):
    actions = []
    for t in range(steps):
        action = policy(history)
        history = torch.cat([history[:, 1:], action.detach().unsqueeze(1)], dim=1)
        actions.append(action.argmax(-1).item())
    return actions

def unroll(policy, history, steps):
    for t in range(steps):
        action = policy(history)
        history = torch.cat([history[:, 1:], action.unsqueeze(1)], dim=1)
    return history
""",
        # running statistics of a layer updated under no_grad; a scale applied from a detached loss
        """
import torch
from torch import nn
class MyBatchNorm(nn.BatchNorm1d):
    def forward(self, x):
        if self.training:
            mean = x.mean(0)
            with torch.no_grad():
                self.running_mean = 0.9 * self.running_mean + 0.1 * mean
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt()

class Hedge:
    def __init__(self, model, loss_fn, n):
        self.model, self.loss_fn, self.alpha = model, loss_fn, torch.ones(n) / n
    def update(self, x, y):
        losses = [self.loss_fn(out, y) for out in self.model(x)]
        for i, loss in enumerate(losses):
            loss.backward(retain_graph=True)
            self.alpha[i] *= torch.pow(torch.tensor(0.99), loss.item())
""",
    ]

    INVALID += [
        # a rollout stores the LSTM state with its graph; another argument's detach() does not cut it (Metta)
        Invalid("""
import torch
def collect(env, policy, experience, n_steps):
    obs = env.reset()
    h = c = torch.zeros(obs.shape[0], 256)
    for _ in range(n_steps):
        logits, value, (h, c) = policy(obs, (h, c))
        action = logits.argmax(-1)
        experience.store(obs=obs, values=value.detach(), lstm_h=h, lstm_c=c)
        obs = env.step(action.cpu().numpy())
""", line=9),
        # a stream encoded step by step over range(): only numbers leave the function
        Invalid("""
import torch
def encode_stream(model, frames):
    hidden = torch.zeros(16, 400)
    embeddings = []
    for i in range(frames.shape[0]):
        out, hidden = model(frames[i], hidden)
        embeddings.append(out.cpu().numpy())
    return embeddings
""", line=7),
        # hedge weights scaled in place by each step's losses, in a method that trains (ONN)
        Invalid("""
import torch
class ONN(torch.nn.Module):
    def update_weights(self, X, Y):
        losses = [self.loss_fn(out, Y) for out in self.forward(X)]
        for i, loss in enumerate(losses):
            loss.backward(retain_graph=True)
        for i in range(len(losses)):
            self.alpha[i] *= torch.pow(self.b, losses[i])
""", line=9),
        # hidden states kept per environment: one method reads them, another runs the recurrent
        # policy on them, a third stores the new ones with their graph
        Invalid("""
import torch
class RecurrentAgent:
    def __init__(self, net, hidden_size):
        self.net = net
        self.hidden_size = hidden_size
        self.hidden_by_env = {}
    def _hidden_for(self, env_ids):
        return torch.stack([self.hidden_by_env.get(i, torch.zeros(self.hidden_size)) for i in env_ids])
    def _remember(self, env_ids, hidden):
        for row, env_id in enumerate(env_ids):
            self.hidden_by_env[env_id] = hidden[row]
    def act(self, obs, env_ids):
        logits, hidden = self.net(obs, self._hidden_for(env_ids))
        self._remember(env_ids, hidden)
        return logits.argmax(-1).tolist()
""", line=12),
        # a hand-written batch norm updating its running mean with grad on (a warning: from the input)
        Invalid("""
import torch
from torch import nn
class MyBatchNorm2d(nn.BatchNorm2d):
    def forward(self, input):
        if self.training:
            mean = input.mean([0, 2, 3])
            self.running_mean = self.momentum * mean + (1 - self.momentum) * self.running_mean
        return input - self.running_mean[None, :, None, None]
""", line=8),
    ]

def _derives_from_place(names: set[str], place: str, function: FunctionScope) -> bool:
    """Were ``names`` computed, in ``function``, from ``place`` (through any value a name was
    bound to: ``memories = torch.stack([self.memory[a] for a in agents])`` reads ``self.memory``)?"""
    def computed_from(name: str) -> Iterator[str]:
        for value in function.stored_values.get(name, ()):
            yield from names_in(value)
        yield from function.derived_from.get(name, ())

    # self.memory.get(agent) reads self.memory
    return reaches(names, computed_from, lambda name: name == place or name.startswith(place + "."))


def _state_names(name: str, function: FunctionScope) -> set[str]:
    """``name`` and the names its parts are unpacked into (``h, c = hc``, ``h = hc[0]``)."""
    names = {name}
    for other, values in function.stored_values.items():
        for value in values:
            while isinstance(value, cst.Subscript):
                value = value.value
            if dotted_name(value) == name:
                names.add(other)
    return names


def _retains(call: cst.Call) -> bool:
    """``backward(retain_graph=True)`` (or a flag: it may): the graph survives the pass."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "retain_graph":
            return not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None"))
    return False


def _callee_walked(loop: Loop, carry: _Carry) -> bool:
    """``for layer in self.layers: x = layer(x)``: one forward pass, layer by layer, not the same
    model fed its own output again."""
    return bool(carry.callee) and carry.callee.split(".", 1)[0] in loop.target_names


# torch.nn classes that hold layers rather than being one.
_CONTAINER_MODULES = frozenset({"Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"})


def _subclasses_a_torch_layer(info) -> bool:
    """Is the class a subclass of a torch.nn layer (``nn.BatchNorm2d``, ``nn.Linear``), whose
    instances sit inside a network and are fed activations?"""
    return any(base.startswith("torch.nn.") and base.rsplit(".", 1)[-1] not in _CONTAINER_MODULES
               and base.rsplit(".", 1)[-1][:1].isupper() for base in info.base_names)


def _assigned_names(statement: cst.CSTNode | None) -> set[str]:
    """The names and places a simple statement line binds (its assignments' targets)."""
    names: set[str] = set()
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    names |= names_in(target.target)
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                names |= names_in(small.target)
    return names


def _place(target: str) -> set[str]:
    """``centers[c]`` is updated through ``centers``: match either."""
    return {target, target.split("[", 1)[0]}


def _flatten(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        out: list[cst.BaseExpression] = []
        for element in target.elements:
            out.extend(_flatten(element.value))
        return out
    if isinstance(target, cst.StarredElement):
        return _flatten(target.value)
    return [target]


def _other_parts(value: cst.BaseExpression, name: str, modules: frozenset[str] = frozenset()) -> list[cst.BaseExpression]:
    """The operands combined with the old value of ``name`` (``feats.mean(0)`` in
    ``0.99 * centre + 0.01 * feats.mean(0)``, ``z`` in ``torch.cat([bank, z])[-K:]``).
    Only expressions that mention ``name`` are taken apart."""
    if name not in names_in(value):
        return [value]
    if isinstance(value, cst.BinaryOperation):
        return _other_parts(value.left, name, modules) + _other_parts(value.right, name, modules)
    if isinstance(value, cst.Subscript):
        return _other_parts(value.value, name, modules)
    if isinstance(value, cst.Call):
        parts: list[cst.BaseExpression] = []
        for arg in value.args:
            if isinstance(arg.value, (cst.List, cst.Tuple)):
                for element in arg.value.elements:
                    parts.extend(_other_parts(element.value, name, modules))
            else:
                parts.extend(_other_parts(arg.value, name, modules))
        if isinstance(value.func, cst.Attribute):
            receiver = value.func.value
            if name in names_in(receiver):
                parts.extend(_other_parts(receiver, name, modules))
            elif (dotted_name(receiver) or "").split(".", 1)[0] not in modules:
                parts.append(receiver)  # x.add(bank), not the torch in torch.cat
        return parts
    return []


def _runs_a_module(call: cst.Call, facts) -> bool:
    """``rnn(x, h)`` on a module (not its constructor), or ``self.forward(x, h)`` /
    ``model.forward(x, h)``: the module's forward runs on the arguments."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "forward" and facts.is_module_expr(func.value):
        return True
    return facts.is_module_expr(func) and not facts.is_module_constructor(call)


def _through_another_object(name: str) -> bool:
    """``agent.state`` or ``self.ac.actor_rnn_hidden`` (an object the method holds): an attribute
    of an object other than ``self`` itself."""
    place = name.split("[", 1)[0]
    return "." in place and (not place.startswith("self.") or place.count(".") >= 2)
