"""ML101 graph-accumulation: a graph-carrying value is accumulated into something that
outlives the loop iteration (or, in ``forward`` / ``training_step``, the call).

Every step's autograd graph then stays alive: ``total_loss += loss`` keeps a chain of
``AddBackward`` nodes back to the first step; ``losses.append(loss)`` keeps each step's
graph (and, without a backward pass, every activation it saved); so do
``stats["loss"] = stats.get("loss", 0) + loss``, ``outs = torch.cat([outs, out])`` and
``meter.update(loss)`` with a meter class of the same module doing ``self.sum += val``.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from memlint.static.facts import (
    CONFIG_NAMES, Graph, Kind, Pending, visit, GraphValue, reaches, builds_a_sequence, concatenated_onto, dotted_name, expression_children, names_in, operands,
    OPAQUE, all_parameters, block_statements, bounded_container, descendants, nested_blocks, parameter_for, place_of,
    storage_name,
)
from memlint.static.fixes import call_method, detach_fix, detached_text, graph_accumulation_fix, item_text
from memlint.static.rule import Invalid, Rule

_ACCUMULATING_OPERATORS = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign,
                           cst.MatrixMultiplyAssign, cst.PowerAssign)
# method -> index of the stored value among the positional arguments
_APPENDING_METHODS = {"append": -1, "extend": -1, "insert": 1, "appendleft": -1, "add_": 0}


def _is_empty_value(value: cst.BaseExpression, facts) -> bool:
    """None, [], {}, (), 0, or a freshly made tensor (torch.zeros/empty/tensor, x.new_zeros)."""
    if isinstance(value, cst.Name):
        return value.value == "None"
    if isinstance(value, (cst.List, cst.Dict, cst.Tuple)):
        return not value.elements
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.Call):
        qualified = facts.qualified_name(value.func) or ""
        if qualified in ("torch.zeros", "torch.empty", "torch.tensor", "list", "dict", "collections.deque", "deque"):
            return True
        return isinstance(value.func, cst.Attribute) and value.func.attr.value in ("new_zeros", "new_empty", "clear")
    return False


# A graph that reaches the accumulator on some paths only (see GraphValue.partial) is a warning,
# and the message says so: the link "on every path" is not shown.
_SOME_PATHS = {False: "", True: " (on some paths)"}
# A value that carries a graph only by reaching a backpropagated loss (see Facts.graph_presumed): a
# warning, and the help names the presumed link.
_PRESUMED = "; its graph is presumed: it reaches a backpropagated loss"


def _given_parameter(receiver: cst.BaseExpression, function) -> tuple[str, bool] | None:
    """``meter`` or ``stats["loss"]`` where ``meter`` / ``stats`` is a parameter of ``function``:
    (the parameter, whether an element of it is the receiver)."""
    elements = type(receiver) is cst.Subscript
    root = receiver.value if elements else receiver
    if type(root) is cst.Name and root.value in function.parameters and root.value not in ("self", "cls"):
        return root.value, elements
    return None


def _on_some_paths(facts, graph) -> bool:
    """Does ``graph`` carry its graph on some paths only (a callee also returns values without one)?"""
    try:
        return facts.resolve(graph).partial
    except Pending:  # a summary not known yet: as before, every path
        return False


def source_of(node: cst.CSTNode, limit: int = 40) -> str:
    text = " ".join(cst.Module(body=()).code_for_node(node).split())  # one line, for the message
    return text if len(text) <= limit else text[: limit - 3] + "..."


def fit(template: str, keep: tuple[str, ...] = (), limit: int = 100, **fields: str) -> str:
    """``template.format(**fields)``, the longest fields (not those in ``keep``) cut (``...``)
    until it fits in ``limit`` characters: a message names what is on the line, briefly."""
    values = dict(fields)
    text = template.format(**values)
    while len(text) > limit:
        cuttable = [k for k in values if k not in keep and len(values[k]) > 10] or [
            k for k in values if len(values[k]) > 10]  # then the kept ones too
        if not cuttable:
            break
        key = max(cuttable, key=lambda k: len(values[k]))
        value = values[key]
        values[key] = value[: max(7, len(value) - (len(text) - limit) - 3)] + "..."
        text = template.format(**values)
    return text


def _backward_after(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    """Does a statement of ``outer``'s body that comes after the loop ``inner`` (in source order,
    at any depth) call ``.backward(...)``?"""
    found = False

    def walk(statements) -> bool:
        nonlocal found
        for statement in statements:
            if statement is inner:
                found = True
                continue
            if found:
                if any(type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "backward"
                       for node in descendants(statement)):
                    return True
            elif any(walk(block) for block in nested_blocks(statement)):
                return True
        return False

    body = getattr(outer, "body", None)
    return isinstance(body, cst.BaseSuite) and walk(block_statements(body))


def _wrapped_by_modulo(counter: str, function: cst.CSTNode) -> bool:
    """Does ``function`` bring ``counter`` back into a fixed range (``self.count = self.count % 2``,
    ``i %= n``)? Its keys then cycle through a few slots, overwritten call after call."""
    for node in descendants(function):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.BinaryOperation) \
                and isinstance(node.value.operator, cst.Modulo) \
                and any(dotted_name(target.target) == counter for target in node.targets):
            return True
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.ModuloAssign) \
                and dotted_name(node.target) == counter:
            return True
    return False


class GraphAccumulation(Rule):
    code = "ML101"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        # class name -> self attributes a method other than __init__ sets back to empty (None, [],
        # zeros): a forward() cache emptied by reset_cache() (a KV cache) is bounded by it.
        self._emptied: dict[str, set[str]] = {}
        # id(function) -> accumulators it also trims (``xs = xs[-2:]``, ``torch.cat((xs[-2:], x))``,
        # ``xs.pop(0)``, ``del xs[0]``): a sliding window, bounded by its own code
        self._trimmed: dict[int, set[str]] = {}
        # id(function) -> accumulator -> id() of the loops it is emptied in (a periodic reset)
        self._emptied_in: dict[int, dict[str, set[int]]] = {}
        # (id(loop), name) -> walk order of the statements of the loop's own body that rebind the
        # name to a value without a graph (``v -= hv`` then ``v = v.detach()``): what was accumulated
        # before such a statement does not reach the next iteration
        self._dropped_in: dict[tuple[int, str], list[int]] = {}
        self._order = 0

    def _result_backpropagated_by_a_caller(self, function: FunctionScope) -> bool:
        """Does a caller in this module backpropagate what a call of ``function`` returns
        (``rgb = render(...); loss = mse(rgb, target); loss.backward()``)?"""
        return any(site.results and site.caller.is_backpropagated(site.results)
                   for site in self.facts.calls_into.get(id(function.node), ()))

    def _emptied_by_a_call_in(self, loop, name: str, function, guards: tuple = ()) -> bool:
        """Does ``loop``'s body call a function of this module whose own body empties ``name``
        — a global object's list (``actor.saved_logprobs``), not the callee's parameter — with
        ``del name[:]``, ``name.clear()`` or ``name = []``, on every iteration that appends? The
        call is unconditional, or under an ``if`` whose test is one of the tests around the append
        (``guards``) and gives the same answer every time (see Facts.is_fixed_test)."""
        root = name.split(".", 1)[0]
        if "." not in name or root in function.bindings or root == "self":
            return False  # only an object the module holds: the callee's name is the same object
        lines = list(loop.node.body.body)
        while lines:
            line = lines.pop()
            if isinstance(line, cst.If) and line.orelse is None and isinstance(line.body, cst.IndentedBlock) \
                    and any(line.test.deep_equals(test) for test in guards) and self.facts.is_fixed_test(line.test, function):
                lines.extend(line.body.body)  # runs whenever the append's own branch runs
                continue
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                call = small.value if type(small) is cst.Expr else None
                if type(call) is not cst.Call or type(call.func) is not cst.Name:
                    continue
                found = self.facts.callees(call)
                if found is not None and any(
                        root not in {param.name.value for param in all_parameters(definition.params)}
                        and _empties(definition, name)
                        for definition in found[0]):
                    return True
        return False

    def _note_trimmed(self, name: str | None) -> None:
        if name is not None:
            self._trimmed.setdefault(id(self.facts.function), set()).add(name)

    def _note_emptied_in_loops(self, name: str | None) -> None:
        """``hist = []`` / ``running = 0`` / ``hist.clear()`` inside loops (every N steps, after a
        print): what the accumulator holds is bounded by those loops' iterations."""
        if name is not None and self.facts.loop is not None:
            self._emptied_in.setdefault(id(self.facts.function), {}).setdefault(name, set()).update(
                id(loop) for loop in self.facts.loops_in_function())

    def _note_dropped(self, node: cst.Assign, name: str) -> None:
        loop = self.facts.loop
        if loop is None or self.facts.graph_value(node.value).carries_something:
            return
        if any(isinstance(line, cst.SimpleStatementLine) and any(part is node for part in line.body)
               for line in loop.node.body.body):  # unconditionally, every iteration
            self._order += 1
            self._dropped_in.setdefault((id(loop), name), []).append(self._order)

    def _dropped_later(self, loop, order: int, name: str) -> bool:
        return loop is not None and any(later > order for later in self._dropped_in.get((id(loop), name), ()))

    def visit_Del(self, node: cst.Del) -> None:
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        for target in targets:
            target = target.value if isinstance(target, cst.Element) else target
            if isinstance(target, cst.Subscript):
                self._note_trimmed(dotted_name(target.value))  # del xs[0], del xs[:k]

    def leave_Assign(self, node: cst.Assign) -> None:
        info = self.facts.class_info
        if info is None or self.facts.function.name == "__init__":
            return
        for assign_target in node.targets:
            targets, values = [assign_target.target], [node.value]
            if isinstance(assign_target.target, (cst.Tuple, cst.List)) and isinstance(node.value, (cst.Tuple, cst.List)) \
                    and len(assign_target.target.elements) == len(node.value.elements):
                targets = [element.value for element in assign_target.target.elements]
                values = [element.value for element in node.value.elements]
            for target, value in zip(targets, values):
                name = dotted_name(target)
                if name is not None and name.startswith("self.") and _is_empty_value(value, self.facts):
                    self._emptied.setdefault(info.name, set()).add(name)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, _ACCUMULATING_OPERATORS):
            self._candidate(node, node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        if self.facts.loop is not None and isinstance(target, (cst.Tuple, cst.List)) \
                and isinstance(node.value, (cst.Tuple, cst.List)) and len(target.elements) == len(node.value.elements):
            # loss_n, pred, label = [], [], []: each emptied, as by its own assignment
            for element, value in zip(target.elements, node.value.elements):
                if _is_empty_value(value.value, self.facts):
                    self._note_emptied_in_loops(dotted_name(element.value))
            return
        if isinstance(target, cst.Subscript):
            if isinstance(node.value, cst.BinaryOperation):  # stats["loss"] = stats.get("loss", 0) + loss
                others = _other_operands(node.value, lambda op: _reads_slot(op, target))
                if others is not None:
                    self._candidate(node, target, others, running=_scales(node.value, lambda op: _reads_slot(op, target)))
                    return
            self._growing_key(node, target, node.value)
            return
        accumulator = dotted_name(target)
        if accumulator is None:
            return
        self._note_dropped(node, accumulator)
        if _slices_of(node.value, accumulator) and (self.facts.loop is not None or "." in accumulator):
            # xs = xs[-k:], xs = torch.cat((xs[1:], x)) in a loop; self.xs = self.xs[1:] in the
            # method that appends to it on every call: a window
            self._note_trimmed(accumulator)
        elif self.facts.loop is not None and _is_empty_value(node.value, self.facts):
            self._note_emptied_in_loops(accumulator)
        running = False
        if isinstance(node.value, cst.BinaryOperation):  # total = total + loss
            others = _other_operands(node.value, lambda op: dotted_name(op) == accumulator)
            running = _scales(node.value, lambda op: dotted_name(op) == accumulator)
        else:  # outs = torch.cat([outs, out])
            others = concatenated_onto(node.value, accumulator, self.facts)
        if others:
            self._candidate(node, target, others, running=running, rebinds=True)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            if func.attr.value in ("pop", "popleft"):
                self._note_trimmed(dotted_name(func.value))  # a queue that drops what it keeps
            elif func.attr.value == "clear":
                self._note_emptied_in_loops(dotted_name(func.value))
            self._method_call(node, func)
        if not isinstance(func, cst.Attribute) or func.attr.value not in _APPENDING_METHODS:
            return
        positional = [arg.value for arg in node.args if arg.keyword is None]
        if not positional or (func.attr.value == "insert" and len(positional) < 2):
            return
        value = positional[_APPENDING_METHODS[func.attr.value]]
        self._candidate(node, func.value, value)

    # ----- shared logic --------------------------------------------------------------------
    def _candidate(self, node: cst.CSTNode, accumulator: cst.BaseExpression,
                   value: cst.BaseExpression | list[cst.BaseExpression], running: bool = False,
                   rebinds: bool = False) -> None:
        """``running``: the old value is scaled (``ema = m * ema + (1 - m) * x``), a running
        average: in a method called once per step, ML102's (it reports the update itself).
        ``rebinds``: ``x = torch.cat([x, new])`` binds a new object to the name; a local that held
        what an attribute holds (``x = self.cache``) no longer does, the attribute is unchanged."""
        facts = self.facts
        if rebinds and facts.loop is None and type(accumulator) is cst.Name \
                and accumulator.value in facts.function.bindings and facts.function is not facts.module_scope \
                and not _declared_outside(facts.function.node, accumulator.value, self._checker.source):
            return  # a local rebound per call: it dies with the call
        values = value if isinstance(value, list) else [value]
        loop = facts.loop
        function = facts.function
        if facts.grad_off and not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                                   and node.func.attr.value != "add_"):
            # ``total += loss`` under no_grad: the sum is computed without recording, it holds no
            # graph (a list's append keeps the tensor itself, graph and all, whatever the mode)
            return
        graph = GraphValue.combine(facts.graph_value(v) for v in values)
        if graph.state == 0:
            return
        holder = facts.state_holder(accumulator)  # stats.device_stat("loss").add_(loss): stats keeps it
        kept_in = holder if holder is not None else accumulator
        outlived = facts.outlived_loops(kept_in)
        if loop is not None:
            if not outlived:
                return
            where = "every iteration"
        elif function.is_per_step_method and facts.outlives_call(kept_in):
            where = f"on every {function.name}() call"
        elif function is not facts.module_scope and function.class_info is not None and facts.outlives_call(kept_in):
            where = f"on every {function.name}() call"  # if it runs per step: decided at the end
        else:
            return
        if running and loop is None:
            return  # self.mean_w = m * self.mean_w + (1 - m) * x.mean(0) per call: ML102 reports the update
        name = storage_name(accumulator) or source_of(accumulator)
        place = place_of(accumulator) or name
        if loop is not None and self._computed_from_accumulator(values, name):
            return  # h = h + f(h), x = x / x.sum(): a recurrence (ML102's business), not an accumulation
        bound_now = self._bound_now(values)
        # loops whose every iteration starts the holder afresh (``self.rollout = []`` per episode)
        rebinding = [outer for outer in facts.loops_in_function() if outer not in outlived]
        carrier = _carrier(max(values, key=lambda v: facts.graph_value(v).state), facts)
        value_text = source_of(carrier)
        detached = detached_text(carrier)
        outlives_call = facts.outlives_call(kept_in)
        # in terms of the parameters, for a method's callers (read now, while its names resolve)
        per_call = facts.summary_form(graph, function) \
            if loop is None and function.class_info is not None and graph.state == Graph.UNKNOWN else None
        self._order += 1
        order = self._order
        guards = facts.guarding_tests()

        def decide() -> None:
            # The innermost loop whose iteration the accumulator survives that stands for a step:
            # a loop over layers, heads or loss terms within one step is bounded; so is the
            # micro-batch loop of a step (backward per part, one optimizer step after it).
            micro = [outer for outer in outlived if (outer.runs_steps and facts.is_micro_batch_loop(outer, function))
                     or outer.steps_each_model]  # (each model of a step in turn: one step's parts too)
            step_loop = next((outer for outer in outlived if outer.runs_steps and outer not in micro), None)
            if loop is not None and step_loop is None and not (micro and outlives_call):
                return  # (a holder that outlives the step function grows once per call of it)
            if step_loop is not None and self._gathers_one_step(step_loop, rebinding, function):
                # the whole loader is one step: the loss summed over it is backpropagated once,
                # after the loop, and the holder starts afresh with the next step
                return
            if step_loop is not None and not step_loop.trains and any(outer.trains for outer in rebinding) \
                    and self._read_by_the_update(name, place, function):
                # an episode's rollout, started afresh by the loop that updates on it once the
                # episode ends (A3C, REINFORCE): one update's graphs, which it backpropagates
                return
            if loop is None and not function.is_per_step_method and not facts.runs_per_step(function):
                return  # a method keeping into its object, not known to run once per step
            if step_loop is not None and not step_loop.is_training_loop and function.is_per_step_method and (
                "." not in name and name in function.bindings
            ):
                return  # a local of forward()/training_step(): it dies with the call (decoder steps, slices)
            root = name.split("[", 1)[0]
            if step_loop is not None and not step_loop.is_training_loop and builds_a_sequence(step_loop) and (
                    function.derives_from(function.returned_names, {root})
                    or (root in function.bindings and root not in function.inputs and function.returned_names)):
                # an episode / decoding / unrolling loop handing its sequence to the caller, or
                # keeping it in a local of a function that returns (a beam search's scores)
                return
            if step_loop is not None and not step_loop.is_training_loop and "." not in root \
                    and root in function.bindings and root not in function.inputs \
                    and function.derives_from(function.returned_names, {root}):
                if not facts.module_done:
                    self.at_module_exit(decide)  # its callers, below it maybe, decide
                    return
                if self._result_backpropagated_by_a_caller(function):
                    # the chunks of one forward joined into the result a caller backpropagates
                    # (``for chunk in chunks: preds.append(model(chunk))``; ``return torch.cat(preds)``):
                    # the graphs are that result's own, needed by its backward
                    return
            # a method keeping what its callers in view hand it (``self.discover(outputs)`` in
            # forward, ``outputs`` a module's output there): the graph is proven at the calls
            # (only calls from the class's own methods: what another object's code hands a
            # method, ``meter.update(loss)``, is reported at that call, where it enters)
            sites = facts.calls_into.get(id(function.node), ())
            by_callers = per_call is not None and OPAQUE not in per_call.names and bool(sites) \
                and all(site.caller.class_info is function.class_info and not site.no_grad for site in sites) \
                and facts.carries_at_calls(per_call, function)
            if not (by_callers or facts.is_graph_carrying(graph, function)):
                return
            if not by_callers and graph.state == Graph.UNKNOWN and function.reads_beside_backpropagated_slots(values):
                return  # out["boxes"] beside out["loss"].backward(): what the other slots hold is unknown
            if name in self._trimmed.get(id(function), ()):
                return  # a sliding window the function trims itself: bounded
            if bounded_container(root, function):
                return  # deque(maxlen=k): the oldest entries drop out
            if any(outer.trains and self._emptied_by_a_call_in(outer, name, function, guards) for outer in outlived):
                # an episode's rollout (``actor.saved_logprobs.append(log_prob)``) that the update
                # function the loop calls backpropagates and empties (``del actor.saved_logprobs[:]``):
                # one iteration's graphs, which that update uses
                return
            if step_loop is not None and step_loop.is_training_loop and \
                    id(step_loop) in self._emptied_in.get(id(function), {}).get(name, ()):
                # emptied inside the training loop (every N steps): N steps of graphs whose saved
                # tensors backward freed. Not in an evaluation loop, where each keeps its activations.
                return
            if self._dropped_later(loop, order, name):
                return  # rebound without a graph later in the same iteration (``v = v.detach()``)
            if root in function.numpy_converted:
                return  # mu.cpu().numpy() later: numpy() raises on a graph, so none is kept there
            if function.backpropagates_whole(place):
                return  # summing sub-losses on purpose: total.backward() / sum(losses).backward()
            if not isinstance(node, cst.Call) and function.is_backpropagated({name}):
                return  # an update read back into the loss (centers[c] = m * centers[c] + ...): ML102's
            if loop is not None and not outlives_call and not any(
                    outer.has_backward_pass or outer.has_optimizer_step for outer in outlived) \
                    and function.is_backpropagated({root}, through_elements=True):
                return  # one step's per-part gradients, read by the loss it backpropagates after the loop
            if not by_callers and not self._graph_proven(values, bound_now, function):
                return  # nothing shows the value carries a graph (a frozen model's output may not)

            some_paths = _on_some_paths(facts, graph)
            presumed = not by_callers and facts.graph_presumed(graph, function)

            def report() -> None:
                self.report(
                    node,
                    fit("'{name}' accumulates '{value}' with its autograd graph {where}" + _SOME_PATHS[some_paths],
                        keep=("where",), name=name, value=value_text,
                        where=where),
                    help=f"use {item_text(carrier)} for a number, or {detached} "
                    + ("to keep a tensor" if detached.endswith(".cpu()")
                       else "(and .cpu() for a long list) to keep a tensor")
                    + (_PRESUMED if presumed else ""),
                    fix=graph_accumulation_fix(node, values), function=function,
                    severity="warning" if some_paths or presumed else None,
                )

            info = function.class_info
            if loop is None and place.startswith("self.") and _made_fresh_before(function.node, node, place):
                return  # self.emb = torch.stack(parts) earlier in the same call: it holds this call's values only
            if loop is None and info is not None and name.startswith("self.") and function.name == "forward":
                def unless_emptied() -> None:
                    if name not in self._emptied.get(info.name, ()):
                        report()  # else: a cache some method empties (reset_cache()), bounded by it

                self.at_module_exit(unless_emptied)
                return
            if info is not None and place.startswith("self."):
                # a rollout kept on the object that another method of the class (perhaps defined
                # below) backpropagates whole and empties, an actor-critic's update: one update's
                # graphs, freed by it. Decided once every method has been walked.
                def unless_trained_on() -> None:
                    if not self._trained_on_and_emptied(info.name, place.split("[", 1)[0], function.name):
                        report()

                if facts.module_done:
                    unless_trained_on()
                else:
                    self.at_module_exit(unless_trained_on)
                return
            report()

        if (loop is None and not function.is_per_step_method) or rebinding:
            # whether the method runs per step, or what the loop that starts the holder afresh
            # calls (an update defined below), is known at the end
            self.at_module_exit(decide)
        else:
            self.at_function_exit(decide)

    def _gathers_one_step(self, loop, rebinding: list, function) -> bool:
        """Is ``loop`` the gathering of one step over the data (no backward pass or optimizer
        step of its own) inside a loop that starts the holder afresh and backpropagates, after it,
        a loss computed from what ``loop`` bound (full-batch training: ``for graph in loader:
        total += loss(graph)``, then ``total.backward()`` once per epoch)?"""
        if loop.has_backward or loop.has_optimizer_step:
            return False
        if not any(outer.has_backward_pass and outer.has_optimizer_step and _backward_after(outer.node, loop.node)
                   for outer in rebinding):
            return False  # (a backward before it is another loop's: ``for b in train: ...; for b in val: ...``)

        inside = {id(node) for node in descendants(loop.node) if isinstance(node, (cst.For, cst.While))}

        def bound_in_loop(name: str) -> bool:
            binding = function.bindings.get(name)
            return binding is not None and binding.loop is not None and id(binding.loop.node) in inside

        sources = set(function.backward_names)
        return any(bound_in_loop(name) for name in visit(sources, lambda name: function.derived_from.get(name, ())))

    def _read_by_the_update(self, name: str, place: str, function) -> bool:
        """Does the update read what ``name`` holds: this function backpropagates it (whole, or
        what was computed from it), or, for an attribute, another method of the class computes
        a value from it (``torch.cat(self.log_probs)`` in the loss of the update)?"""
        if function.backpropagates_whole(place) or function.is_backpropagated({name}):
            return True
        info = function.class_info
        if not name.startswith("self.") or info is None:
            return False
        return any(scope is not function and any(name in sources for sources in scope.derived_from.values())
                   for scope in info.methods.values())

    def _bound_now(self, values: list[cst.BaseExpression]) -> list[cst.BaseExpression]:
        """What the names in ``values`` are bound to at this point of the walk (the loop's
        ``loss = step(...)``, not a later ``loss = total / n``)."""
        facts = self.facts
        return [binding.node for binding in (facts.lookup(n) for n in set().union(*(names_in(v) for v in values)))
                if binding is not None and isinstance(binding.node, cst.BaseExpression)]

    def _graph_proven(self, values: list[cst.BaseExpression], bound: list[cst.BaseExpression], function) -> bool:
        """Is there evidence, beyond a presumption, that what is kept carries a graph? It (or what
        it was computed from) is backpropagated here, or shares an origin with what is; another
        method stores it after backpropagating it; it is computed from a module's forward called
        here, or from a call of a function that runs a module or a backward pass (a training step
        returning its loss); the function makes inputs require grad; it is a module's own
        forward. Not: a value that is only presumed to carry one (what a function passed in, or
        unknown, returns)."""
        names = set().union(*(names_in(v) for v in values))
        facts = self.facts
        if function.requires_grad_inputs or function.is_backpropagated(names) or facts.stored_backpropagated(
                names, function):
            return True
        info = function.class_info
        if info is not None and info.is_module and function.is_per_step_method:
            return True  # a module's own forward: computed from its parameters while it trains
        # computed from what a backward pass here went through (mf_loss beside the loss it is part of)
        modules = {name for name, binding in function.bindings.items() if binding.kind is Kind.MODULE}
        skip = function.inputs | modules | CONFIG_NAMES | {"self", "cls"}
        # (a loop target starts from what it iterates: ``for k, v in losses.items()``)
        starts = (names | set().union(*(names_in(b) for b in bound))) - skip
        ancestry = set(visit(starts, lambda name: (n for n in function.derived_from.get(name, ()) if n not in skip)))
        if ancestry & (function.backpropagated_from - skip):
            return True
        expressions = [*values, *bound]  # loss = self.training_step(batch); total += loss
        # ... or from a module's forward called here (with grad on where it runs), directly or
        # through the names it was computed from
        for name in ancestry:
            binding = function.bindings.get(name)
            if binding is not None and isinstance(binding.node, cst.BaseExpression):
                expressions.append(binding.node)
        callees: list[object] = []
        for expression in expressions:
            stack: list[cst.CSTNode] = [expression]
            while stack:
                current = stack.pop()
                if isinstance(current, cst.Call) and facts.is_module_expr(current.func) \
                        and not facts.is_module_constructor(current):
                    return True
                if isinstance(current, cst.Call):
                    found = facts.callees(current)
                    if found is not None:
                        callees.extend(id(definition) for definition in found[0])
                    else:
                        qualified = facts.qualified_name(current.func)
                        if qualified is not None and not qualified.startswith("torch."):
                            callees.append(qualified)
                stack.extend(current.children)
        # ... or from a call of a function that runs a module or a backward pass (pi.pi(x) returning
        # softmax(self.fc(x)); a training step returning its loss)
        return bool(callees) and facts.callees_work(callees) is True

    # ----- methods of this module that keep an argument: meter.update(loss) -------------------
    def _method_call(self, node: cst.Call, func: cst.Attribute) -> None:
        """``meter.update(loss)`` on an object of a class of this module whose method keeps what
        it is given (``self.sum += val * n``: see :meth:`Facts.stores_of`), also one pulled out
        of a container (``meters[k].update(v)``, ``bucket.setdefault(k, Meter()).update(v)``):
        in a loop that runs steps, or in a function that runs once per step (a helper the
        training loop calls) on an object that outlives the call. Decided at module exit, when
        every class has been read."""
        facts = self.facts
        if not node.args or any(arg.star for arg in node.args):
            return  # nothing given; f(*args): positions unknown
        receiver = func.value
        if type(receiver) is cst.Name and receiver.value in facts.imports.aliases:
            return  # torch.cat(...), F.relu(...): a function of a module, not a method of an object
        outlived = facts.outlived_loops(receiver) if facts.loop is not None else []
        function = facts.function
        held = facts.held_by_object(receiver)  # meter = self.meter; meter.update(...): self.meter
        per_call = not any(outer.runs_steps for outer in outlived) and facts.outlives_call(held)
        if not outlived and not per_call:
            return
        class_name = facts.instance_class_name(receiver)  # the class may be defined further down
        # self.meters[k].update(v): the class is read once every method has filled self.meters
        held_in_object = class_name is None and (storage_name(held) or "").startswith("self.")
        elsewhere = facts.project_instance_class(receiver) if class_name is None and not held_in_object else None
        # stats["loss"].update(v) with stats a parameter: what the calls in view pass (at the end)
        given = _given_parameter(receiver, function) if class_name is None and not held_in_object \
            and elsewhere is None else None
        if class_name is None and not held_in_object and elsewhere is None and given is None:
            return
        passed = []
        for index, arg in enumerate(node.args):
            graph = facts.graph_value(arg.value)
            if graph.state == 0:
                continue
            carried = facts.summary_form(graph, function) if per_call else graph
            passed.append((index if arg.keyword is None else arg.keyword.value, arg.value, graph, carried,
                           _carrier(arg.value, facts)))
        if not passed:
            return
        bound_now = self._bound_now([item[1] for item in passed])

        def decide() -> None:
            keys = [item[0] for item in passed]
            if given is not None:
                owner = facts.parameter_class(function, *given)
                stores = self._stores(owner, func.attr.value, keys) if owner is not None else {}
            elif elsewhere is not None:
                owner = elsewhere.rsplit(".", 1)[-1]
                stores = facts.project_stores(elsewhere, func.attr.value, keys)
            else:
                owner = class_name if class_name is not None else facts.held_class(held, function)
                stores = self._stores(owner, func.attr.value, keys) if owner is not None else {}
            if not stores:
                return
            if not any(outer.runs_steps for outer in outlived) and not (per_call and facts.runs_per_step(function)):
                return
            for where, value, graph, carried, carrier in passed:
                store = stores.get(where)
                if store is None:
                    continue
                if per_call:
                    if not facts.carries_at_calls(carried, function):
                        continue
                elif not facts.is_graph_carrying(graph, function) or not self._graph_proven(
                        [value], bound_now, function) or (graph.state == Graph.UNKNOWN
                                                          and function.reads_beside_backpropagated_slots([value])):
                    continue
                if dotted_name(receiver) == "self" and store.forwarded:
                    continue  # kept by a meter the helper updates: reported there, where it enters
                if elsewhere is None and self._trained_on_and_emptied(owner, store.attribute, func.attr.value):
                    continue  # REINFORCE's put_data: the episode's graphs, backpropagated and dropped
                value_text = source_of(carrier)
                ending = "detach" if store.appends else "item"
                fix_text = detached_text(carrier) if ending == "detach" else item_text(carrier)
                where_text = "every iteration" if not per_call else f"per {function.name}() call"
                some_paths = facts.store_on_some_paths(store) or _on_some_paths(facts, carried if per_call else graph)
                some_paths = some_paths or (not per_call and facts.graph_presumed(graph, function))
                self.report(
                    node,
                    fit("{method}() accumulates '{value}' with its graph into '{storage}' {where}" + _SOME_PATHS[some_paths],
                        keep=("method", "where"),
                        method=f"{owner}.{func.attr.value}", value=value_text, storage=store.attribute, where=where_text),
                    severity="warning" if some_paths else None,
                    help=f"pass {fix_text}"
                    + ("" if ending == "detach" else f" (or {detached_text(carrier)} to keep a tensor)"),
                    fix=(detach_fix(carrier) if ending == "detach" else call_method(carrier, "item"))
                    if carrier is value else None,
                    function=function,
                    # per call: the graph was seen at a call in a step (what its callers backpropagate),
                    # whatever grad mode the helper is called in (set_grad_enabled(training))
                    needs_grad=not per_call,
                )
                return

        self.at_module_exit(decide)

    def _stores(self, class_name: str, method: str, arguments: list) -> dict:
        """What ``method`` of ``class_name`` (or an override) keeps of the arguments of a call,
        by position or keyword -> :class:`~memlint.static.facts.Store`."""
        found: dict = {}
        for node in self.facts.methods_of(class_name, method):
            scope = self.facts.function_scopes.get(id(node))
            if scope is None:
                continue
            stores = self.facts.stores_of(scope)
            for where in arguments:
                parameter = parameter_for(scope, where)
                if parameter in stores:
                    found.setdefault(where, stores[parameter])
        return found

    def _trained_on_and_emptied(self, class_name: str, storage: str, storing_method: str) -> bool:
        """Does the class itself backpropagate what it stores in ``storage`` (read in a method
        that runs a backward pass, or in a method that one calls: ``self.make_batch()``) and
        empty it (``self.data = []``, ``self.data.clear()``) outside ``__init__``? Then the
        graphs it keeps are one rollout's or episode's, freed by its own update."""
        facts = self.facts
        methods = facts.class_methods.get(class_name, {})
        uses = {name: _attribute_uses(node) for name, node in methods.items()}
        readers = {name for name, (read, _) in uses.items() if name not in ("__init__", storing_method)
                   and storage in read}
        if not readers or not any(storage in emptied for name, (_, emptied) in uses.items() if name != "__init__"):
            return False
        for name, node in methods.items():
            scope = facts.function_scopes.get(id(node))
            if scope is None or not scope.has_backward:
                continue
            if name in readers or any(f"self.{reader}" in uses[name][0] for reader in readers):
                return True
        return False

    def _computed_from_accumulator(self, values: list[cst.BaseExpression], name: str) -> bool:
        """Is the value computed, in this iteration, from the accumulator itself?"""
        facts = self.facts
        loop = facts.loop
        derived = facts.function.derived_from

        def computed_from(current: str) -> set[str]:
            if loop is None or current not in loop.bound_this_iteration:
                return set()
            binding = facts.lookup(current)
            if binding is None or binding.graph.state == 0:  # an index or a count
                return set()
            return derived.get(current, set())

        return reaches(set().union(*(_value_names(v) for v in values)), computed_from, lambda current: current == name)

    def _growing_key(self, node: cst.Assign, target: cst.Subscript, value: cst.BaseExpression) -> None:
        """``d[step] = out`` with a key that changes every iteration or call."""
        facts = self.facts
        key_names = set()
        for element in target.slice:
            if isinstance(element.slice, cst.Index):
                key_names |= names_in(element.slice.value)
                if _mentions_len(element.slice.value):
                    key_names.add("len()")
        if not key_names:
            return  # a constant key: bounded overwrite
        graph = facts.graph_value(value)
        if graph.state == 0:
            return
        loop = facts.loop
        function = facts.function
        info = facts.class_info
        if loop is not None:
            if not facts.outlives_iteration(target.value):
                return
            counters = loop.incremented | {"len()"}
            if loop.iterates_data:
                counters |= loop.target_names
        elif function.is_per_step_method and facts.outlives_call(target.value):
            counters = {"len()"} | (info.incremented if info else set())
        else:
            return
        name = storage_name(target.value) or source_of(target.value)
        value_text = source_of(value)
        bound_now = self._bound_now([value])

        def decide() -> None:
            growing = key_names & (counters | (info.incremented if info else set()) | function.incremented)
            growing = {key for key in growing if not _wrapped_by_modulo(key, function.node)}
            if not growing or not facts.is_graph_carrying(graph) or not self._graph_proven([value], bound_now, function):
                return
            if loop is not None and not loop.runs_steps:
                return  # a loop over the positions of one sequence, layers, files: not steps
            if loop is not None and not loop.is_training_loop and function.is_per_step_method and (
                "." not in name and name in function.bindings
            ):
                return  # a local of forward()/training_step() (z[idx] = f(x[idx])): it dies with the call
            if facts.holds_a_tensor_made_here(target.value):
                return  # buf[idx] = x into a tensor this function allocated: slots overwritten, not new keys
            presumed = facts.graph_presumed(graph, function)
            self.report(
                node,
                fit("'{name}' stores '{value}' with its autograd graph under a new key ({keys}) every {when}",
                    keep=("when",), name=name, value=value_text, keys=", ".join(sorted(growing)),
                    when="iteration" if loop is not None else "call"),
                help=f"store {detached_text(value)} (or .item()), or overwrite a fixed key"
                     + (_PRESUMED if presumed else ""),
                fix=graph_accumulation_fix(node, value),
                severity="warning" if presumed else None,
            )

        self.at_function_exit(decide)

    VALID = [
        # a model's output dict read slot by slot: the loss is computed from out["y"] (through
        # either branch), so only that slot is shown to carry a graph; out["gate"], a statistic
        # the model may hand out detached, is not
        """
import torch


class Trainer:
    def __init__(self, model, criterion, optimizer, multi_head):
        self.model, self.criterion, self.optimizer = model, criterion, optimizer
        self.multi_head = multi_head
        self.usage = torch.zeros(64)

    def train_epoch(self, loader, task):
        self.model.train()
        for x, y in loader:
            out = self.model(x)
            gate = out["gate"]
            if self.multi_head:
                heads = out["y"]
                logits = heads[task]
            else:
                logits = out["y"]
            loss = self.criterion(logits, y)
            self.usage += gate.abs().sum(0)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
""",
        # A3C's rollout: a new record of empty lists at the start of every rollout (through a
        # helper), filled for a bounded number of steps, backpropagated by the update method
        """
from collections import namedtuple

import torch

Experience = namedtuple("Experience", ["actions", "policy", "values"])


class Agent:
    def __init__(self, model, optimizer, env, steps):
        self.model, self.optimizer, self.env, self.steps = model, optimizer, env, steps

    def _reset_rollout(self):
        self.rollout = Experience(actions=[], policy=[], values=[])

    def _rollout(self, state):
        self._reset_rollout()
        for _ in range(self.steps):
            policy, value = self.model(state)
            action = policy.multinomial(1).item()
            state = self.env.step(action)
            self.rollout.policy.append(policy)
            self.rollout.values.append(value)

    def _backward(self):
        loss = torch.stack(self.rollout.policy).sum() + torch.stack(self.rollout.values).sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def run(self, state, updates):
        for _ in range(updates):
            self._rollout(state)
            self._backward()
""",
        # a running average updated from itself on every forward() call: ML102's finding (the
        # update chains the graph), not an accumulation to report twice
        """
import torch
from torch import nn

class Mapping(nn.Module):
    def __init__(self):
        super().__init__()
        self.mapping = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
        self.gamma_avg = 0.99
        self.phi = 0.7
        self.register_buffer("mean_w", torch.zeros(1, 8))

    def forward(self, x):
        mapping = self.mapping(x)
        if self.training:
            self.mean_w = self.gamma_avg * self.mean_w + (1 - self.gamma_avg) * mapping.mean(dim=0, keepdim=True)
        if self.phi < 1:
            mapping = self.mean_w + self.phi * (mapping - self.mean_w)
        return mapping


def train(model, loader, optimizer):
    for x in loader:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # every slot of the dict turned into a number, in place, before the meter keeps it
        """
import torch
from collections import defaultdict

class TrainingMeter:
    def __init__(self):
        self.true_dict = defaultdict(float)

    def update(self, loss_dict):
        for key, item in loss_dict.items():
            self.true_dict[key] += item

def train(model, loader, optim):
    meter = TrainingMeter()
    for batch in loader:
        loss = model(batch).mean()
        losses_dict = {"lm": loss, "double": loss * 2}
        optim.zero_grad()
        loss.backward()
        optim.step()
        for key, value in losses_dict.items():
            losses_dict[key] = value.mean().item()
        meter.update(losses_dict)
""",
        # a step that backpropagates one slot of what a model it cannot read returns, and keeps
        # other slots (boxes, numbers to monitor): what those hold is not known
        """
import torch

def train_epoch(net, optimizer, batches, num_batches):
    results, monitor = [], []
    for _ in range(num_batches):
        batch = next(batches)
        results_dict = net.train_forward(batch)
        optimizer.zero_grad()
        results_dict["torch_loss"].backward()
        optimizer.step()
        results.append([results_dict["boxes"], batch["pid"]])
        monitor.append(results_dict["monitor_values"])
    return results, monitor
""",
        # the batch size a helper (defined below) returns beside the loss, through another
        # helper it hands the call to: a number, whatever the loss carries
        """
import torch

class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

def train_epoch(loader, model, criterion, optimizer, scaler=None):
    losses = AverageMeter()
    use_amp = scaler is not None
    for images, target in loader:
        loss, batch_size = batch_loss(model, images, target, criterion, use_amp=use_amp)
        losses.update(loss.item(), batch_size)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def batch_loss(model, images, target, criterion, use_amp=False):
    if use_amp:
        with torch.autocast("cuda"):
            return _batch_loss(model, images, target, criterion)
    return _batch_loss(model, images, target, criterion)

def _batch_loss(model, images, target, criterion):
    output = model(images)
    batch_size = images.size(0)
    loss = criterion(output, target)
    return loss, batch_size
""",
        # the same bank, given detached copies, or filled only under no_grad, or fed by another
        # object's code (reported at that call, where the graph enters)
        """
import torch
from torch import nn
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(16, 4)
        self.bank = []
        self.quiet_bank = []

    def forward(self, x):
        out = self.head(x)
        self.remember(out)
        with torch.no_grad():
            self.remember_quietly(out)
        return out

    def remember(self, out):
        scores = out.detach().clone()
        self.bank.append(scores[scores > 0.9])

    def remember_quietly(self, out):
        self.quiet_bank.append(out.clone())

class Bank:
    def __init__(self):
        self.items = []

    def add(self, x):
        self.items.append(x)
""",
        # an actor-critic keeping its rollout on the object: another method, defined below,
        # backpropagates the whole rollout and empties it (one update's graphs at a time)
        """
import torch

class Tuner:
    def __init__(self, actor_critic: torch.nn.Module, optimizer, n_steps=8):
        self.actor_critic, self.optimizer, self.n_steps = actor_critic, optimizer, n_steps
        self.log_probs, self.values, self.rewards, self.collect = [], [], [], []

    def generate(self, config, n):
        self.collect = []
        while len(self.collect) < n:
            for i in range(self.n_steps):
                value, dist = self.actor_critic(config.to_torch())
                self.collect.append(config.step(i))
                self.log_probs.append(torch.log(dist.squeeze(0)[i]))
                self.values.append(value)

    def receive(self, rewards):
        self.rewards.extend(rewards)
        self.optimizer.zero_grad()
        loss = 0
        for i in range(len(self.values)):
            advantage = self.rewards[i] - self.values[i]
            loss += -self.log_probs[i] * advantage + torch.pow(advantage, 2)
        loss.backward()
        self.optimizer.step()
        self.log_probs = []
        self.values = []
""",
        # a deque with maxlen keeps the last few: the oldest entries (and their graphs) drop out
        """
import collections
import torch

def train(model, loader, optimizer):
    recent = collections.deque(maxlen=8)
    for x, y in loader:
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        recent.append({"out": out, "loss": loss})
    return recent
""",
        # refinement iterations of one batch, each backpropagated; the caller steps the optimizer
        # after each call: the outputs kept are one step's
        """
import torch

class Coach:
    def iterate_on_batch(self, x):
        y_hats = []
        y_hat = x
        for _ in range(self.n_iters_per_batch):
            y_hat = self.net(torch.cat([x, y_hat.detach()], dim=1))
            loss = (y_hat - x).abs().mean()
            loss.backward()
            y_hats.append(y_hat)
        return y_hats

    def train(self, loader):
        for x in loader:
            self.optimizer.zero_grad()
            y_hats = self.iterate_on_batch(x)
            self.optimizer.step()
            self.log_images(y_hats)
""",
        # the micro-batch loop of one step: backward per part, one optimizer step after it; what
        # it collects lives until the step ends
        """
import torch

class Trainer:
    def train_step(self, micro_batches):
        self.optimizer.zero_grad()
        outputs = []
        for sub in micro_batches:
            loss = self.model(sub).mean() / len(micro_batches)
            loss.backward()
            outputs.append(loss)
        self.optimizer.step()
        return len(outputs)
""",
        # a context manager class whose __enter__ may enter no_grad (a flag): grad mode unknown
        """
import torch
import torch.nn.functional as F


class eval_mode:
    def __init__(self, *models, no_grad=False):
        self.models = models
        self.no_grad = no_grad
        self.no_grad_context = torch.no_grad()

    def __enter__(self):
        for model in self.models:
            model.train(False)
        if self.no_grad:
            self.no_grad_context.__enter__()

    def __exit__(self, *args):
        if self.no_grad:
            self.no_grad_context.__exit__(*args)
        return False


def reconstruction_error(encoder, decoder, loader):
    total = 0
    with eval_mode(encoder, decoder, no_grad=True):
        for x in loader:
            total += F.mse_loss(decoder(encoder(x)), x)
    return total
""",
        # ... but the callers pass objects of two classes: which predict runs is not known
        """
import torch
from torch import nn

class Predictor:
    def __init__(self):
        self.network = nn.Linear(4, 3)

    def predict(self, x):
        return torch.softmax(self.network(x), dim=1)

class Labeller:
    def predict(self, x):
        return x.argmax(1).tolist()

def eval_model(model, data):
    scores = []
    for x in data:
        scores.append(model.predict(x))
    return scores

def main(batches):
    return eval_model(Predictor(), batches), eval_model(Labeller(), batches)
""",
        # ... and the one class's predict hands back numbers
        """
import torch
from torch import nn

class Predictor:
    def __init__(self):
        self.network = nn.Linear(4, 3)

    def predict(self, x):
        return torch.softmax(self.network(x), dim=1).argmax(1).tolist()

def eval_model(model, data):
    scores = []
    for x in data:
        scores.append(model.predict(x))
    return scores

def main(batches):
    return eval_model(Predictor(), batches)
""",
        # the same epoch function, called with meters that keep numbers (.item()) by one caller
        # and with another class by another: what stats holds is not one class of the file
        """
import torch

class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

class NumberMeter:
    def __init__(self):
        self.sum = 0.0

    def update(self, val, n=1):
        self.sum += float(val) * n

def train_epoch(model, loader, optimizer, stats):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        stats["loss"].update(loss)

def main(model, loader, optimizer):
    train_epoch(model, loader, optimizer, {"loss": NumberMeter()})
    train_epoch(model, loader, optimizer, {"loss": AverageMeter()})
""",
        # emptied inside the step loop every N steps: it holds at most N steps
        """
import torch
def train(model, loader, optimizer, criterion, log_every=100):
    running = 0
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss
        if step % log_every == 0:
            print(running.item() / log_every)
            running = 0
""",
        """
import torch
def train(model, loader, optimizer, criterion):
    window = []
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        window.append(out)
        if len(window) == 50:
            report(window)
            window.clear()
""",
        # a sliding window the loop trims itself: bounded by its own code
        """
import torch
def evaluate(model, loader, history=16):
    outs = torch.zeros(0)
    for x, y in loader:
        outs = torch.cat([outs, model(x)])
        if len(outs) > history:
            outs = outs[-history:]
    return outs.mean()
""",
        """
import torch
def train(model, loader, optimizer, criterion):
    recent = []
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        recent.append(out)
        if len(recent) > 10:
            recent.pop(0)
""",
        # ... or trimmed with del
        """
import torch
def train(model, loader, optimizer, criterion):
    recent = []
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        recent.append(out)
        if len(recent) > 10:
            del recent[0]
""",
        # an episode's log-probabilities on a global policy, backpropagated and emptied by the
        # update function the episode loop calls
        """
import torch
from torch import nn

policy = nn.Linear(4, 2)
policy.saved_logprobs = []
optimizer = torch.optim.Adam(policy.parameters())

def update(rewards):
    loss = -(torch.stack(policy.saved_logprobs) * torch.tensor(rewards)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    del policy.saved_logprobs[:]

def main(env, episodes):
    for episode in range(episodes):
        state, rewards = env.reset(), []
        for t in range(1000):
            probs = torch.softmax(policy(torch.as_tensor(state)), -1)
            action = torch.distributions.Categorical(probs).sample()
            policy.saved_logprobs.append(torch.log(probs[action]))
            state, reward, done, _ = env.step(action.item())
            rewards.append(reward)
            if done:
                break
        update(rewards)
""",
        # a window a module keeps across forward() calls, trimmed by the same call before it grows
        """
import torch
from torch import nn
class HistoryRNN(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.cell = nn.GRUCell(size, size)
        self.hidden_all = []
    def forward(self, x):
        hidden_new = self.cell(x, torch.stack(self.hidden_all).mean(0))
        self.hidden_all = self.hidden_all[1:]
        self.hidden_all.append(hidden_new)
        return hidden_new
""",
        # the loss a method returns is backpropagated; the outputs it returns beside it are its
        # own values (detached here), not evidence of a graph because they come from one call
        """
import torch
class Engine:
    def __init__(self, module, logprobs_from_logits):
        self.module = module
        self.logprobs_from_logits = logprobs_from_logits

    def forward_step(self, micro_batch, loss_function, forward_only):
        logits = self.module(input_ids=micro_batch["input_ids"]).logits
        log_probs = self.logprobs_from_logits(logits, micro_batch["responses"])
        entropy = -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1)
        model_output = {"log_probs": log_probs, "entropy": entropy}
        if forward_only:
            return None, {"model_output": model_output}
        loss, metrics = loss_function(model_output=model_output, data=micro_batch)
        return loss, {"model_output": {k: v.detach() for k, v in model_output.items()},
                      "loss": loss.detach().item(), "metrics": metrics}

    def forward_backward(self, micro_batches, loss_function, forward_only=False):
        outputs = []
        for micro_batch in micro_batches:
            with torch.set_grad_enabled(not forward_only):
                loss, output = self.forward_step(micro_batch, loss_function, forward_only)
            if not forward_only:
                (loss / len(micro_batches)).backward()
            outputs.append(output)
        return outputs
""",
        # a module's method filling a dict per proposal stage: range() counts within one forward
        """
import torch
from torch import nn
class Nerf(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.renderer_depth = nn.Linear(4, 1)

    def get_outputs(self, weights_list):
        outputs = {"rgb": weights_list[-1]}
        for i in range(self.config.num_proposal_iterations):
            outputs[f"prop_depth_{i}"] = self.renderer_depth(weights_list[i])
        return outputs
""",
        # the backpropagated entry is replaced by its detached value before the dict is kept;
        # what the other entries hold is unknown, so there is no evidence of a graph
        """
import torch
def train(module, loader, optimizer):
    outputs = []
    for i, batch in enumerate(loader):
        optimizer.zero_grad()
        output = module.training_step(batch, i)
        output["loss"].backward()
        optimizer.step()
        output["loss"] = output["loss"].detach()
        outputs.append(output)
    return outputs
""",
        # a write operator filling a tensor it allocated, position by position, within one forward
        """
import torch
from torch import nn
class Memory(nn.Module):
    def memory_update(self, item_seq, item_seq_len):
        last = item_seq_len - 1
        memory = torch.zeros(item_seq.size(0), 8).to(item_seq.device)
        last_memory = torch.zeros_like(memory)
        for i in range(item_seq.size(1)):
            memory = self.cell(memory, self.embed(item_seq[:, i]))
            last_memory[last == i] = memory[last == i]
        return last_memory

    def forward(self, item_seq, item_seq_len):
        return self.read(self.memory_update(item_seq, item_seq_len))
""",
        # a loop over checkpoint shards (even in tqdm): files, not steps
        """
import torch
from tqdm import tqdm
def load_shards(model, shard_files):
    sizes = {}
    for shard in tqdm(shard_files):
        state = torch.load(shard, map_location="cpu")
        model.load_state_dict(state, strict=False)
        sizes[shard] = sum(v.numel() for v in state.values())
    return sizes
""",
        # a forward helper pairing the residuals it computed with those passed in (a UNet's
        # ControlNet residuals): "samples" in a name does not make a loop over data
        """
import torch
from torch import nn
class UNet(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.down_blocks = nn.ModuleList(blocks)

    def _apply_down_blocks(self, h, emb, additional_residuals):
        res_samples = [h]
        for block in self.down_blocks:
            h, block_samples = block(h, emb)
            res_samples.extend(block_samples)
        new_res_samples = []
        for res_sample, residual in zip(res_samples, additional_residuals):
            res_sample += residual
            new_res_samples.append(res_sample)
        return h, new_res_samples
""",
        # .item() and .detach() end the graph
        """
import torch
def train(model, loader, opt, crit):
    total = 0.0
    losses = []
    for x, y in loader:
        loss = crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
        losses.append(loss.detach())
    return total
""",
        # float() and detach().cpu()
        """
import torch
def train(model, loader, optimizer, criterion):
    history = []
    running = 0.0
    for batch in loader:
        out = model(batch["x"])
        loss = criterion(out, batch["y"])
        loss.backward()
        optimizer.step()
        running += float(loss)
        history.append(out.detach().cpu())
""",
        # summing sub-losses on purpose, then backpropagating the sum
        """
import torch
def step(model, parts, opt, crit):
    total = 0
    for x, y in parts:
        total += crit(model(x), y)
    total.backward()
    opt.step()
""",
        """
import torch
def step(model, chunks, opt, crit):
    losses = []
    for x, y in chunks:
        losses.append(crit(model(x), y))
    loss = sum(losses) / len(losses)
    loss.backward()
""",
        # an inference loop that needs autograd (forces), keeping detached copies on the CPU
        """
import torch
def split_graphs(batch_output):
    return batch_output.to_data_list()

def inference(model, loader, device):
    model.eval()
    results = []
    for batch in loader:
        batch = batch.to(device)
        batch["pos"].requires_grad_(True)
        output = model(batch).detach().cpu()
        results.extend(split_graphs(output))
    return results
""",
        # a helper summing the parts of a loss and returning it
        """
import torch
import torch.nn.functional as F
def compute_loss(outputs, targets):
    loss = 0
    for out, tgt in zip(outputs, targets):
        loss = loss + F.cross_entropy(out, tgt)
    return loss
""",
        # values built under no-grad
        """
import torch
def evaluate(model, loader, crit):
    total = 0
    outs = []
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
            total += crit(out, y)
            outs.append(out)
    return total, outs
""",
        # no_grad as a decorator, with and without parentheses
        """
import torch
@torch.no_grad()
def evaluate(model, loader):
    preds = []
    for x in loader:
        preds.append(model(x))
    return preds

@torch.inference_mode
def predict(model, loader):
    preds = []
    for x in loader:
        preds.append(model(x))
    return preds
""",
        # no_grad via the caller
        """
import torch
def collect(model, loader):
    preds = []
    for x in loader:
        preds.append(model(x))
    return preds

def main(model, loader):
    with torch.no_grad():
        preds = collect(model, loader)
""",
        # bounded overwrite: fixed key, or a key from a bounded loop
        """
import torch
def train(model, loader, opt, crit):
    last = {}
    for x, y in loader:
        out = model(x)
        loss = crit(out, y)
        loss.backward()
        opt.step()
        last["out"] = out
""",
        # accumulation outside any loop or per-step method
        """
import torch
def run(model, x, y, crit):
    total = 0
    total += crit(model(x), y)
    return total
""",
        # a container created in this iteration
        """
import torch
def train(model, loader, opt, crit):
    for x, y in loader:
        step_losses = []
        for head in model.heads:
            step_losses.append(crit(head(x), y))
        loss = torch.stack(step_losses).sum()
        loss.backward()
        opt.step()
""",
        # a loop over layers inside one forward pass is bounded, not a leak
        """
import torch
from torch import nn
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnns = nn.ModuleList([nn.GRU(8, 8) for _ in range(3)])
    def forward(self, h):
        features = []
        for rnn in self.rnns:
            out, _ = rnn(h)
            h = h + out
            features.append(h)
        return torch.cat(features, -1)
""",
        # a decoder's time steps inside forward(): a local list that dies with the call
        # (speechbrain Tacotron2 Decoder.forward; "while" loops count as step loops otherwise)
        """
import torch
from torch import nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(8, 8)
        self.proj = nn.Linear(8, 4)
    def forward(self, inputs):
        h = c = torch.zeros(inputs.size(1), 8)
        outputs = []
        while len(outputs) < inputs.size(0):
            h, c = self.cell(inputs[len(outputs)], (h, c))
            outputs += [self.proj(h)]
        return torch.stack(outputs)
""",
        # summing tensor-parallel slices inside forward() (transformers Bloom: "pretraining_tp"
        # contains "train", which made the loop look like a data loop)
        """
import torch
import torch.nn.functional as F
from torch import nn
class MLP(nn.Module):
    def __init__(self, hidden, tp):
        super().__init__()
        self.up = nn.Linear(hidden, 4 * hidden)
        self.dense = nn.Linear(4 * hidden, hidden)
        self.pretraining_tp = tp
    def forward(self, x):
        h = torch.relu(self.up(x))
        out = torch.zeros_like(x)
        size = h.shape[-1] // self.pretraining_tp
        for i in range(self.pretraining_tp):
            out = out + F.linear(h[:, :, i * size:(i + 1) * size], self.dense.weight[:, i * size:(i + 1) * size])
        return out
""",
        # a recurrence, not an accumulation: the added value is computed from the accumulator
        # (Euler steps of a flow sampler, transformers pocket_tts; Sinkhorn normalisation)
        """
import torch
from torch import nn
class FlowSampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.flow_head = nn.Linear(9, 8)
    def sample_latent(self, noise, num_flow_steps):
        latents = noise
        for step in range(num_flow_steps):
            velocity = self.flow_head(torch.cat([latents, torch.full_like(latents[:, :1], step)], -1))
            latents = latents + velocity / num_flow_steps
        return latents
    def sinkhorn(self, logits, sinkhorn_iters):
        comb = self.flow_head(logits).softmax(-1)
        for _ in range(sinkhorn_iters):
            comb = comb / comb.sum(dim=-1, keepdim=True)
        return comb
""",
        # a REINFORCE rollout: a while loop over one episode returns its log-probs to the caller,
        # which backpropagates them
        """
import torch
from torch.distributions import Categorical
def run_episode(policy, env):
    log_probs, rewards = [], []
    state, done = env.reset(), False
    while not done:
        dist = Categorical(logits=policy(torch.as_tensor(state)))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        state, reward, done, _ = env.step(action.item())
        rewards.append(reward)
    return log_probs, rewards
""",
        # unrolling a recurrent cell for a number of steps in a helper method (world-model imagination)
        """
import torch
from torch import nn
class World(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
    def imagine(self, x, h, num_steps):
        states = []
        for t in range(num_steps):
            h = self.cell(x, h)
            states.append(h)
        return torch.stack(states, 1)
""",
        # numpy code is not torch code
        """
import numpy as np
def fit(model, data):
    total = 0
    for x, y in data:
        loss = model(x) - y
        total += loss
    return total
""",
        # comparisons and argmax end the graph
        """
import torch
def train(model, loader, opt, crit):
    correct = 0
    preds = []
    for x, y in loader:
        out = model(x)
        loss = crit(out, y)
        loss.backward()
        opt.step()
        correct += (out.argmax(1) == y).sum()
        preds.append(out.argmax(dim=1))
""",
        # Lightning: validation_step runs under no_grad
        """
import torch
import lightning as L
class Model(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        out = self(batch[0])
        self.val_outputs.append(out)
""",
        # the meter gets a number, keeps a number, only keeps the last value, or is imported
        """
import torch
from utils import RunningMean

class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.last = 0.0, 0, None
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
    def add(self, val):
        self.sum += val.item()
    def set_last(self, val):
        self.last = val

def train(loader, model, criterion, optimizer):
    losses, totals, last, running = AverageMeter(), AverageMeter(), AverageMeter(), RunningMean()
    for images, target in loader:
        loss = criterion(model(images), target)
        losses.update(loss.item(), images.size(0))
        totals.add(loss)
        last.set_last(loss)
        running.update(loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

@torch.no_grad()
def validate(loader, model, criterion):
    losses = AverageMeter()
    for images, target in loader:
        losses.update(criterion(model(images), target), images.size(0))
    return losses.sum / losses.count
""",
        # a statistic handed out from the object's state gets the detached loss; a getter that
        # hands out a copy keeps nothing
        """
import torch
class DeviceStats:
    def __init__(self):
        self.stats = {"loss": torch.zeros(1), "seen": torch.zeros(1)}
    def stat(self, name):
        return self.stats[name]
    def snapshot(self, name):
        return self.stats[name].clone()
def train(model, criterion, optimizer, loader):
    stats = DeviceStats()
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        stats.stat("loss").add_(loss.detach())
        stats.snapshot("seen").add_(loss)
        optimizer.step()
""",
        # torchvision's MetricLogger: a tensor is turned into a number before the meter keeps it;
        # a meter that converts only what is a tensor (the other branch is a number)
        """
import torch
import torch.nn.functional as F
from collections import defaultdict
class SmoothedValue:
    def __init__(self):
        self.total, self.count = 0.0, 0
    def update(self, value, n=1):
        self.total += value * n
        self.count += n
class MetricLogger:
    def __init__(self):
        self.meters = defaultdict(SmoothedValue)
    def update(self, **kwargs):
        for name, value in kwargs.items():
            if isinstance(value, torch.Tensor):
                value = value.item()
            self.meters[name].update(value)
    def add(self, name, value, n=1):
        self.meters[name].update(value.item() if torch.is_tensor(value) else value, n)
def train(model, loader, optimizer):
    logger = MetricLogger()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.update(loss=loss, lr=optimizer.param_groups[0]["lr"])
        logger.add("loss", loss, x.size(0))
""",
        # a distributed meter reducing a detached copy: what else the call reads (its name, from
        # the object) is unknown, but nothing of the value's graph reaches the sum
        """
import torch
import horovod.torch as hvd

class Metric:
    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.)
    def update(self, val):
        self.sum += hvd.allreduce(val.detach().cpu(), name=self.name)

def train(model, loader, optimizer, criterion):
    train_loss = Metric("train_loss")
    for x, y in loader:
        loss = criterion(model(x), y)
        train_loss.update(loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # the ImageNet example: accuracy() computes under no_grad, and is defined below train()
        """
import torch

def train(loader, model, criterion, optimizer):
    top1 = AverageMeter()
    total_acc = 0.0
    for images, target in loader:
        output = model(images)
        loss = criterion(output, target)
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        top1.update(acc1[0], images.size(0))
        total_acc += acc1[0]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        _, pred = output.topk(maxk, 1, True, True)
        correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
        res = []
        for k in topk:
            res.append(correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)))
        return res
""",
    ]

    VALID += [
        # gradients without create_graph carry no graph (integrated gradients)
        """
import torch
def integrated_gradients(model, x, baseline, steps=50):
    model.eval()
    grads = []
    for alpha in torch.linspace(0, 1, steps):
        xi = (baseline + alpha * (x - baseline)).requires_grad_(True)
        g, = torch.autograd.grad(model(xi).sum(), xi)
        grads.append(g)
    return torch.stack(grads).mean(0) * (x - baseline)
""",
        # torch.Generator is not a GAN generator (timm)
        """
import torch
class Sampler:
    def pick(self, generator):
        return 3
    def build(self, epoch):
        generator = torch.Generator().manual_seed(epoch)
        schedule = []
        for _ in range(self.num_batches):
            schedule.append(self.pick(generator))
        return schedule
""",
        # a loop over tensor-parallel slices is not a data loop ("pretraining_tp")
        """
import torch
import torch.nn.functional as F
def slice_norms(h, weight, pretraining_tp):
    norms = []
    size = h.shape[-1] // pretraining_tp
    for i in range(pretraining_tp):
        norms.append(F.linear(h[..., i * size:(i + 1) * size], weight[:, i * size:(i + 1) * size]))
    print(torch.stack(norms).norm())
""",
        # concatenation of detached outputs, under no_grad, or across the layers of one forward
        """
import torch
def train(model, loader, opt, crit):
    all_logits = torch.empty(0)
    for x, y in loader:
        logits = model(x)
        loss = crit(logits, y)
        loss.backward()
        opt.step()
        all_logits = torch.cat([all_logits, logits.detach().cpu()])

def evaluate(model, loader):
    outs = None
    with torch.no_grad():
        for x, _ in loader:
            out = model(x)
            outs = out if outs is None else torch.cat((outs, out), dim=0)
    return outs
""",
        """
import torch
from torch import nn
class DenseBlock(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)
    def forward(self, features):
        for layer in self.layers:
            new = layer(features)
            features = torch.cat([features, new], dim=1)
        return features
""",
        # a dict slot summed with numbers, or with sub-losses that are backpropagated
        """
import torch
def train(model, loader, opt, crit):
    totals = {}
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        totals["loss"] = totals.get("loss", 0.0) + loss.item()
        totals["n"] = totals["n"] + 1
""",
        """
import torch
def step(model, batch, opt, losses_fns):
    parts = {"total": 0}
    for name, fn in losses_fns.items():
        parts["total"] = parts["total"] + fn(model(batch), batch)
    parts["total"].backward()
    opt.step()
""",
        # a tensor local to forward() filled slot by slot (lightly's W-MSE loss)
        """
import torch
from torch import nn
class WMSELoss(nn.Module):
    def __init__(self, whitening, num_samples):
        super().__init__()
        self.whitening = whitening
        self.num_samples = num_samples
    def forward(self, input):
        bs = input.shape[0] // self.num_samples
        z = torch.empty_like(input)
        for idx in torch.randperm(bs).view(-1, 4):
            for i in range(self.num_samples):
                z[idx + i * bs] = self.whitening(input[idx + i * bs])
        return z.pow(2).mean()
""",
    ]

    VALID += [
        # chunks of one forward (a NeRF render), joined into the result the caller backpropagates
        """
import torch
def render(model, points, chunksize):
    predictions = []
    for batch in torch.split(points, chunksize):
        predictions.append(model(batch))
    return torch.cat(predictions, dim=0)

def main(model, optimizer, poses, targets, iters):
    for i in range(iters):
        rgb = render(model, poses[i % len(poses)], 4096)
        loss = torch.nn.functional.mse_loss(rgb, targets[i % len(targets)])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        """
import torch
def render(model, points, get_minibatches):
    predictions = []
    for batch in get_minibatches(points):
        predictions.append(model(batch))
    return torch.cat(predictions, dim=0)

def main(model, optimizer, poses, targets, iters, get_minibatches):
    for i in range(iters):
        rgb = render(model, poses[i], get_minibatches)
        loss = torch.nn.functional.mse_loss(rgb, targets[i])
        loss.backward()
        optimizer.step()
""",
    ]

    VALID += [
        # the same trainer keeping the detached loss: the attribute holds no graph
        """
import torch
class Trainer:
    def __init__(self, model, loss_fn):
        self.model, self.loss_fn, self.stats = model, loss_fn, {"loss": []}
        self.optim = torch.optim.Adam(model.parameters())
    def batch_step(self, data):
        loss = self.loss_fn(self.model(data), data)
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        self.batch_loss = loss.detach()
        self.log_batch()
    def log_batch(self):
        stat = self.stats
        stat["loss"] += [self.batch_loss]
    def epoch(self, loader):
        for data in loader:
            self.batch_step(data)
""",
    ]

    INVALID = [
        # ... but accumulating the slot the loss is computed from keeps every step's graph
        Invalid("""
import torch


class Trainer:
    def __init__(self, model, criterion, optimizer, multi_head):
        self.model, self.criterion, self.optimizer = model, criterion, optimizer
        self.multi_head = multi_head
        self.usage = torch.zeros(64)

    def train_epoch(self, loader, task):
        self.model.train()
        for x, y in loader:
            out = self.model(x)
            gate = out["gate"]
            if self.multi_head:
                heads = out["y"]
                logits = heads[task]
            else:
                logits = out["y"]
            loss = self.criterion(logits, y)
            self.usage += logits.abs().sum(0)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
""", line=22),
        # ... but keeping the very slot it backpropagates keeps every step's graph
        Invalid("""
import torch

def train_epoch(net, optimizer, batches, num_batches):
    losses = []
    for _ in range(num_batches):
        batch = next(batches)
        results_dict = net.train_forward(batch)
        optimizer.zero_grad()
        results_dict["torch_loss"].backward()
        optimizer.step()
        losses.append(results_dict["torch_loss"])
    print(len(losses))
""", line=12),
        # a module's forward hands its outputs to a method of its own that banks a copy: the
        # copy (clone keeps the graph) is kept with every step's graph
        Invalid("""
import torch
from torch import nn
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(16, 4)
        self.bank = []

    def forward(self, x):
        out = self.head(x)
        self.remember(out)
        return out

    def remember(self, out):
        scores = out.clone()
        self.bank.append(scores[scores > 0.9])
""", line=17),
        # a loop that backpropagates and updates by hand (no optimizer): every batch is a step
        Invalid("""
import torch

def train(model, loader, lr):
    losses = []
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        losses.append(loss)
    return losses
""", line=12),
        # ... but kept on the trainer, it grows with every step
        Invalid("""
import torch

class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer, self.history = model, optimizer, []

    def train_step(self, micro_batches):
        self.optimizer.zero_grad()
        for sub in micro_batches:
            loss = self.model(sub).mean() / len(micro_batches)
            loss.backward()
            self.history.append(loss)
        self.optimizer.step()
""", line=13),
        # a context manager class whose __enter__ only sets eval mode: grad stays on
        Invalid("""
import torch
import torch.nn.functional as F


class eval_mode:
    def __init__(self, *models, no_grad=False):
        self.models = models
        self.no_grad = no_grad
        self.no_grad_context = torch.no_grad()

    def __enter__(self):
        for model in self.models:
            model.train(False)

    def __exit__(self, *args):
        if self.no_grad:
            self.no_grad_context.__exit__(*args)
        return False


def reconstruction_error(encoder, decoder, loader):
    total = 0
    with eval_mode(encoder, decoder, no_grad=True):
        for x in loader:
            total += F.mse_loss(decoder(encoder(x)), x)
    return total
""", line=26),
        # a method called on a parameter: every caller passes a Predictor, whose predict runs its network
        Invalid("""
import torch
from torch import nn

class Predictor:
    def __init__(self):
        self.network = nn.Linear(4, 3)

    def predict(self, x):
        return torch.softmax(self.network(x), dim=1)

def eval_model(model, data):
    scores = []
    for x in data:
        score = model.predict(x)
        scores.append(score)
    return scores

def main(batches):
    return eval_model(Predictor(), batches)
""", line=16),
        # meters handed to the epoch function in a dict: the calls in view say what they are
        Invalid("""
import torch

class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

def train_epoch(model, loader, optimizer, stats):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        stats["loss"].update(loss)

def main(model, loader, optimizer):
    meters = {"loss": AverageMeter()}
    for epoch in range(10):
        train_epoch(model, loader, optimizer, meters)
""", line=18),
        # emptied every 1000 steps of an evaluation loop: each kept output holds its activations
        Invalid("""
import torch
def evaluate(model, loader, log):
    outs = []
    for step, (x, y) in enumerate(loader):
        outs.append(model(x))
        if step % 1000 == 999:
            log(torch.cat(outs).mean().item())
            outs = []
""", line=6, fixed="outs.append(model(x).detach())"),
        # a method keeps the backpropagated loss on the object; another method, run once per
        # batch, collects it into the epoch's statistics
        Invalid("""
import torch
class Trainer:
    def __init__(self, model, loss_fn):
        self.model, self.loss_fn, self.stats = model, loss_fn, {"loss": []}
        self.optim = torch.optim.Adam(model.parameters())
    def batch_step(self, data):
        loss = self.loss_fn(self.model(data), data)
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        self.batch_loss = loss
        self.log_batch()
    def log_batch(self):
        stat = self.stats
        stat["loss"] += [self.batch_loss]
    def epoch(self, loader):
        for data in loader:
            self.batch_step(data)
""", line=16),
        # the dict whose "loss" was backpropagated is kept whole, graph and all
        Invalid("""
import torch
def train(module, loader, optimizer):
    outputs = []
    for i, batch in enumerate(loader):
        optimizer.zero_grad()
        output = module.training_step(batch, i)
        output["loss"].backward()
        optimizer.step()
        outputs.append(output)
    return outputs
""", line=10),
        Invalid("""
import torch
def train(model, loader, opt, crit):
    total = 0
    for x, y in loader:
        loss = crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss
    return total
""", line=10),
        Invalid("""
import torch as t
def train(net, loader, optimizer, loss_fn):
    running = 0.0
    for step, (x, y) in enumerate(loader):
        loss = loss_fn(net(x), y)
        loss.backward()
        optimizer.step()
        running = running + loss
""", line=9),
        Invalid("""
import torch
from collections import defaultdict
def train(model, loader, opt, criterion):
    history = defaultdict(list)
    losses = []
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss)
        history["loss"].append(loss)
""", line=11),
        Invalid("""
import torch
from collections import defaultdict
def train(model, loader, opt, criterion):
    logs = defaultdict(list)
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        for k in ("loss",):
            pass
        logs["train"].append(loss)
""", line=12),
        # model outputs kept with their graphs (no no_grad)
        Invalid("""
import torch
def predict(model, loader):
    outputs = []
    for x in loader:
        out = model(x)
        outputs.append(out)
    return torch.cat(outputs)
""", line=7),
        # graph via F loss, extend and insert
        Invalid("""
import torch
import torch.nn.functional as F
def train(model, loader, opt):
    kept = []
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        kept.insert(0, loss)
""", line=10),
        # self.step_losses in a Lightning training_step (outlives the call)
        Invalid("""
import torch
import lightning.pytorch as pl
class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.step_losses.append(loss)
        return loss
""", line=8),
        # a module memoizing outputs by call count
        Invalid("""
import torch
from torch import nn
class Memo(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.cache = {}
        self.calls = 0
    def forward(self, x):
        y = self.lin(x)
        self.cache[self.calls] = y
        self.calls += 1
        return y
""", line=12),
        # d[step] = out with a growing key
        Invalid("""
import torch
def train(model, loader, opt, crit):
    outs = {}
    step = 0
    for x, y in loader:
        out = model(x)
        loss = crit(out, y)
        loss.backward()
        opt.step()
        outs[step] = out
        step += 1
""", line=11),
        # graph known only because it is backpropagated
        Invalid("""
import torch
def train(trainer, loader, optimizer):
    total_loss = 0
    for batch in loader:
        loss = trainer.compute_loss(batch)
        loss.backward()
        optimizer.step()
        total_loss += loss
""", line=9),
        # an index loop over a dataset is a pass over data, not a sequence of steps
        Invalid("""
import torch
def predict(model, dataset):
    outs = []
    for i in range(len(dataset)):
        outs.append(model(dataset[i]))
    return torch.cat(outs)
""", line=6),
        # module-level script
        Invalid("""
import torch
from torch import nn
model = nn.Linear(10, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(100):
    x = torch.randn(8, 10)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss)
""", line=13),
        # concatenating each step's output onto a tensor kept across steps
        Invalid("""
import torch
def train(model, loader, opt, crit):
    all_logits = torch.empty(0)
    for x, y in loader:
        logits = model(x)
        loss = crit(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        all_logits = torch.cat([all_logits, logits])
""", line=11, fixed="torch.cat([all_logits, logits.detach()])"),
        # summing into a dict slot
        Invalid("""
import torch
def train(model, loader, opt, crit):
    totals = {}
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        totals["loss"] = totals.get("loss", 0) + loss
""", line=9, fixed='totals.get("loss", 0) + loss.item()'),
        Invalid("""
import torch
def train(model, loader, opt, crit, stats):
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        stats[epoch]["loss"] = stats[epoch]["loss"] + loss
""", line=8),
        # an object of this module whose method accumulates its argument (the ImageNet
        # example's AverageMeter, defined below its use)
        Invalid("""
import torch

def train(loader, model, criterion, optimizer):
    losses = AverageMeter()
    for images, target in loader:
        output = model(images)
        loss = criterion(output, target)
        losses.update(loss, images.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses.avg

class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0
    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count
""", line=9, fixed="losses.update(loss.item(), images.size(0))"),
        Invalid("""
import torch
class History:
    def __init__(self):
        self.values = []
    def log(self, value):
        self.values.append(value)

def train(model, loader, opt, crit):
    history = History()
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        history.log(value=loss)
""", line=15, fixed="history.log(value=loss.detach())"),
        # a list kept in a dict slot
        Invalid("""
import torch
def train(model, loader, opt, crit):
    history = {}
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        history.setdefault("loss", []).append(loss)
        history.setdefault("loss_value", []).append(loss.item())
""", line=9, fixed='history.setdefault("loss", []).append(loss.detach())'),
        # a helper defined below its use that returns a graph on one path
        Invalid("""
import torch

def train(loader, model, criterion, optimizer):
    total = 0.0
    for images, target in loader:
        output = model(images)
        loss = criterion(output, target)
        total += score(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def score(output, target):
    if output.dim() > 1: return (output.softmax(1) * target).sum()
    with torch.no_grad():
        return output.sum()
""", line=9),
    ]


    # ----- values one call, one container or one name away (issue 18) -------------------------
    VALID += [
        # a step method that backpropagates its loss and returns it detached
        """
import torch
class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
    def train(self, train_dataloader):
        tr_loss = 0.0
        for inputs in train_dataloader:
            tr_loss += self.training_step(inputs)
            self.optimizer.step()
            self.optimizer.zero_grad()
        return tr_loss
    def training_step(self, inputs):
        loss = self.compute_loss(inputs)
        loss.backward()
        return loss.detach()
    def compute_loss(self, inputs):
        return self.model(**inputs)["loss"]
""",
        # the whole accumulator is backpropagated: micro-batches summed, or a total
        """
import torch
def train(model, loader, optimizer, criterion, accum_steps):
    for x, y in loader:
        micro_losses = []
        for xs, ys in zip(x.chunk(accum_steps), y.chunk(accum_steps)):
            micro_losses.append(criterion(model(xs), ys))
        optimizer.zero_grad()
        sum(micro_losses).backward()
        optimizer.step()

def train_total(model, loader, optimizer, criterion):
    total = 0
    for xs, ys in loader:
        total = total + criterion(model(xs), ys)
    total.backward()
    optimizer.step()

def deferred_backward(model, loader, optimizer, criterion):
    losses = []
    for step, (x, y) in enumerate(loader):
        losses.append(criterion(model(x), y))
    for i in range(len(losses)):
        losses[i].backward()
    optimizer.step()
""",
        # meters and stats fed plain numbers, through lists, dicts and setdefault
        """
import torch
import torch.nn.functional as F
from collections import defaultdict
class MultiMeter:
    def __init__(self, n):
        self.sums = [0.0] * n
    def update(self, values, n=1):
        for i, v in enumerate(values):
            self.sums[i] += v * n
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
def train(model, loader, optimizer):
    meter, bucket, meters = MultiMeter(2), {}, defaultdict(AverageMeter)
    for x, y in loader:
        logits, aux = model(x)
        ce, reg = F.cross_entropy(logits, y), aux.pow(2).mean()
        optimizer.zero_grad()
        (ce + reg).backward()
        optimizer.step()
        meter.update([ce.item() * 1000, reg.item() * 1000], x.size(0))
        stats = {"ce": ce.item(), "reg": reg.item(), "lr": optimizer.param_groups[0]["lr"]}
        for name, val in stats.items():
            bucket.setdefault(name, AverageMeter()).update(val, x.size(0))
            meters[name].update(val)
""",
        # a per-key dict built in view: the int read off it next to the detached loss
        """
import torch
def train(model, criterion, loader, optimizer):
    meters = {}
    for sample in loader:
        loss = criterion(model(sample["net_input"]), sample["target"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log = {"loss": loss.detach(), "sample_size": sample["target"].size(0), "nsentences": len(sample["id"])}
        meters["loss"] = meters.get("loss", 0) + log["loss"]
        meters["sample_size"] = meters.get("sample_size", 0) + log["sample_size"]
        meters["nsentences"] = meters.get("nsentences", 0) + log.get("nsentences", 0)
""",
        # a loop over the heads / targets of one step summing autograd.grad results used at once
        """
import torch
def saliency_per_head(model, loader, heads):
    maps = []
    for x, _ in loader:
        x.requires_grad_(True)
        out = model(x)
        total = 0
        for head in heads:
            (g,) = torch.autograd.grad(out[head].sum(), x, retain_graph=True, create_graph=True)
            total = total + g.abs()
        maps.append(total.detach().cpu())
    return maps
""",
        # a number read off the result object of a non-torch wrapper (a detector's timings)
        """
import torch
from ultralytics import YOLO
def benchmark(weights, image_loader):
    model = YOLO(weights)
    run_times = []
    for batch in image_loader:
        results = model(batch)
        run_times.append(results[0].speed["inference"])
    return sum(run_times) / len(run_times)
""",
        # a module (not a tensor) kept per fold: a callable trained in the loop, or one whose
        # .parameters() an optimizer takes (another rule reports models kept across runs)
        """
import torch
import torch.nn.functional as F
from models import ResNetClassifier
def cross_validate(folds, epochs, device):
    trained = []
    for fold, (train_loader, val_loader) in enumerate(folds):
        clf = ResNetClassifier(num_classes=10).to(device)
        opt = torch.optim.Adam(clf.parameters())
        for epoch in range(epochs):
            for x, y in train_loader:
                loss = F.cross_entropy(clf(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        trained.append(clf)
    return trained
""",
        # a container with the same name as a backpropagated loss dict, keeping only numbers
        """
import torch
import lightning as L
class LitClassifier(L.LightningModule):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone, self.head = backbone, head
        self.training_step_outputs = []
    def shared_step(self, batch):
        x, y = batch
        logits = self.head(self.backbone(x))
        return {"loss": torch.nn.functional.cross_entropy(logits, y), "preds": logits.argmax(-1)}
    def training_step(self, batch, batch_idx):
        log = self.shared_step(batch)
        self.training_step_outputs.append({"preds": log["preds"]})
        return log["loss"]
""",
        # the list is handed to numpy at the end: np.array raises on a tensor with a graph, so a
        # program that runs kept none (whatever the callable named like a model returns)
        """
import numpy as np
import torch

def get_embeddings(model_interf, batches):
    embs = []
    for ndimages in batches:
        embs.extend(model_interf(ndimages))
    return np.array(embs)
""",
        # a batch drawn with next() is data coming in: the loss computed from it says nothing of
        # the batch's own entries (an int read back from it is no graph)
        """
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
def train_one_epoch(model, optimizer, train_loader, model_func):
    losses_m = AverageMeter()
    dataloader_iter = iter(train_loader)
    for cur_it in range(100):
        batch = next(dataloader_iter)
        optimizer.zero_grad()
        loss, tb_dict, disp_dict = model_func(model, batch)
        loss.backward()
        optimizer.step()
        losses_m.update(loss.item(), batch.get("batch_size", None))
""",
    ]

    INVALID += [
        # the loss comes back from a step method defined below, which backpropagated it
        Invalid("""
import torch
class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
    def train(self, train_dataloader):
        tr_loss = 0.0
        for inputs in train_dataloader:
            tr_loss += self.training_step(inputs)
            self.optimizer.step()
            self.optimizer.zero_grad()
        return tr_loss
    def training_step(self, inputs):
        outputs = self.model(**inputs)
        loss = outputs["loss"]
        loss.backward()
        return loss
""", line=10, fixed="self.training_step(inputs).item()"),
        Invalid("""
import torch
import torch.nn.functional as F
def fit(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        epoch_loss = 0
        for x, y in loader:
            epoch_loss += train_step(model, x, y, optimizer)
        print(epoch_loss)

def train_step(model, x, y, optimizer):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss
""", line=8),
        # backpropagating the last element does not excuse keeping every earlier one
        Invalid("""
import torch
def train(model, loader, optimizer, criterion, reg_weight):
    history = []
    for x, y in loader:
        out = model(x)
        history.append(sum([criterion(out, y), reg_weight * out.pow(2).mean()]))
        optimizer.zero_grad()
        history[-1].backward()
        optimizer.step()
""", line=7),
        # a meter whose update loops over the values it is given
        Invalid("""
import torch
import torch.nn.functional as F
class MultiMeter:
    def __init__(self, n):
        self.sums = [0.0] * n
    def update(self, values, n=1):
        for i, v in enumerate(values):
            self.sums[i] += v * n
def train(model, loader, optimizer):
    meter = MultiMeter(2)
    for x, y in loader:
        logits, aux = model(x)
        ce, reg = F.cross_entropy(logits, y), aux.pow(2).mean()
        optimizer.zero_grad()
        (ce + reg).backward()
        optimizer.step()
        meter.update([ce * 1000, reg * 1000], x.size(0))
""", line=18),
        # meters pulled out of a container, fed from a dict of losses
        Invalid("""
import torch
import torch.nn.functional as F
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
def train(model, loader, optimizer):
    bucket = {}
    for x, y in loader:
        out = model(x)
        stats = {"mse": F.mse_loss(out, y), "l1": F.l1_loss(out, y), "lr": optimizer.param_groups[0]["lr"]}
        optimizer.zero_grad()
        sum(stats.values()).backward()
        optimizer.step()
        for name, val in stats.items():
            bucket.setdefault(name, AverageMeter()).update(val, x.size(0))
""", line=19),
        Invalid("""
import torch
import torch.nn.functional as F
from collections import defaultdict
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
def train(model, loader, optimizer):
    meters = defaultdict(AverageMeter)
    for x, y in loader:
        out = model(x)
        losses = {"mse": F.mse_loss(out, y), "l1": F.l1_loss(out, y)}
        optimizer.zero_grad()
        sum(losses.values()).backward()
        optimizer.step()
        for key, value in losses.items():
            meters[key].update(value)
""", line=20, fixed="meters[key].update(value.item())"),
        # a slot summed from a log dict built from the loss (not the int beside it: see the tests)
        Invalid("""
import torch
def train(model, criterion, loader, optimizer):
    meters = {}
    for sample in loader:
        loss = criterion(model(sample["net_input"]), sample["target"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log = {"loss": loss, "sample_size": sample["target"].size(0)}
        meters["loss"] = meters.get("loss", 0) + log["loss"]
        meters["sample_size"] = meters.get("sample_size", 0) + log["sample_size"]
""", line=11),
        # outputs read by a key, and an epoch mean of the kept losses appended to a history
        Invalid("""
import torch
def fit(model, train_loader, optimizer, epochs, metric="loss"):
    history = {"train_loss": []}
    for epoch in range(epochs):
        epoch_losses = []
        for batch in train_loader:
            output = model.training_step(batch)
            optimizer.zero_grad()
            output[metric].backward()
            optimizer.step()
            epoch_losses.append(output[metric])
        history["train_loss"].append(torch.mean(torch.stack(epoch_losses)))
""", line=13),
        # Lightning: a log dict holding the loss, kept on the module every step
        Invalid("""
import torch
import lightning as L
class LitClassifier(L.LightningModule):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone, self.head = backbone, head
        self.training_step_outputs = []
    def training_step(self, batch, batch_idx):
        log = self.shared_step(batch)
        self.training_step_outputs.append(log)
        return log["loss"]
    def shared_step(self, batch):
        x, y = batch
        logits = self.head(self.backbone(x))
        return {"loss": torch.nn.functional.cross_entropy(logits, y), "preds": logits.argmax(-1)}
""", line=11),
        # an LSTM's state passed by keyword to a replay buffer of the same file
        Invalid("""
import torch
from torch.distributions import Categorical
class ReplayBuffer:
    def __init__(self, size):
        self.size, self.storage = size, []
    def store(self, obs, action, reward, hidden, cell):
        self.storage.append((obs, action, reward, hidden, cell))
def collect(policy, env, buffer_size, num_steps):
    buffer = ReplayBuffer(buffer_size)
    h = c = torch.zeros(1, 128)
    obs = env.reset()
    for step in range(num_steps):
        logits, (h, c) = policy(torch.as_tensor(obs), (h, c))
        action = Categorical(logits=logits).sample()
        obs, reward, done, _ = env.step(action.item())
        buffer.store(obs=obs, action=action.item(), reward=reward, hidden=h, cell=c)
""", line=17, fixed="hidden=h.detach()"),
        # a helper the training loop calls once per step feeds meters the trainer holds (created
        # as names appear) with the values of the stats dict it is given
        Invalid("""
import torch
import torch.nn.functional as F
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer, self.meters = model, optimizer, {}
    def _log(self, stats, n):
        for name, val in stats.items():
            if name not in self.meters:
                self.meters[name] = AverageMeter()
            self.meters[name].update(val, n)
    def fit(self, loader):
        for x, y in loader:
            loss = F.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self._log({"loss": loss}, x.size(0))
""", line=17),
        # a logger taking keyword arguments, each kept by the smoothed value it holds for its name
        Invalid("""
import torch
import torch.nn.functional as F
from collections import defaultdict
class SmoothedValue:
    def __init__(self):
        self.total, self.count = 0.0, 0
    def update(self, value, n=1):
        self.total += value * n
        self.count += n
class MetricLogger:
    def __init__(self):
        self.meters = defaultdict(SmoothedValue)
    def update(self, **kwargs):
        for name, value in kwargs.items():
            self.meters[name].update(value)
def train(model, loader, optimizer):
    logger = MetricLogger()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.update(loss=loss, lr=optimizer.param_groups[0]["lr"])
""", line=24),
        # the same loop keeping each output with its graph, unpacked by a helper of this module
        Invalid("""
import torch
def split_graphs(batch_output):
    return batch_output.to_data_list()

def inference(model, loader, device):
    model.eval()
    results = []
    for batch in loader:
        batch = batch.to(device)
        batch["pos"].requires_grad_(True)
        output = model(batch)
        results.extend(split_graphs(output))
    return results
""", line=13),
        # added in place into a statistic the object hands out from its own state
        Invalid("""
import torch
class DeviceStats:
    def __init__(self):
        self.stats = {}
    def add_stat(self, name):
        self.stats[name] = torch.zeros(1, device="cuda")
    def stat(self, name):
        return self.stats[name]
def train(model, criterion, optimizer, loader):
    stats = DeviceStats()
    stats.add_stat("loss")
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        stats.stat("loss").add_(loss)
        optimizer.step()
        optimizer.zero_grad()
""", line=16, fixed="add_(loss.detach())"),
        # the hint detaches before the copy to the CPU
        Invalid("""
import torch
def predict(model, loader):
    outs = []
    for x in loader:
        outs.append(model(x).cpu())
    return torch.cat(outs)
""", line=6, fixed="model(x).detach().cpu()"),
    ]

class _AttributeUses(cst.CSTVisitor):
    def __init__(self) -> None:
        self.read: set[str] = set()
        self.emptied: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = dotted_name(node)
        if name is not None:
            self.read.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        # self.data = [] / {}, and a running sum started again: self.loss = 0 (or 0., None)
        if (isinstance(value, (cst.List, cst.Dict)) and not value.elements) \
                or isinstance(value, (cst.Integer, cst.Float)) \
                or (isinstance(value, cst.Name) and value.value == "None"):
            for target in node.targets:
                name = dotted_name(target.target)
                if name is not None:
                    self.emptied.add(name)
        elif isinstance(value, cst.Call):
            # self.rollout = Experience(state0=[], policy_vb=[], ...): a new record whose fields
            # start empty
            fields = [arg.keyword.value for arg in value.args if arg.keyword is not None
                      and isinstance(arg.value, (cst.List, cst.Dict)) and not arg.value.elements]
            for target in node.targets:
                name = dotted_name(target.target)
                if name is not None:
                    self.emptied.update(f"{name}.{field}" for field in fields)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "clear" and not node.args:
            name = dotted_name(node.func.value)
            if name is not None:
                self.emptied.add(name)


def _attribute_uses(node: cst.CSTNode) -> tuple[set[str], set[str]]:
    """The dotted attributes a function reads (``self.data``, ``self.make_batch``) and those it
    empties (``self.data = []``, ``self.data.clear()``, ``self.loss = 0``, the fields of
    ``self.rollout = Experience(actions=[], ...)``)."""
    visitor = _AttributeUses()
    node.visit(visitor)
    return visitor.read, visitor.emptied


def _carrier(value: cst.BaseExpression, facts) -> cst.BaseExpression:
    """The part of a value that carries the graph, to name in a message: ``loss`` in ``[loss]``
    or ``(loss, n)``."""
    if isinstance(value, (cst.List, cst.Tuple)) and value.elements:
        elements = [el.value for el in value.elements]
        return max(elements, key=lambda v: facts.graph_value(v).state)  # the first with the most graph
    return value


def _other_operands(value: cst.BinaryOperation, is_accumulator: Callable[[cst.BaseExpression], bool]
                    ) -> list[cst.BaseExpression] | None:
    """The operands of ``value`` besides the accumulator; None if it does not read it."""
    parts = operands(value)
    if not any(is_accumulator(op) for op in parts):
        return None
    return [op for op in parts if not is_accumulator(op)]


def _scales(value: cst.BaseExpression, is_accumulator: Callable[[cst.BaseExpression], bool]) -> bool:
    """Is the accumulator's old value multiplied or divided in ``value`` (``m * ema + ...``)?"""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, (cst.Multiply, cst.Divide)) and (
                    is_accumulator(node.left) or is_accumulator(node.right)):
                return True
            stack.extend((node.left, node.right))
    return False


def _reads_slot(operand: cst.BaseExpression, slot: cst.Subscript) -> bool:
    """Does ``operand`` read the dict/list slot ``slot`` (``d[k]``, ``d.get(k, 0)``)?"""
    code = _EMPTY_MODULE.code_for_node
    if isinstance(operand, cst.Subscript):
        return code(operand) == code(slot)
    if not (isinstance(operand, cst.Call) and isinstance(operand.func, cst.Attribute)
            and operand.func.attr.value == "get" and operand.args and len(slot.slice) == 1):
        return False
    index = slot.slice[0].slice
    return (isinstance(index, cst.Index) and code(operand.func.value) == code(slot.value)
            and code(operand.args[0].value) == code(index.value))


_EMPTY_MODULE = cst.Module(body=())


def _value_names(node: cst.BaseExpression) -> set[str]:
    """Names a value is computed from, leaving out subscript indices and ``len()``/``range()``
    arguments (``targets[i]`` with ``i`` from ``range(len(acc))`` is not computed from ``acc``)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call) and isinstance(current.func, cst.Name) and current.func.value in (
            "len", "range"
        ):
            continue
        if isinstance(current, cst.Subscript):
            stack.append(current.value)
        elif isinstance(current, (cst.Name, cst.Attribute)):
            found |= names_in(current)
        else:
            stack.extend(expression_children(current))
    return found


def _mentions_len(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"


def _empties(definition: cst.FunctionDef, name: str) -> bool:
    """Does a statement of ``definition``'s own block (not in a branch) empty ``name``:
    ``del name[:]``, ``name.clear()``, ``name = []``?"""
    body = definition.body.body if isinstance(definition.body, cst.IndentedBlock) else ()
    for line in body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for small in line.body:
            if type(small) is cst.Del:
                targets = small.target.elements if isinstance(small.target, (cst.Tuple, cst.List)) else [small.target]
                for target in targets:
                    target = target.value if isinstance(target, cst.Element) else target
                    if type(target) is cst.Subscript and dotted_name(target.value) == name and len(target.slice) == 1 \
                            and type(target.slice[0].slice) is cst.Slice and target.slice[0].slice.lower is None \
                            and target.slice[0].slice.upper is None:
                        return True
            elif type(small) is cst.Expr and type(small.value) is cst.Call and type(small.value.func) is cst.Attribute \
                    and small.value.func.attr.value == "clear" and dotted_name(small.value.func.value) == name:
                return True
            elif type(small) is cst.Assign and type(small.value) is cst.List and not small.value.elements \
                    and any(dotted_name(target.target) == name for target in small.targets):
                return True
    return False


def _slices_of(value: cst.BaseExpression, name: str) -> bool:
    """Does ``value`` read a slice of ``name`` that drops its front (``name[-2:]``, ``name[1:]``)?"""
    stack: list[cst.BaseExpression] = [value]
    while stack:
        current = stack.pop()
        if type(current) is cst.Subscript:
            if dotted_name(current.value) == name and any(
                    type(element.slice) is cst.Slice and element.slice.lower is not None for element in current.slice):
                return True
            stack.append(current.value)
        elif type(current) is cst.Call:
            stack.extend(arg.value for arg in current.args)
        elif type(current) in (cst.Tuple, cst.List):
            stack.extend(element.value for element in current.elements)
        elif type(current) is cst.BinaryOperation:
            stack.extend((current.left, current.right))
    return False


_EMPTY_CONTAINERS = frozenset({"list", "dict", "set", "collections.OrderedDict", "OrderedDict"})


def _made_fresh_before(function: cst.CSTNode, store: cst.CSTNode, place: str) -> bool:
    """Is ``place`` (``self.transition``) bound to a new empty container (``[]``, ``{}``, ``list()``),
    or to any value not computed from what it held (``self.user_emb = torch.stack(parts).mean(1)``),
    by a statement that runs before ``store`` on every path to it: earlier in ``store``'s own block
    or in a block around it, within ``function``?"""
    parents: dict[int, cst.CSTNode] = {}
    stack = [function]
    while stack and id(store) not in parents:  # a stack, not recursion: expressions nest deep
        current = stack.pop()
        for child in expression_children(current):
            parents[id(child)] = current
            stack.append(child)
    if id(store) not in parents:
        return False
    chain = [store]
    while chain[-1] is not function:
        chain.append(parents[id(chain[-1])])
    for child, parent in zip(chain, chain[1:]):
        body = getattr(parent, "body", None)
        if not isinstance(parent, (cst.IndentedBlock, cst.Module)) or not isinstance(body, (list, tuple)):
            continue
        for statement in body:
            if statement is child:
                break
            if isinstance(statement, cst.SimpleStatementLine) and any(
                    isinstance(small, cst.Assign) and len(small.targets) == 1
                    and dotted_name(small.targets[0].target) == place
                    and (_empty_container(small.value) or place not in names_in(small.value))
                    for small in statement.body):
                return True  # (or to a value not computed from what it held: this call's own)
    return False


def _empty_container(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.List, cst.Dict, cst.Set)):
        return not value.elements
    return isinstance(value, cst.Call) and not value.args and dotted_name(value.func) in _EMPTY_CONTAINERS


def _declared_outside(function: cst.CSTNode, name: str, source: str) -> bool:
    """Is ``name`` declared ``global`` or ``nonlocal`` in ``function``?"""
    if "global" not in source and "nonlocal" not in source:
        return False
    return any(isinstance(node, (cst.Global, cst.Nonlocal)) and any(item.name.value == name for item in node.names)
               for node in descendants(function))
