"""ML207 outputs-kept-on-device: model outputs are collected on the accelerator for an
epoch-end metric.

``preds.append(out.detach())`` in a loop over a whole loader keeps every batch's outputs
(logits, embeddings, masks) in GPU memory until the epoch ends: memory grows through the
epoch and the evaluation that comes last runs out of memory on a dataset that trains fine.
Move each batch to the CPU as it is collected (``out.detach().cpu()``), or update a
streaming metric (``torchmetrics``, running sums) per batch.

Flagged: appending (``append`` / ``extend``) to a list that outlives the iteration, or
concatenating onto a running tensor (``preds = torch.cat([preds, out])``), in a loop over
data (its body brings a value onto the device and runs a module, itself or in what it calls;
where the body cannot tell, its iterable names a loader, dataset, batches...; not an epoch
loop), a model output (also one a plain function of the module returns, or a container it
filled with outputs)
that was detached (``.detach()``) or computed under ``torch.no_grad()`` / ``inference_mode()``
(also row by row, ``for emb in embeddings: kept.append(emb.detach())``: each row is a view that
keeps the whole batch's output),
when the module moves data to an accelerator (``.cuda()``, ``.to(device)``, ``device="cuda"``);
the same append made by a helper such a loop calls with the list and the output
(``log_metrics(logs, z)`` doing ``logs["z"].append(z.detach())``); outputs kept at every step of
a decoding loop (a ``while`` or ``range`` loop feeding the model the sequence its chosen tokens
grow, or the cache its output hands back: per-token logits under ``inference_mode``); a list
extended with a tensor (``preds.extend(logits.argmax(1))``: one 0-d view per row, each keeping
the batch's whole storage, on any device); and what a Lightning predict
hook (a callback's or the module's ``on_predict_batch_end``, ``predict_step``) keeps of the
outputs and batch Lightning hands it, once per batch of ``trainer.predict()`` (Lightning puts
the batch on the module's device, and moves the predictions it returns to the CPU). Not flagged: ``.cpu()``, ``.item()``, ``.numpy()``,
``.tolist()``, ``.to("cpu")`` anywhere in the stored value; a collection the function later
converts with ``.numpy()`` without moving it (``y_preds.detach().numpy()``: ``numpy()`` raises on a
device tensor, so it is on the CPU); values reduced per batch
(``argmax``, ``sum``, ``mean``, a loss, even one per sample); a module that never moves data off the CPU;
appending a graph-carrying output (that is ML101's finding, not repeated here); outputs
kept in Lightning's ``validation_step`` (one step per call, the pattern Lightning's own
documentation uses); a list emptied or replaced within the same loop (a bounded buffer); a
loop over a list the function built itself (its own candidates); a loop over a loader that
breaks out after a count (``if i == n_samples - 1: break``: a few batches); a list extended with a
module's output as it comes (detectors return lists of per-sample results): only a tensor
operation (``logits.argmax(1)``) shows it is a tensor; a list the function hands to a
``torch.distributed`` collective, directly or through a helper of the file or project
(``merge_distributed(predicts)`` all-gathering it): NCCL communicates device tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import (
    FUNCTIONAL_LOSS_WORDS, GRAPH_ENDING_METHODS, TENSOR_COLLECTIVES, TENSOR_METHODS, ClassInfo, FunctionScope, Graph, GradMode, Loop, builds_a_sequence, concatenated_onto,
    dotted_name, expression_children, names_in, root_name, without_self_returning_calls,
)
from memlint.static.rule import Invalid, Rule
from memlint.static.summaries import COLLECTIVE

_CPU_METHODS = frozenset({"cpu", "item", "numpy", "tolist", "__float__"})
_CONVERTING = frozenset({"item", "numpy", "tolist", "__float__"})
# torch functions whose result is a tensor computed from their first argument.
_TENSOR_FUNCTIONS = frozenset({"argmax", "argmin", "sigmoid", "softmax", "log_softmax", "round", "sign", "flatten",
                               "squeeze", "exp", "abs", "clamp", "topk", "sort", "argsort"})
# Methods and functions whose result is a per-batch reduction (small), not the outputs.
_REDUCING = frozenset({"argmax", "argmin", "sum", "mean", "max", "min", "eq", "ne", "gt", "lt", "ge", "le",
                       "std", "var", "norm", "all", "any", "count_nonzero", "nansum", "nanmean", "size",
                       "numel", "prod", "median", "equal", "allclose", "float_power", "multinomial", "bernoulli"})
# Calls a decoding step's next input may go through from the model's output (token choice),
# beside torch functions and tensor methods; anything else (env.step(action)) is another process.
_TOKEN_CHOICE = frozenset({"sample", "multinomial", "argmax", "topk", "gather", "where", "softmax", "log_softmax"})
_LOADER_WORDS = ("loader", "dataset", "data", "batches", "samples")
_DEVICE_WORDS = ("device", "cuda", "gpu", "rank", "accelerator")
_ACCELERATOR_PREFIXES = ("cuda", "mps", "xpu", "npu", "hpu")
# Methods of a tensor that the chain of a collected value is peeled through (``self.model(x)``
# is a module call, not a method of ``self``).
_CHAIN_METHODS = TENSOR_METHODS | GRAPH_ENDING_METHODS | _CPU_METHODS | _REDUCING | {"detach", "detach_"}


@dataclass
class _Output:
    detached: bool
    generated: bool = False  # model.generate(..., output_scores=True): its .sequences are only tokens
    # model(input_ids, labels=y): a transformers model given labels returns the loss first
    # (``out[0]``, ``out.loss``): one number per batch
    labeled: bool = False
    # an output after the first of a module whose forward memlint cannot read: a number, maybe,
    # unless the code treats it as a tensor (``z.detach()``, ``z[::10]``)
    maybe_number: bool = False


@dataclass
class _HelperAppend:
    """``logs["z"].append(z.detach()[::10])`` in a helper: its list and its value are parameters."""

    node: cst.Call
    target: str
    container: str  # the parameter the list comes from
    value: str  # the parameter the kept value comes from
    detached: bool  # the helper detaches it itself
    value_text: str


@dataclass
class _HelperCall:
    """A call, in a loop over a loader, of a function of this module: which of its parameters
    get a list that outlives the iteration, and which a model output."""

    callee: int  # id() of the def
    loop: int
    lasting: frozenset[str]
    outputs: dict[str, _Output]


class OutputsKeptOnDevice(Rule):
    code = "ML207"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._outputs: dict[int, dict[str, _Output]] = {}  # function id -> name -> output facts
        self._moves_to_device = False
        self._pending: list[tuple[cst.Call, str, str, int]] = []
        self._reset_in_loop: dict[int, set[str]] = {}  # loop id -> lists rebound or cleared in it
        self._returns_output: set[int] = set()  # id() of functions returning a model output, not on the CPU
        # function id -> local containers it fills with model outputs (``results[i].append(y_hat[i])``)
        self._filled: dict[int, set[str]] = {}
        # function id -> local name -> the value it was first bound to (``samples = []``)
        self._first_values: dict[int, dict[str, cst.BaseExpression]] = {}
        self._hooks: set[int] = set()  # id() of Lightning predict hooks that keep what they are given
        self._helper_appends: dict[int, list[_HelperAppend]] = {}  # id() of a def -> its appends of parameters
        self._helper_calls: list[_HelperCall] = []
        # Loops that build a sequence (while, range) keeping outputs: id -> (loop, function); what is
        # assigned in them (name -> values) and which model calls they make (result names, call).
        self._decoding: dict[int, tuple[Loop, FunctionScope]] = {}
        self._loop_context: dict[int, tuple[Loop, FunctionScope]] = {}  # id of a collecting loop -> (loop, function)
        self._loop_assigns: dict[int, dict[str, list[cst.BaseExpression]]] = {}
        self._loop_calls: dict[int, list[tuple[frozenset[str], cst.Call]]] = {}
        self._loop_kinds: dict[int, tuple[bool, bool]] = {}  # loop id -> (over a loader, builds a sequence)
        self._output_branches: dict[tuple[int, str], tuple] = {}  # (function id, name) -> if-branches it was bound in
        self._by_behaviour: dict[int, Loop] = {}  # loops taken for a pass over data if their body shows it
        self._scheduled = False
        # function id -> the names it hands to a call that may run a collective on them, with that
        # call's callees (``merge_distributed(predicts)``, ``dist.all_gather(out, torch.cat(preds))``)
        self._handed: dict[int, list[tuple[frozenset[str], list[object]]]] = {}
        self._function_of: dict[int, int] = {}  # id() of a pending append -> id() of its function
        # id() of a function -> the names it converts with .numpy() without moving them first
        # (``preds.detach().numpy()``): CPU tensors, or the code could not run
        self._numpy_on_host: dict[int, set[str]] = {}
        # function id -> for each module call in it: the names its arguments read, the ids of the
        # loops around it, whether it is a method of the module rather than its forward (a feature
        # bank the model is run on after the loop that filled it; a context fed back in the loop)
        self._module_inputs: dict[int, tuple[FunctionScope, list[tuple[frozenset[str], frozenset[int], bool]]]] = {}
        self._collecting: set[int] = set()  # id() of the functions with an output collected so far

    # ----- what is a model output ----------------------------------------------------------
    def _function_outputs(self) -> dict[str, _Output]:
        function = self.facts.function
        outputs = self._outputs.get(id(function))
        if outputs is None:
            outputs = self._outputs[id(function)] = {}
            for name in _predict_hook_values(function):  # what Lightning hands a predict hook
                outputs[name] = _Output(detached=True)
        return outputs

    def _note_reset(self, name: str | None) -> None:
        if name:
            for loop in self.facts.loops_in_function():
                self._reset_in_loop.setdefault(id(loop), set()).add(name)
            self._reset_in_loop.setdefault(id(self.facts.function), set()).add(name)  # a hook emptying it

    def visit_For(self, node: cst.For) -> None:
        """``for emb in embeddings``: each row of an output is (a view of) that output."""
        if isinstance(node.target, cst.Name) and isinstance(node.iter, cst.Name):
            outputs = self._function_outputs()
            kind = self._classify(node.iter, outputs)
            if kind is not None:
                outputs[node.target.value] = kind

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._first_values.setdefault(id(self.facts.function), {}).setdefault(
                node.targets[0].target.value, node.value)
        grown = len(node.targets) == 1 and self._concatenation(node, node.targets[0].target, node.value)
        for target in node.targets:
            for name in _target_names(target.target):
                if not grown:
                    self._note_reset(name)
        self._note_loop_assignment(node)
        outputs = self._function_outputs()
        if len(node.targets) == 1 and self._every_slot_moved_off(node):
            # for k in out.keys(): out[k] = out[k].detach().cpu().numpy(): what out holds is on the host
            outputs.pop(dotted_name(_peel_subscripts(node.targets[0].target)) or "", None)
            return
        kind = self._classify(node.value, outputs)
        here = tuple(self.facts.branch_path)
        for target in node.targets:
            names = _target_names(target.target)
            # output, acc = self.model(batch): of a module whose forward memlint cannot read, only
            # the first output is known to be a tensor (the others may be numbers)
            unknown_after_first = isinstance(target.target, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Call) \
                and self.facts.outputs_unknown_after_first(node.value)
            for index, name in enumerate(names):
                key = (id(self.facts.function), name)
                if kind is not None and unknown_after_first and index > 0 and "loss" not in name.lower():
                    outputs[name] = _Output(kind.detached, kind.generated, kind.labeled, maybe_number=True)
                    self._output_branches[key] = here
                    continue
                if kind is None or "loss" in name.lower():
                    bound_in = self._output_branches.get(key)
                    chain = _call_chain(node.value)
                    if bound_in is not None and len(here) > len(bound_in) and here[:len(bound_in)] == bound_in \
                            and not (chain.on_cpu or chain.reduced):
                        # (a branch that moves it off the device or reduces it is a choice the code
                        # offers: ``if convert_to_numpy: emb = emb.cpu()``)
                        continue  # rebound in a branch only (if n_gpus > 1: feat = gather(feat)): the
                        # output is still what it holds on the other path
                    outputs.pop(name, None)
                else:
                    outputs[name] = kind
                    self._output_branches[key] = here

    def _every_slot_moved_off(self, assign: cst.Assign) -> bool:
        """``out[k] = out[k].cpu()`` in ``for k in out`` / ``for k in out.keys()``, unconditionally:
        each slot of ``out`` is moved off the device."""
        target, value = assign.targets[0].target, assign.value
        loop = self.facts.loop
        if loop is None or type(loop.node) is not cst.For or type(loop.node.target) is not cst.Name \
                or type(target) is not cst.Subscript or len(target.slice) != 1 or not any(
                    isinstance(line, cst.SimpleStatementLine) and any(small is assign for small in line.body)
                    for line in loop.node.body.body):
            return False
        index = target.slice[0].slice
        if type(index) is not cst.Index or type(index.value) is not cst.Name \
                or index.value.value != loop.node.target.value:
            return False
        keys = loop.node.iter
        if type(keys) is cst.Call and type(keys.func) is cst.Attribute and keys.func.attr.value == "keys" and not keys.args:
            keys = keys.func.value
        module = cst.Module(body=())
        if module.code_for_node(keys) != module.code_for_node(target.value):
            return False
        chain = _call_chain(value)
        return chain.on_cpu and module.code_for_node(_peel_subscripts(chain.base)) == module.code_for_node(
            _peel_subscripts(target))

    def _classify(self, value: cst.BaseExpression, outputs: dict[str, _Output],
                  handed: bool = False) -> _Output | None:
        """An ``_Output`` if ``value`` holds (part of) a model output kept at full size.
        ``handed``: handed to a helper, which may treat it as a tensor (see _Output.maybe_number)."""
        if isinstance(value, (cst.IfExp, cst.BinaryOperation)):
            # out["prediction"] if mode == "prediction" else out; logits / temperature
            parts = (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value.left, value.right)
            kinds = [kind for kind in (self._classify(part, outputs) for part in parts) if kind is not None]
            return _Output(all(kind.detached for kind in kinds) or self.facts.in_no_grad) if kinds else None
        chain = _call_chain(value)
        if chain.on_cpu or chain.reduced:
            return None
        base = chain.base
        detached = chain.detached or self.facts.in_no_grad
        if isinstance(base, cst.Call) and _mmcv_test_call(base):
            return None  # model(return_loss=False, **data): OpenMMLab's test API hands back CPU results
        if isinstance(base, cst.Call):
            func = base.func
            if isinstance(func, cst.Attribute) and func.attr.value == "forward":
                func = func.value  # model.forward(x), self.forward(x): the module's call
            if self.facts.is_module_expr(func) and not _is_loss_callee(func) and not self._forward_returns_a_loss(func):
                return _Output(detached, labeled=any(arg.keyword is not None and arg.keyword.value == "labels"
                                                     for arg in base.args))
            if _generates_scores(base, self.facts) and not _reads_sequences(value):
                return _Output(True, generated=True)  # model.generate(..., output_scores=True): every step's scores
            # torch.sigmoid(out), F.softmax(out, -1): an elementwise function of an output
            qualified = self.facts.qualified_name(func) or ""
            if qualified.startswith("torch.nn.functional.") and any(
                    word in qualified.rsplit(".", 1)[-1] for word in FUNCTIONAL_LOSS_WORDS):
                return None  # a loss, even per sample (reduction="none"): the size of the targets at most
            if qualified.startswith("torch.") and base.args:
                inner = self._classify(base.args[0].value, outputs)
                if inner is not None:
                    return _Output(detached or inner.detached)
            return None
        name = dotted_name(base)
        if name is not None and name in outputs:
            if outputs[name].maybe_number and value is base and not handed:
                return None  # acc of ``output, acc = model(batch)``, kept as it is: maybe a number
            if outputs[name].maybe_number and value is base:
                return outputs[name]
            if outputs[name].generated and _reads_sequences(value):
                return None
            if outputs[name].labeled and _reads_the_loss(value):
                return None  # outputs[0] / outputs.loss of a model given labels: the loss
            return _Output(detached or outputs[name].detached, outputs[name].generated)
        return None

    def _forward_returns_a_loss(self, module: cst.BaseExpression) -> bool:
        """Is ``module`` an instance of a class of this file whose ``forward`` returns a loss
        (``return F.cross_entropy(logits, targets)``, ``loss.mean()``): one number per batch,
        not the outputs?"""
        facts = self.facts
        class_name = facts.instance_class_name(module)
        dotted = dotted_name(module)
        binding = facts.lookup(dotted) if class_name is None and dotted is not None else None
        built = without_self_returning_calls(binding.node) if binding is not None else None
        if isinstance(built, cst.Call) and isinstance(built.func, cst.Name) and built.func.value in facts.class_nodes:
            class_name = built.func.value  # model = GPT(...).cuda()
        forwards = facts.methods_of(class_name, "forward") if class_name is not None else []
        returns = [value for forward in forwards for value in _returned_values(forward)]
        return bool(returns) and all(self._is_a_loss(value) for value in returns)

    def _is_a_loss(self, value: cst.BaseExpression) -> bool:
        if not isinstance(value, cst.Call):
            return False
        if any(arg.keyword is not None and arg.keyword.value == "reduction" for arg in value.args if
               isinstance(arg.value, cst.SimpleString) and "none" in arg.value.value):
            return False  # per-element losses: the size of the outputs
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("mean", "sum") and not value.args:
            return True
        qualified = self.facts.qualified_name(func) or ""
        return qualified.startswith("torch.nn.functional.") and any(
            word in qualified.rsplit(".", 1)[-1] for word in FUNCTIONAL_LOSS_WORDS)

    # ----- where data goes ---------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self._helper_call(node)
        self._note_handed(node)
        self._note_module_inputs(node)
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if node.args and isinstance(func.value, cst.Name) and isinstance(node.args[0].value, cst.Name) \
                and node.args[0].keyword is None and self.facts.function is not None \
                and self.facts.imports.aliases.get(func.value.value, "").split(".", 1)[0] == "numpy":
            # np.concatenate(var_ratios): numpy turns every entry into an array, which raises on a
            # device tensor: what the list holds is on the host
            self._numpy_on_host.setdefault(id(self.facts.function), set()).add(node.args[0].value.value)
        if method == "numpy" and not node.args and self.facts.function is not None:
            on_host = _numpy_without_moving(func.value)
            if on_host is not None:
                self._numpy_on_host.setdefault(id(self.facts.function), set()).add(on_host)
        if method in ("cuda", "to", "prepare") and not self._moves_to_device:
            self._moves_to_device = self._is_device_move(node, method)
        if method in ("clear", "pop", "popleft"):
            self._note_reset(dotted_name(func.value))
            return
        if method not in ("append", "extend"):
            return
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) != 1:
            return
        facts = self.facts
        loop = facts.loop
        self._note_filled(func.value, positional[0])
        batch_loop = self._batch_of_rows(loop) if loop is not None else None
        if batch_loop is not None:  # for emb in embeddings: append(emb): each row keeps the batch's storage
            if not self._over_loader(batch_loop) or batch_loop not in facts.outlived_loops(func.value):
                return  # the loop around decides: rows of one output, kept while it walks no loader
            batches = id(batch_loop)
        elif loop is not None and self._over_loader(loop) and facts.outlives_iteration(func.value):
            if self._made_per_batch(func.value, loop):
                return  # outputs = [] in each batch: the crops or views of one batch, dropped with it
            batches = id(loop)
        elif _predict_hook_values(facts.function) and facts.outlives_call(func.value):
            batches = id(facts.function)  # Lightning calls it once per batch of the predict loop
            self._hooks.add(batches)
        elif loop is not None and self._over_steps(loop) and facts.outlives_iteration(func.value):
            batches = id(loop)  # a decoding step, if the loop feeds the model its own output (decided at the end)
            self._decoding[batches] = (loop, facts.function)
        else:
            self._helper_append(node, func.value, positional[0])
            return
        value = positional[0]
        if isinstance(value, (cst.List, cst.Tuple)) and method == "extend":
            return
        target = dotted_name(func.value) or _text(func.value)
        if method == "extend" and batches not in self._hooks and self._row_views(value):
            return
        self._collected(node, target, value, batches)

    def _batch_of_rows(self, loop: Loop) -> Loop | None:
        """The loop around ``loop`` when ``loop`` walks the rows of a model output made in that
        loop's iteration: ``for emb in embeddings`` (or ``zip``/``enumerate`` of such names),
        every name of its iterable bound earlier in the same iteration, one of them an output."""
        loops = self.facts.loops_in_function()
        if len(loops) < 2 or loops[-1] is not loop or not isinstance(loop.node, cst.For):
            return None
        outer = loops[-2]
        iterable = loop.node.iter
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and iterable.func.value in ("zip", "enumerate"):
            parts = [arg.value for arg in iterable.args if arg.keyword is None]
        else:
            parts = [iterable]
        if not parts or not all(isinstance(part, cst.Name) and part.value in outer.bound_this_iteration
                                and part.value not in outer.target_names for part in parts):
            return None
        outputs = self._function_outputs()
        return outer if any(self._classify(part, outputs) is not None for part in parts) else None

    def _row_views(self, value: cst.BaseExpression) -> bool:
        """``preds.extend(logits.argmax(1))``: a tensor (a model output or a torch function of
        one, however reduced) extended row by row keeps one 0-d view per row, each holding the
        batch's whole storage (and a tensor object apiece)."""
        chain = _call_chain(value)
        if chain.converted or self.facts.graph_value(value).state is Graph.CARRIES:
            return False  # .tolist()/.numpy(): numbers; still graph-carrying: ML101's
        base = chain.base
        if _peel_subscripts(value) is base:
            # results.extend(model(x)), results.extend(out["boxes"]): a module's output as it comes,
            # which detectors and other frameworks hand back as lists of per-sample results; a
            # tensor only with a tensor operation to show it (logits.argmax(1), out.squeeze(0))
            return False
        if isinstance(base, cst.Call):
            qualified = self.facts.qualified_name(base.func) or ""
            tensor = (self.facts.is_module_expr(base.func) and not _is_loss_callee(base.func)) or (
                qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _TENSOR_FUNCTIONS
                and bool(base.args) and self._classify(base.args[0].value, self._function_outputs()) is not None)
        else:
            tensor = dotted_name(base) in self._function_outputs()
        if tensor:
            shown = _text(value) if len(_text(value)) <= 30 else _text(value)[:27] + "..."
            self.report(
                value,
                f"extending a list with tensor '{shown}' keeps a view of the whole batch per row",
                help=f"extend with {_text(value)}.tolist() for numbers, or append {_text(value)}.cpu() and "
                     f"torch.cat() at the end",
                needs_grad=False,
            )
        return tensor

    def _over_loader(self, loop: Loop) -> bool:
        kind = self._loop_kinds.get(id(loop))
        if kind is None:
            kind = self._loop_kinds[id(loop)] = (
                _walks_loader(loop, self._first_values.get(id(self.facts.function), {})), builds_a_sequence(loop))
        if kind[0]:
            return True
        # A loop no name shows to walk data may still pass over it: decided by what its body does
        # once the module has been walked (see _passes_over_data); a loop of steps that builds a
        # sequence (decoding, sampling) is judged as such instead.
        if kind[1] or not _may_pass_over_data(loop, self._first_values.get(id(self.facts.function), {}), self.facts):
            return False
        self._by_behaviour[id(loop)] = loop
        return True

    def _made_per_batch(self, holder: cst.BaseExpression, loop: Loop) -> bool:
        """Is ``holder`` bound again in each iteration of a loop around ``loop`` that walks a
        loader by name? Then ``loop`` walks the parts of one batch, and what it collects is
        dropped at the next batch."""
        outlived = self.facts.outlived_loops(holder)
        loops = self.facts.loops_in_function()
        outer = loops[:loops.index(loop)] if loop in loops else []
        return any(around not in outlived and _walks_loader(around, self._first_values.get(id(self.facts.function), {}))
                   for around in outer)

    def _over_steps(self, loop: Loop) -> bool:
        self._over_loader(loop)
        return self._loop_kinds[id(loop)][1]

    # ----- decoding loops: the model is fed what it produced ----------------------------------
    def _note_loop_assignment(self, node: cst.Assign) -> None:
        loop = self.facts.loop
        if loop is None or not self._over_steps(loop):
            return
        assigned = self._loop_assigns.setdefault(id(loop), {})
        names = [name for target in node.targets for name in _target_names(target.target)]
        for name in names:
            assigned.setdefault(name, []).append(node.value)
        values = [node.value]
        while values:
            base = _call_chain(values.pop()).base
            if isinstance(base, cst.BinaryOperation):  # model(ids).logits[:, -1] / temperature
                values.extend((base.left, base.right))
            elif isinstance(base, cst.Call) and self.facts.is_module_expr(base.func) and not _is_loss_callee(base.func):
                self._loop_calls.setdefault(id(loop), []).append((frozenset(names), base))

    def _feeds_back(self, loop: Loop) -> bool:
        """Does the loop call the same model each step with an input made from its last output:
        the sequence grown by the chosen token (``ids = torch.cat([ids, next_token], -1)``), or a
        cache the output hands back (``past = out.past_key_values``)? Not a loop over layers
        (``h = layer(h)``), nor an environment stepped with the chosen action."""
        assigned = self._loop_assigns.get(id(loop), {})
        for results, call in self._loop_calls.get(id(loop), ()):
            if (root_name(call.func) or "") in loop.target_names:
                continue  # a different module each step
            for argument in {name for arg in call.args for name in names_in(arg.value)} & set(assigned):
                for value in assigned[argument]:
                    if root_name(value) in results and not isinstance(value, cst.Call):
                        return True  # past = out.past_key_values
                    grown = concatenated_onto(value, argument, self.facts)
                    if grown and any(self._made_from(part, results, assigned) for part in grown):
                        return True
        return False

    def _made_from(self, value: cst.BaseExpression, results: frozenset[str],
                   assigned: dict[str, list[cst.BaseExpression]]) -> bool:
        """Is ``value`` computed in the loop from ``results`` by tensor operations only?"""
        seen: set[str] = set()
        frontier = [value]
        while frontier:
            current = frontier.pop()
            if not self._tensor_only(current):
                continue
            for name in names_in(current):
                if name in results:
                    return True
                if name not in seen and name in assigned:
                    seen.add(name)
                    frontier.extend(assigned[name])
        return False

    def _tensor_only(self, value: cst.BaseExpression) -> bool:
        """No call in ``value`` but torch functions, tensor methods and token choice."""
        stack: list[cst.CSTNode] = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                qualified = self.facts.qualified_name(node.func) or ""
                method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
                if not (qualified.startswith("torch.") or method in _TOKEN_CHOICE or method in _CHAIN_METHODS):
                    return False
            stack.extend(child for child in expression_children(node))
        return True

    # ----- helpers a loop over a loader calls with its list and its outputs ---------------------
    def _helper_append(self, node: cst.Call, container: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """An append, in a function, of a parameter into a list a parameter holds: decided with
        the calls of the function (see :meth:`_helper_call`)."""
        function = self.facts.function
        parameters = function.parameters
        owner = root_name(container)
        chain = _call_chain(value)
        kept = dotted_name(chain.base)
        if owner not in parameters or kept not in parameters or chain.on_cpu or chain.reduced:
            return
        self._helper_appends.setdefault(id(function.node), []).append(_HelperAppend(
            node, _text(container), owner, kept, chain.detached, _text(value)))
        self._schedule()

    def _helper_call(self, node: cst.Call) -> None:
        facts = self.facts
        loop = facts.loop
        if loop is None or not self._over_loader(loop):
            return
        callees = facts.callees(node)
        if callees is None:
            return
        outputs = self._function_outputs()
        for callee in callees[0]:
            arguments = facts.argument_nodes(node, callee, callees[1])
            lasting = frozenset(name for name, arg in arguments.items()
                                if root_name(arg) is not None and facts.outlives_iteration(arg))
            kinds = {name: kind for name, arg in arguments.items()
                     if (kind := self._classify(arg, outputs, handed=True)) is not None}
            if lasting and kinds:
                self._helper_calls.append(_HelperCall(id(callee), id(loop), lasting, kinds))

    def _note_handed(self, node: cst.Call) -> None:
        """Remember the names a call is handed, with what it runs (decided at the end: does it
        run a collective on them?)."""
        names = frozenset(name for arg in node.args for name in names_in(arg.value))
        if not names:
            return
        facts = self.facts
        qualified = facts.qualified_name(node.func)
        if qualified in TENSOR_COLLECTIVES:
            callees: list[object] = [qualified]
        else:
            found = facts.callees(node)
            callees = [id(definition) for definition in found[0]] if found is not None else (
                [qualified] if qualified is not None and not qualified.startswith("torch.") else [])
        if callees:
            self._handed.setdefault(id(facts.function), []).append((names, callees))

    def _gathered(self, function_id: int, target: str) -> bool:
        """Is ``target`` handed, in its function, to a call that runs a torch.distributed
        collective (directly, or a helper of the file or project that does)? NCCL communicates
        device tensors: the outputs are kept on the device for that. Also a name the function
        binds to them joined (``mine = torch.cat(kept)``; ``dist.all_gather(out, mine)``)."""
        joined = {target} | {name for name, value in self._first_values.get(function_id, {}).items()
                             if isinstance(value, cst.Call) and (self.facts.qualified_name(value.func) or "")
                             in ("torch.cat", "torch.stack") and target in names_in(value)}
        for names, callees in self._handed.get(function_id, ()):
            if not joined & names:
                continue
            if any(callee in TENSOR_COLLECTIVES for callee in callees) or \
                    self.facts.callees_work(callees, frozenset({COLLECTIVE})) is True:
                return True
        return False

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    def _concatenation(self, node: cst.Assign, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """``preds = torch.cat([preds, logits])`` (or ``logits if preds is None else torch.cat(...)``)
        in a loop over a loader: the running tensor grows by every batch's outputs (not a reset)."""
        name = dotted_name(target)
        loop = self.facts.loop
        if name is None or loop is None or not self._over_loader(loop) or not self.facts.outlives_iteration(target):
            return False
        parts = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        for part in parts:
            others = concatenated_onto(part, name, self.facts)
            if others and len(others) == 1:
                self._collected(node, name, others[0], id(loop))
                return True
        return False

    def _collected(self, node: cst.CSTNode, target: str, value: cst.BaseExpression, batches: int) -> None:
        """``value`` is kept in ``target`` once per batch (``batches``: the loop, or the hook that
        runs per batch): pending until the end, when the module's device moves are known."""
        output = self._classify(value, self._function_outputs())
        method_output = None if output is not None else self._method_output(value)
        if method_output is None and (output is None or not output.detached):
            return  # not an output, or still graph-carrying (ML101 reports that one)
        if method_output is not None:  # and is it graph-free where it is kept? (else ML101's finding)
            method_output = (*method_output, self.facts.in_no_grad or _call_chain(value).detached)
        self._pending.append((node, target, _text(value), batches, method_output))
        self._function_of[id(node)] = id(self.facts.function)
        self._collecting.add(id(self.facts.function))
        if self.facts.loop is not None and id(self.facts.loop) == batches:
            self._loop_context[batches] = (self.facts.loop, self.facts.function)
        self._schedule()

    def _note_filled(self, container: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """``results[idx].append(y_hat[idx])`` into a local of a plain function: the container
        holds model outputs (what it returns them in, see :meth:`visit_Return`)."""
        function = self.facts.function
        root = root_name(container)
        if root is None or root == "self" or function.class_info is not None or function is self.facts.module_scope:
            return
        binding = function.bindings.get(root)
        if binding is None or root in function.parameters:
            return
        if self._classify(value, self._function_outputs()) is not None:
            self._filled.setdefault(id(function), set()).add(root)

    def visit_Return(self, node: cst.Return) -> None:
        function = self.facts.function
        if node.value is None or function is self.facts.module_scope:
            return
        if function.class_info is not None:
            if self._classify(node.value, self._function_outputs()) is not None:
                self._returns_output.add(id(function))
            return
        # a plain function: its result, or a container it filled, alone or in the tuple it returns
        filled = self._filled.get(id(function), set())
        parts = [element.value for element in node.value.elements] if isinstance(node.value, cst.Tuple) \
            else [node.value]
        if any(dotted_name(part) in filled or self._classify(part, self._function_outputs()) is not None
               for part in parts):
            self._returns_output.add(id(function))

    def _method_output(self, value: cst.BaseExpression) -> "tuple[object, str] | None":
        """``task.predict(batch)``, ``self.forward(x)`` (also through a name bound to such a
        call): (the class's instance, or the class of ``self``; the method), to be checked at
        the end against what that method of a class of this file returns."""
        chain = _call_chain(value)
        if chain.on_cpu or chain.reduced:
            return None
        base = chain.base
        if isinstance(base, cst.Name):
            binding = self.facts.lookup(base.value)
            if binding is not None and isinstance(binding.node, cst.Call) and isinstance(binding.node.func, cst.Name):
                base = binding.node  # result_batch, latents = run_on_batch(...); result_batch[0][-1]
        if isinstance(base, cst.Call) and isinstance(base.func, cst.Name) and base.func.value in \
                self.facts.module_functions and self.facts.lookup(base.func.value) is not None:
            return self.facts.module_functions[base.func.value], ""  # a plain function of this module
        if isinstance(value, cst.Name):
            binding = self.facts.lookup(value.value)
            value = binding.node if binding is not None else None
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and isinstance(value.func.value, cst.Name)):
            return None
        method = value.func.attr.value
        receiver = value.func.value.value
        if receiver == "self":
            info = self.facts.class_info
            return (info, method) if info is not None else None
        binding = self.facts.lookup(receiver)
        if binding is None or binding.node is None:
            return None
        return binding.node, method

    def _returns_model_output(self, method_output: "tuple[object, str, bool]") -> bool:
        """Does the method return a model output without a graph where it is kept (kept under
        no_grad or detached, or the method runs with grad off itself)?"""
        bound_to, method, graph_free_here = method_output
        if isinstance(bound_to, cst.FunctionDef):  # a plain function of this module
            scope = self.facts.function_scopes.get(id(bound_to))
            if any(_backpropagated_as_a_loss(site.caller, name)
                   for site in self.facts.calls_into.get(id(bound_to), ()) for name in site.results):
                return False  # its result is what another call backpropagates (loss = forward_dict["loss"]): losses
        else:
            cls = bound_to if isinstance(bound_to, ClassInfo) else self.facts.instance_class(bound_to)
            scope = self.facts.find_method(cls, method) if cls is not None else None
        if scope is None or id(scope) not in self._returns_output:
            return False
        return graph_free_here or scope.entry_grad_mode is GradMode.OFF

    def _decide(self) -> None:
        reported: set[int] = set()
        for call in self._helper_calls:  # logs["z"].append(z.detach()) in a helper of the loop
            for append in self._helper_appends.get(call.callee, ()):
                output = call.outputs.get(append.value)
                if (output is None or append.container not in call.lasting or id(append.node) in reported
                        or not (append.detached or output.detached)
                        or (output.maybe_number and append.value_text == append.value)):
                    continue  # (kept as it is, an output that may be a number: not known to be a tensor)
                reported.add(id(append.node))
                self._pending.append((append.node, append.target, append.value_text, call.loop, None))
        for node, target, value_text, loop_id, method_output in self._pending:
            if not self._moves_to_device and loop_id not in self._hooks:
                continue  # a CPU-only script (Lightning puts a hook's batch on the module's device itself)
            if target in self._reset_in_loop.get(loop_id, ()):
                continue  # emptied or replaced within the loop: a bounded buffer
            if loop_id in self._by_behaviour and not _passes_over_data(self._by_behaviour[loop_id]):
                continue  # no name says it walks data, and its body does not show it
            if method_output is not None and not self._returns_model_output(method_output):
                continue
            if loop_id in self._decoding and not self._feeds_back(self._decoding[loop_id][0]):
                continue  # steps of something else than decoding (an episode, a sampler's schedule)
            if loop_id in self._decoding and _walks_positions(self._decoding[loop_id][0]):
                continue  # one position of a given input per step: together, one forward's outputs
            if loop_id in self._loop_context and _maps_a_given_list(*self._loop_context[loop_id], target):
                continue  # the outputs for the items the caller handed in, returned together
            if loop_id in self._loop_context and _stops_after_a_count(self._loop_context[loop_id][0]):
                continue  # for i, x in enumerate(loader): ... if i == n - 1: break: a few batches, on purpose
            if id(node) in self._function_of and target in self._numpy_on_host.get(self._function_of[id(node)], ()):
                continue  # y_preds.detach().numpy() after the loop: on the CPU (numpy() raises on a device tensor)
            if id(node) in self._function_of and self._gathered(self._function_of[id(node)], target):
                continue  # handed to a collective (all_gather across ranks): NCCL needs them on the device
            if id(node) in self._function_of and self._run_on_after(self._function_of[id(node)], target, loop_id):
                continue  # a feature bank the model is run on after the loop: it is needed on the device
            moved = f"{value_text}.cpu()" if len(value_text) <= 40 else ".cpu() on each"
            growing = ("through predict()" if loop_id in self._hooks
                       else "with every decoding step" if loop_id in self._decoding else "through the loop")
            batch = "step" if loop_id in self._decoding else "batch"
            ending = f"' of every {batch} on the device, growing {growing}"
            room = 100 - len(ending) - len("'' keeps '")  # for the list's name and the value
            named = _cut(target, max(room - min(len(value_text), 26), room // 2))
            self.report(
                node,
                f"'{named}' keeps '{_cut(value_text, room - len(named))}{ending}",
                help=f"move each batch off the device as you collect it ({moved}), or update a streaming metric "
                     f"per batch",
                needs_grad=False,
            )

    def _note_module_inputs(self, node: cst.Call) -> None:
        if id(self.facts.function) not in self._collecting and self.facts.loop is None:
            return  # nothing collected in this function so far, nor a loop that may: no bank to run on
        func = node.func
        module = func.value if isinstance(func, cst.Attribute) and func.attr.value == "forward" else func
        method = False
        if not self.facts.is_module_expr(module) and isinstance(func, cst.Attribute) \
                and self.facts.loop is not None and self.facts.is_module_expr(func.value):
            module, method = func.value, True  # decoder.set_prompt(prompt) in the loop: handed to the module
        if not self.facts.is_module_expr(module) or _is_loss_callee(module):
            return  # (a criterion run on the collected outputs computes a number: no reason to keep them there)
        names = frozenset(name for arg in node.args for name in names_in(arg.value))
        loops = frozenset(id(loop) for loop in self.facts.loops_in_function())
        self._module_inputs.setdefault(id(self.facts.function), (self.facts.function, []))[1].append(
            (names, loops, method))

    def _run_on_after(self, function: int, target: str, loop: int) -> bool:
        """Does a module call of ``function`` read ``target``: after the collecting loop
        (``model.text_encoder(encoder_hidden_states=image_feats[i])`` once the loop filled
        ``image_feats``), or in it (``prompt = all_tokens[reset:]; decoder.set_prompt(prompt)``:
        what was kept is the model's context)? Then the outputs are kept on the device to compute
        with there."""
        scope, calls = self._module_inputs.get(function, (None, ()))
        return any((loop in loops if method else True) and scope.derives_from(names, {target})
                   for names, loops, method in calls)

    def _is_device_move(self, node: cst.Call, method: str) -> bool:
        if method == "cuda":
            return not (self.facts.qualified_name(node.func) or "").startswith("torch.cuda")
        if method == "prepare":
            owner = dotted_name(node.func.value) or ""
            return "accelerator" in owner.lower()
        device = node.args[0].value if node.args and node.args[0].keyword is None else None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "device":
                device = arg.value
        return device is not None and self._is_accelerator(device)

    def _is_accelerator(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.SimpleString):
            value = node.evaluated_value
            return isinstance(value, str) and value.startswith(_ACCELERATOR_PREFIXES)
        if isinstance(node, cst.FormattedString):
            first = node.parts[0] if node.parts else None
            return isinstance(first, cst.FormattedStringText) and first.value.startswith(_ACCELERATOR_PREFIXES)
        if isinstance(node, cst.Call):
            if self.facts.qualified_name(node.func) == "torch.device":
                return bool(node.args) and self._is_accelerator(node.args[0].value)
            return False
        name = dotted_name(node)
        if name is None:
            return False
        last = name.rsplit(".", 1)[-1].lower()
        return any(word in last for word in _DEVICE_WORDS)

    VALID = [
        # every slot of the output rebound to a host copy before it is collected
        """
import torch


def evaluate(model, loader):
    model.eval()
    results = {"kp_3d": [], "verts": []}
    with torch.no_grad():
        for batch_input, batch_gt in loader:
            output = model(batch_input.cuda())
            for keys in output[0].keys():
                output[0][keys] = output[0][keys].detach().cpu().numpy()
            results["kp_3d"].append(output[0]["kp_3d"])
            results["verts"].append(output[0]["verts"])
    return results
""",
        # a feature bank: the image features are run through the model again after the loop (re-ranking)
        """
import torch


@torch.no_grad()
def evaluate(model, data_loader, text_feats, device):
    image_feats = []
    for image, _ in data_loader:
        image_feats.append(model.visual_encoder(image.to(device)))
    image_feats = torch.cat(image_feats)
    scores = []
    for i in range(image_feats.size(0)):
        scores.append(model.itm_head(image_feats[i], text_feats).cpu())
    return scores
""",
        # OpenMMLab's test mode returns per-image results on the CPU (numpy arrays, lists)
        """
import torch

def single_gpu_test(model, data_loader):
    model = model.cuda()
    model.eval()
    results = []
    for i, data in enumerate(data_loader):
        with torch.no_grad():
            result = model(return_loss=False, rescale=True, **data)
        results.append(result)
    return results
""",
        # kept on the device for a collective: the list goes to a helper that all-gathers it
        """
import torch
import torch.distributed as dist

def merge_distributed(chunks):
    merged = []
    for chunk in chunks:
        gathered = [torch.zeros_like(chunk) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, chunk)
        merged.extend(gathered)
    return torch.cat(merged)

def predict(model, loader, device):
    model.eval()
    predicts = []
    for batch in loader:
        with torch.no_grad():
            logits = model(batch.to(device))
        predicts.append(logits)
    return merge_distributed(predicts)
""",
        # each row moved to the CPU as it is kept; a per-batch buffer emptied every batch
        """
import torch
from torch import nn
from torch.utils.data import DataLoader

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.to("cuda")

    def forward(self, x):
        return {"embedding": self.proj(x)}

    def encode(self, rows):
        kept = []
        for batch in DataLoader(rows, batch_size=64):
            with torch.no_grad():
                out = self.forward(batch.to("cuda"))
                embeddings = out["embedding"]
                for emb in embeddings:
                    kept.append(emb.cpu())
        return kept

    def produce(self, loader, batch_size):
        # a bounded buffer: each output's rows kept until a batch of them is handed out
        kept = []
        for batch in loader:
            with torch.no_grad():
                outputs = self.forward(batch.to("cuda"))["embedding"]
            for out in outputs:
                kept.append(out)
            if len(kept) >= batch_size:
                yield kept[:batch_size]
                kept = kept[batch_size:]

    def first_samples(self, loader, n_samples):
        # the first few batches kept on purpose, to compare against later
        kept = []
        for i, x in enumerate(loader):
            with torch.no_grad():
                kept.append(self.forward(x.to("cuda"))["embedding"])
            if i == n_samples - 1:
                break
        return kept

    def per_sample_losses(self, loader):
        # one loss per sample (reduction="none"): the size of the labels, not of the outputs
        losses = []
        for x, y in loader:
            with torch.no_grad():
                out = self.proj(x.to("cuda"))
            losses.append(torch.nn.functional.cross_entropy(out, y.to("cuda"), reduction="none"))
        return torch.cat(losses).cpu()

    def norms(self, rows):
        result = []
        for batch in DataLoader(rows, batch_size=64):
            current = []
            with torch.no_grad():
                embeddings = self.forward(batch.to("cuda"))["embedding"]
                for emb in embeddings:
                    current.append(emb)
            result.append(torch.stack(current).norm().item())
        return result
""",
        # scores of the function's own candidates (a list it built itself), kept for topk: as
        # many as it made, not a pass over a loader
        """
import torch
from torch import nn

class Scorer(nn.Module):
    def forward(self, text, speech):
        return (text.float() * speech.float()).sum(-1)

class Reranker:
    def __init__(self, generator):
        self.generator = generator
        self.scorer = Scorer().cuda()

    @torch.no_grad()
    def rerank(self, text, rounds, k):
        text = text.cuda()
        samples = []
        for _ in range(rounds):
            samples.append(self.generator(text))
        scores = []
        for batch in samples:
            scores.append(self.scorer(text.repeat(batch.shape[0], 1), batch))
        return torch.cat(samples)[torch.topk(torch.cat(scores), k=k).indices]
""",
        # offsets into a list the caller handed in, under a name that reads like a loader
        """
import torch
class Encoder(torch.nn.Module):
    @torch.no_grad()
    def encode(self, texts, batch_size=32):
        embs = []
        loader = range(0, len(texts), batch_size)
        for start in loader:
            tokens = self.tokenizer(texts[start:start + batch_size]).to("cuda")
            embs.append(self(tokens))
        return torch.cat(embs)
""",
        # a detector's output as it comes (a list of per-image results): no tensor operation
        # shows it is a tensor to be split row by row
        """
import torch
def single_gpu_test(model, data_loader):
    model.eval()
    results, boxes = [], []
    for data in data_loader:
        with torch.no_grad():
            result = model(return_loss=False, rescale=True, **data)
        results.extend(result)
        boxes.extend(result["bbox_results"])
    return results, boxes
""",
        # moved to the CPU as collected
        """
import torch
def evaluate(model, val_loader, device):
    model.eval()
    preds, targets = [], []
    with torch.no_grad():
        for x, y in val_loader:
            out = model(x.to(device))
            preds.append(out.detach().cpu())
            targets.append(y)
    return torch.cat(preds), torch.cat(targets)
""",
        # reduced per batch; .item(), .numpy(), .tolist(), argmax
        """
import torch
def evaluate(model, loader):
    model.eval()
    correct, losses, probs, labels = 0, [], [], []
    with torch.no_grad():
        for images, targets in loader:
            images, targets = images.cuda(), targets.cuda()
            logits = model(images)
            correct += (logits.argmax(1) == targets).sum().item()
            losses.append(torch.nn.functional.cross_entropy(logits, targets).item())
            probs.append(logits.softmax(-1).numpy())
            labels.extend(logits.argmax(dim=1).tolist())
            probs.append(logits.argmax(dim=1))
    return correct
""",
        # a CPU-only script: nothing moves to an accelerator
        """
import torch
def embed(encoder, loader):
    feats = []
    with torch.no_grad():
        for batch in loader:
            feats.append(encoder(batch))
    return torch.cat(feats)
""",
        # outputs kept per epoch (bounded by the number of epochs), and per step in a helper
        """
import torch
def fit(model, train_loader, optimizer, epochs, device):
    history = []
    for epoch in range(epochs):
        for x, y in train_loader:
            loss = model(x.to(device), y.to(device))
            loss.backward()
            optimizer.step()
        history.append(loss.detach())
    return history
""",
        # the graph-carrying form is ML101's finding, not repeated here
        """
import torch
def predict(model, loader):
    outputs = []
    for x in loader:
        outputs.append(model(x.cuda()))
    return outputs
""",
        # Lightning's documented pattern: one step per call
        """
import torch
import lightning as L
class Model(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        preds = self(batch["x"].to(self.device))
        self.validation_step_outputs.append(preds)
""",
    ]

    VALID += [
        # a bounded buffer: emptied or sliced within the loop (video frames with a delay)
        """
import torch
@torch.inference_mode()
def propagate(model, session, frames, delay):
    buffer = []
    for frame_idx in frames_loader(frames):
        out = model(session=session, frame_idx=frame_idx.cuda())
        buffer.append(out)
        if len(buffer) > delay:
            yield buffer[0]
            buffer = buffer[1:]
""",
        # a progress bar over something no name shows to be data, whose body brings nothing onto
        # the device (a body that does, and runs a model, is a pass over data: see below)
        """
import torch
from tqdm import tqdm
@torch.no_grad()
def track(model, state, processing_order):
    state = state.to("cuda")
    results = []
    for frame_idx in tqdm(processing_order):
        results.append(model(state, frame_idx).detach())
    return results
""",
    ]

    VALID += [
        # steps that are not decoding: an episode (the environment makes the next input), samples
        # of a stochastic model on one input, a loop over layers; a decoding loop keeping tokens
        """
import torch
@torch.no_grad()
def rollout(policy, env, steps, device="cuda"):
    obs = env.reset()
    values = []
    for _ in range(steps):
        value, action = policy(torch.as_tensor(obs, device=device))
        values.append(value)
        obs, reward, done, info = env.step(action.cpu().numpy())
    return values

@torch.no_grad()
def mc_dropout(model, x, n):
    preds = []
    for _ in range(n):
        preds.append(model(x.cuda()))
    return torch.stack(preds)

@torch.no_grad()
def features(layers, x):
    feats = []
    h = x.cuda()
    for i in range(len(layers)):
        h = layers[i](h)
        feats.append(h)
    return feats

@torch.no_grad()
def greedy(model, ids, steps):
    ids, chosen = ids.cuda(), []
    for _ in range(steps):
        token = model(ids).logits[:, -1].argmax(-1, keepdim=True)
        chosen.append(token)
        ids = torch.cat([ids, token], dim=-1)
    return chosen
""",
        # the generated tokens only; scores asked for but moved to the CPU
        """
import torch
def answer(model, loader, device):
    tokens, scores = [], []
    for batch in loader:
        out = model.generate(**batch.to(device), max_new_tokens=64, output_scores=True,
                             return_dict_in_generate=True)
        tokens.append(out.sequences)
        scores.append(torch.stack(out.scores, 1).cpu())
        tokens.append(model.generate(**batch.to(device), max_new_tokens=64))
    return tokens, scores
""",
        # extended with numbers
        """
import torch
def evaluate(model, loader):
    preds, scores = [], []
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            preds.extend(logits.argmax(1).tolist())
            scores.extend(torch.sigmoid(logits).cpu().numpy())
    return preds, scores
""",
        # the helper copies the slice to the host; a history made anew for each batch
        """
import torch
from collections import defaultdict
def log_metrics(logs, z):
    logs["z"].append(z.detach().cpu()[::10])

def keep(history, z):
    history.append(z.detach())

def train(model, loader, optimizer, device="cuda"):
    logs = defaultdict(list)
    for batch in loader:
        z = model(batch.to(device))
        z.sum().backward()
        optimizer.step()
        log_metrics(logs, z)
        step_history = []
        keep(step_history, z)
    return logs
""",
        # concatenated on the CPU; a callback moving what it keeps to the CPU, or keeping one
        # number per batch; a predict hook that empties its buffer each batch
        """
import torch
from lightning.pytorch.callbacks import Callback
def prediction_loop(model, dataloader, device):
    preds = None
    with torch.no_grad():
        for inputs in dataloader:
            logits = model(inputs.to(device)).cpu()
            preds = logits if preds is None else torch.cat((preds, logits), dim=0)
    return preds

class CollectPredictions(Callback):
    def __init__(self):
        self.predictions, self.counts, self.last = [], [], []
    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        self.predictions.append(outputs.detach().cpu())
        self.counts.append(outputs.argmax(-1).sum().item())
        self.last = []
        self.last.append(outputs)
""",
        # a predict method that returns CPU numbers
        """
import torch
class Task:
    def __init__(self, model):
        self.model = model.cuda()

    @torch.no_grad()
    def predict(self, batch):
        return self.model(batch.cuda()).argmax(-1).cpu()

def run(task, loader):
    preds = []
    for batch in loader:
        preds.append(task.predict(batch))
    return preds
""",
    ]

    VALID += [
        # scoring the samples the caller handed in, a slice at a time, and returning the scores
        """
import torch
def reward_fn(rw_model, rw_tokenizer, samples, device="cuda"):
    scores_list = []
    for i in range(0, len(samples), 8):
        batch = rw_tokenizer(samples[i:i + 8], return_tensors="pt").to(device)
        with torch.no_grad():
            scores_list.append(rw_model(**batch)["chosen_end_scores"])
    return torch.cat(scores_list, dim=0)
""",
        # the model's forward returns a loss (one number per batch), not outputs
        """
import torch
import torch.nn.functional as F
from torch import nn
class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def forward(self, inputs, targets):
        return F.cross_entropy(self.proj(inputs), targets, reduction="sum")
model = GPT().cuda()
@torch.no_grad()
def calibrate(batches):
    losses = []
    for inputs, targets in batches:
        losses.append(model(inputs, targets).detach().float())
    return torch.stack(losses).mean().item()
""",
        # teacher-forced scoring with a cache: one step per position of the given tokens, the
        # logits together are what one forward over them returns
        """
import torch
def score(model, lang_x, device="cuda"):
    lang_x = lang_x.to(device)
    logits, past = [], None
    for token_idx in range(lang_x.shape[1]):
        with torch.inference_mode():
            out = model(lang_x[:, token_idx].reshape(-1, 1), past_key_values=past, use_cache=True)
        past = out.past_key_values
        logits.append(out.logits)
    return torch.cat(logits, dim=1)
""",
    ]

    INVALID = [
        # each row of a batch's embeddings appended: every row is a view of the whole batch output
        Invalid("""
import torch
from torch import nn
from torch.utils.data import DataLoader

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.to("cuda")

    def forward(self, x):
        return {"embedding": self.proj(x)}

    def encode(self, rows):
        kept = []
        for batch in DataLoader(rows, batch_size=64):
            with torch.no_grad():
                out = self.forward(batch.to("cuda"))
                embeddings = out["embedding"]
                for emb in embeddings:
                    kept.append(emb.detach())
        return kept
""", line=22),
        # the output of one of the object's own methods, through a name, kept under no_grad
        Invalid("""
import torch
from torch.utils.data import DataLoader
class BaseProcess:
    def __init__(self, classifier):
        self.device = torch.device("cuda")
        self.classifier = classifier.to(self.device)
    def forward(self, *inputs):
        return self.classifier(*inputs)
    def predict(self, dataset):
        predictions = []
        with torch.no_grad():
            for batch in DataLoader(dataset, batch_size=64):
                outputs = self.forward(batch.to(self.device))
                predictions.append(outputs)
        return torch.cat(predictions).cpu().numpy()
""", line=15),
        # per-element losses (reduction="none") are the size of the outputs
        Invalid("""
import torch
import torch.nn.functional as F
from torch import nn
class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def forward(self, inputs, targets):
        return F.cross_entropy(self.proj(inputs), targets, reduction="none")
model = GPT().cuda()
@torch.no_grad()
def calibrate(batches):
    losses = []
    for inputs, targets in batches:
        losses.append(model(inputs, targets).detach().float())
    return torch.cat(losses).mean().item()
""", line=16),
        # a running concatenation of each batch's logits (the HF Trainer's old prediction loop)
        Invalid("""
import torch
def prediction_loop(model, dataloader, device):
    model.eval()
    preds = None
    for inputs in dataloader:
        inputs = {k: v.to(device) for k, v in inputs.items()}
        with torch.no_grad():
            logits = model(**inputs)
        preds = logits if preds is None else torch.cat((preds, logits), dim=0)
    return preds.cpu()
""", line=10),
        # a Lightning callback keeping what trainer.predict() hands each batch (Lightning itself
        # moves the predictions it returns to the CPU)
        Invalid("""
from lightning.pytorch.callbacks import Callback
class CollectPredictions(Callback):
    def __init__(self):
        self.predictions = []
    def on_predict_epoch_start(self, trainer, pl_module):
        self.predictions = []
    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        prediction = outputs["prediction"] if isinstance(outputs, dict) else outputs
        self.predictions.append(prediction)
""", line=10),
        # a decoding loop keeping every step's logits: the model is fed the sequence its own
        # tokens grow, or the cache its output hands back
        Invalid("""
import torch
@torch.inference_mode()
def generate(model, input_ids, max_new_tokens, device="cuda"):
    input_ids = input_ids.to(device)
    scores = []
    for _ in range(max_new_tokens):
        logits = model(input_ids).logits[:, -1, :]
        scores.append(logits)
        next_token = torch.multinomial(torch.softmax(logits, -1), 1)
        input_ids = torch.cat([input_ids, next_token], dim=-1)
    return input_ids, scores
""", line=9),
        Invalid("""
import torch
@torch.no_grad()
def generate_cached(model, input_ids, steps):
    past, tokens, all_logits = None, [], []
    token = input_ids.cuda()
    while len(tokens) < steps:
        out = model(token, past_key_values=past)
        past = out.past_key_values
        all_logits.append(out.logits)
        token = out.logits[:, -1].argmax(-1, keepdim=True)
        tokens.append(token)
    return tokens
""", line=10),
        # generate() asked for every step's scores, kept for the whole loader
        Invalid("""
import torch
def score_answers(model, tokenizer, loader, device):
    results = []
    for batch in loader:
        out = model.generate(**batch.to(device), max_new_tokens=64, output_scores=True,
                             return_dict_in_generate=True)
        results.append(out)
    return results
""", line=8),
        # a list extended with a tensor, row by row (no accelerator needed: each row is a tensor
        # object viewing the batch's whole storage)
        Invalid("""
import torch
def evaluate(model, loader):
    model.eval()
    preds = []
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            preds.extend(logits.argmax(1))
    return preds
""", line=9),
        # a logging helper the training loop calls every step keeps a detached slice of a model
        # output in the history it is handed (a view keeps the whole batch's storage)
        Invalid("""
import torch
from collections import defaultdict
def log_metrics(logs, z, loss):
    logs["loss"].append(loss.item())
    logs["z"].append(z.detach()[::10])

def train(model, loader, criterion, optimizer, epochs, device="cuda"):
    logs = defaultdict(list)
    for epoch in range(epochs):
        for batch in loader:
            x = batch.to(device)
            z, x_hat = model(x)
            loss = criterion(x, x_hat)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            log_metrics(logs, z, loss)
    return logs
""", line=6),
        # predictions from a method of a class of this module
        Invalid("""
import torch
from torch import nn
class Task:
    def __init__(self, model: nn.Module, device):
        self.model = model.to(device)
        self.device = device

    @torch.no_grad()
    def predict(self, batch):
        logits = self.model(batch["x"].to(self.device))
        return logits.softmax(-1)

def predict_all(model, test_loader, device):
    task = Task(model, device)
    outputs = []
    for batch in test_loader:
        outputs.append(task.predict(batch))
    return torch.cat(outputs)
""", line=18),
        Invalid("""
import torch
def validate(model, val_loader, device):
    model.eval()
    all_logits, all_labels = [], []
    for images, labels in val_loader:
        images = images.to(device)
        logits = model(images)
        all_logits.append(logits.detach())
        all_labels.append(labels)
    return torch.cat(all_logits), torch.cat(all_labels)
""", line=9),
        # under no_grad, outputs appended as they are
        Invalid("""
import torch
@torch.no_grad()
def extract_features(backbone, loader):
    features = []
    for batch in loader:
        feats = backbone(batch["pixel_values"].cuda())
        features.append(feats)
    return torch.cat(features)
""", line=8),
        # an elementwise function of the output, detached, in a tqdm loop
        Invalid("""
import torch
from tqdm import tqdm
def predict(net, test_loader):
    scores = []
    for x, _ in tqdm(test_loader):
        x = x.to("cuda", non_blocking=True)
        scores.append(torch.sigmoid(net(x)).detach())
    return torch.cat(scores)
""", line=8),
        # a detached output assigned first, then collected
        Invalid("""
import torch
def collect(model, dataloader):
    embeddings = []
    for step, batch in enumerate(dataloader):
        batch = {k: v.to("cuda") for k, v in batch.items()}
        out = model(**batch).last_hidden_state.detach()
        embeddings.append(out)
    return embeddings
""", line=8),
    ]

    # A pass over data is told by what the loop does, whatever its iterable is called: it brings a
    # value onto the device every iteration and runs a module on it (in its body or in a helper).
    INVALID += [
        # one frame at a time: the helper runs the model and returns its outputs in containers
        Invalid("""
import torch
def run_on_batch(inputs, net, n_iters):
    results = {idx: [] for idx in range(inputs.shape[0])}
    y_hat = inputs
    for _ in range(n_iters):
        y_hat = net(y_hat)
        for idx in range(inputs.shape[0]):
            results[idx].append(y_hat[idx])
    return results, y_hat

def run_inference(input_images, input_paths, net, transform):
    results = {"images": []}
    for image, path in zip(input_images, input_paths):
        results["images"].append(image)
        with torch.no_grad():
            result_batch, _ = run_on_batch(transform(image).unsqueeze(0).cuda(), net, 3)
            results["images"].append(result_batch[0][-1])
    return results
""", line=18),
        # frames moved to the device and run through the model in the body
        Invalid("""
import torch
@torch.no_grad()
def invert(frames, encoder):
    latents = []
    for frame in frames:
        latents.append(encoder(frame.cuda()))
    return latents
""", line=7),
        # a helper whose outputs the training step computes its loss from (not a loss itself)
        Invalid("""
import torch
def apply_model(model, x_num, mixup=False):
    return model(x_num.cuda(), mixup=mixup)

def train(model, loss_fn, optimizer, loader):
    for x_num, y in loader:
        preds, masks = apply_model(model, x_num, mixup=True)
        loss = loss_fn(preds, y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

@torch.no_grad()
def evaluate(model, loader):
    predictions = []
    for x_num, y in loader:
        predictions.append(apply_model(model, x_num))
    return torch.cat(predictions).cpu().numpy()
""", line=18),
        # rebound in one branch only: on the other path the name still holds the device output
        Invalid("""
import torch
@torch.no_grad()
def extract(loader, model, gather, world_size):
    feats = []
    for inputs in loader:
        feat = model(inputs.cuda(non_blocking=True))
        if world_size > 1:
            feat = gather(feat)
        feats.append(feat)
    return feats
""", line=10),
    ]

    VALID += [
        # what is kept is fed back to the model as its context (a transcriber's prompt)
        """
import torch
@torch.no_grad()
def transcribe(model, decoder, segments, device):
    all_tokens = []
    for segment in segments:
        encoder_out = model(segment.to(device))
        decoder.set_prompt(all_tokens[-224:])
        tokens = decoder(encoder_out)
        all_tokens.append(tokens[0])
    return all_tokens
""",
        # moved off the device in a branch the caller chooses (numpy out, or tensors kept on purpose)
        """
import torch
@torch.no_grad()
def encode(model, loader, convert_to_numpy=True):
    kept = []
    for features in loader:
        emb = model(features.cuda()).detach()
        if convert_to_numpy:
            emb = emb.cpu()
        kept.append(emb)
    return kept
""",
        # rebound on every path to a CPU copy
        """
import torch
@torch.no_grad()
def extract(loader, model):
    feats = []
    for inputs in loader:
        feat = model(inputs.cuda(non_blocking=True))
        feat = feat.cpu()
        feats.append(feat)
    return feats
""",
    ]


    VALID += [
        # the same frame loop keeping CPU copies
        # joined and all-gathered across ranks: NCCL needs them on the device
        """
import torch
import torch.distributed as dist
@torch.no_grad()
def latent_spread(vae, train_queue, world_size):
    eps_list = []
    for x in train_queue:
        eps_list.append(vae(x.cuda()).detach())
    mine = torch.cat(eps_list, dim=0)
    gathered = [torch.zeros_like(mine)] * world_size
    dist.all_gather(gathered, mine)
    return torch.cat(gathered).cpu()
""",
        # a transformers model given labels returns the loss first: one number per chunk
        """
import torch
def perplexity(model, encodings, stride, device):
    nlls = []
    for i in range(0, encodings.input_ids.size(1), stride):
        input_ids = encodings.input_ids[:, i:i + stride].to(device)
        with torch.no_grad():
            outputs = model(input_ids, labels=input_ids.clone())
            neg_log_likelihood = outputs[0] * stride
        nlls.append(neg_log_likelihood)
    return torch.exp(torch.stack(nlls).mean()).item()
""",
        # a few vectors the function draws itself, per image: not a pass over data
        """
import numpy as np
import torch
@torch.no_grad()
def style_mix(net, image, n_outputs):
    vecs = np.random.randn(n_outputs, 512).astype("float32")
    outputs = []
    for vec in vecs:
        outputs.append(net(image, inject=torch.from_numpy(vec).to("cuda")))
    return outputs
""",
        # a helper whose result the training loop backpropagates returns losses, not outputs
        """
import torch
def forward_pass(data, policy):
    qpos, image = data
    return policy(qpos.cuda(), image.cuda())

def train(policy, optimizer, train_loader, val_loader):
    with torch.inference_mode():
        epoch_dicts = []
        for data in val_loader:
            epoch_dicts.append(forward_pass(data, policy))
    for data in train_loader:
        forward_dict = forward_pass(data, policy)
        loss = forward_dict["loss"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return epoch_dicts
""",
        """
import torch
def run_on_batch(inputs, net):
    results = [net(inputs)]
    return results

def run_inference(input_images, net):
    kept = []
    for image in input_images:
        with torch.no_grad():
            result_batch = run_on_batch(image.unsqueeze(0).cuda(), net)
            kept.append(result_batch[-1].cpu())
    return kept
""",
        # a few fixed inputs (a literal), and the candidates the function built itself
        """
import torch
@torch.no_grad()
def probe(encoder, a, b):
    outs = []
    for frame in (a, b):
        outs.append(encoder(frame.cuda()))
    candidates = [a, b, a + b]
    best = []
    for frame in candidates:
        best.append(encoder(frame.cuda()))
    return outs, best
""",
        # a value moved to the device but no module run on it: the loop only stages data
        """
import torch
def stage(frames):
    staged = []
    for frame in frames:
        staged.append(frame.cuda(non_blocking=True))
    return staged
""",
    ]


@dataclass
class _Chain:
    base: cst.BaseExpression
    detached: bool = False
    on_cpu: bool = False
    reduced: bool = False
    converted: bool = False  # .tolist() / .numpy() / .item(): no tensor any more


def _call_chain(value: cst.BaseExpression) -> _Chain:
    """Peel ``x.detach().float()[0].logits`` down to ``x``, noting what the chain does."""
    chain = _Chain(value)
    node = value
    while True:
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not _is_plain_reference(node.func)
                and node.func.attr.value in _CHAIN_METHODS):
            method = node.func.attr.value
            chain.converted |= method in _CONVERTING
            if method in ("detach", "detach_"):
                chain.detached = True
            elif method in _CPU_METHODS or (method == "to" and _to_cpu(node)):
                chain.on_cpu = True
            elif method in _REDUCING:
                chain.reduced = True
            node = node.func.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _is_plain_reference(node.func):
            # torch.argmax(out, 1) / torch.cat(...): a function, not a method of the output
            name = node.func.attr.value
            if name in _REDUCING:
                chain.reduced = True
                break
            if name in _CPU_METHODS:
                chain.on_cpu = True
                break
            break
        elif isinstance(node, cst.Attribute):
            chain.detached |= node.attr.value == "data"  # outputs.data: the tensor without its graph
            node = node.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        else:
            break
    chain.base = node
    return chain


def _is_plain_reference(func: cst.Attribute) -> bool:
    """``torch.sigmoid`` / ``F.softmax``: a module-level function, not a method call on a value."""
    root = func.value
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value in ("torch", "F", "np", "numpy", "nn", "functional")


def _to_cpu(call: cst.Call) -> bool:
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.SimpleString) and value.evaluated_value == "cpu":
            return True
        if isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.SimpleString) \
                and value.args[0].value.evaluated_value == "cpu":
            return True
        if dotted_name(value) in ("cpu", "cpu_device"):
            return True
    return False


def _mmcv_test_call(call: cst.Call) -> bool:
    """``model(return_loss=False, rescale=True, **data)``: the test mode of OpenMMLab's models
    (mmdet, mmseg, mmdet3d), whose results are per-image numpy arrays and lists on the CPU."""
    return any(arg.keyword is not None and arg.keyword.value == "return_loss" and isinstance(arg.value, cst.Name)
               and arg.value.value == "False" for arg in call.args)


def _returned_values(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """What the function's own ``return`` statements return (not those of nested functions)."""
    found: list[cst.BaseExpression] = []

    class _Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_Return(self, node: cst.Return) -> None:
            if node.value is not None:
                found.append(node.value)

    function.visit(_Returns())
    return found


# Methods that keep a tensor on its device (and so on the CPU, for ``.numpy()`` to work).
_KEEPING_DEVICE = frozenset({"detach", "contiguous", "float", "double", "half", "long", "int", "view", "reshape",
                             "squeeze", "unsqueeze", "permute", "transpose", "flatten", "clone", "data"})


def _numpy_without_moving(receiver: cst.BaseExpression) -> str | None:
    """The name ``receiver`` of ``.numpy()`` reads through methods that keep the device
    (``y_preds.detach().numpy()``: ``y_preds``); None when it is moved on the way (``.cpu()``)."""
    while True:
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                and receiver.func.attr.value in _KEEPING_DEVICE:
            receiver = receiver.func.value
        elif isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            receiver = receiver.value
        else:
            break
    return dotted_name(receiver) if isinstance(receiver, (cst.Name, cst.Attribute)) else None


def _is_loss_callee(func: cst.BaseExpression) -> bool:
    name = (dotted_name(func) or "").lower()
    return "loss" in name or "criterion" in name


def _walks_loader(loop: Loop, first_values: dict[str, cst.BaseExpression]) -> bool:
    """A ``for`` loop whose iterable names a loader, a dataset or batches, unless that name is a
    list this function builds itself (first bound here to ``[]``: its own candidates, as many as
    it made, not a pass over data) or a ``range`` of offsets (``loader = range(0, n, bs)``)."""
    node = loop.node
    if not isinstance(node, cst.For):
        return False
    names = names_in(node.iter)
    if any("epoch" in name.lower() for name in names):
        return False
    loaders = [name for name in names if any(word in name.lower() for word in _LOADER_WORDS)]
    return any(not _is_list_display(first_values.get(name)) and not _is_range(first_values.get(name))
               for name in loaders)


def _backpropagated_as_a_loss(caller: FunctionScope, name: str) -> bool:
    """Is what ``name`` holds itself backpropagated by ``caller``, whole (``out.backward()``) or
    through constant slots (``loss = out["loss"] / k; loss.backward()``), not merely something
    computed from it (``loss_fn(out, y).backward()``: ``out`` is an output)?"""
    if name in caller.backward_places:
        return True
    return bool(caller.backpropagated_slots(name))


def _reads_the_loss(value: cst.BaseExpression) -> bool:
    """``out[0]`` or ``out.loss`` (with tensor methods after it): the first element of what a
    model given ``labels=`` returns."""
    node = value
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _CHAIN_METHODS:
        node = node.func.value
    if isinstance(node, cst.Attribute):
        return node.attr.value == "loss" and isinstance(node.value, (cst.Name, cst.Attribute))
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = node.slice[0].slice.value
        return isinstance(index, cst.Integer) and index.value == "0" and isinstance(node.value, (cst.Name, cst.Attribute))
    return False


def _made_here(value: cst.BaseExpression | None, facts) -> bool:
    """Values the function makes itself rather than reads: a list display, or an array or tensor
    a numpy/torch factory draws (``np.random.randn(n, 512)``, ``torch.linspace(0, 1, k)``)."""
    if _is_list_display(value) or isinstance(value, (cst.ListComp, cst.Tuple)):
        return True
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call):
        value = value.func.value  # np.random.randn(n, 512).astype("float32")
    if not isinstance(value, cst.Call):
        return False
    qualified = facts.qualified_name(value.func) or ""
    return qualified.startswith(("numpy.random.", "torch.rand", "torch.linspace", "torch.arange", "numpy.linspace",
                                 "numpy.arange", "torch.zeros", "torch.ones", "numpy.zeros", "numpy.ones"))


def _may_pass_over_data(loop: Loop, first_values: dict[str, cst.BaseExpression], facts) -> bool:
    """Can ``loop`` be a pass over data although no name says so: a ``for`` loop, not over a
    literal or the parts of one value, not a count inside a module's forward, no epoch loop, not
    over a list the function builds itself (its own candidates)?"""
    node = loop.node
    if type(node) is not cst.For or loop.bounded or loop.over_parts or loop.counts_in_module_method \
            or loop.mentions_epoch:
        return False
    return not any(_made_here(first_values.get(name), facts) for name in names_in(node.iter))


def _passes_over_data(loop: Loop) -> bool:
    """Once the module is walked: does such a loop bring a value onto the device in its body
    (``x.cuda()``, ``x.to(device)``) and run a module, in its body or in what it calls? Then it
    is a pass over data whatever its iterable is called (``for image, path in zip(images, paths)``),
    unless each iteration runs a step loop of its own (an epoch)."""
    if not loop.moves_to_device or loop.contains_step_loop or loop.bounded:
        return False
    return loop.runs_model or bool(loop.callees_work is not None and loop.callees_work())


def _is_range(value: cst.BaseExpression | None) -> bool:
    """``range(...)``: the name counts (``loader = range(0, len(text), bs)``), it is no loader."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "range"


def _is_list_display(value: cst.BaseExpression | None) -> bool:
    """``[]``, ``[a, b]`` or ``list()``."""
    return isinstance(value, cst.List) or (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list"
        and not value.args)


# generate() arguments that make it return per-step tensors (scores, logits, attention maps).
_PER_STEP_OUTPUTS = frozenset({"output_scores", "output_logits", "output_attentions", "output_hidden_states"})


def _generates_scores(call: cst.Call, facts) -> bool:
    """``model.generate(..., output_scores=True)``: a generation (run under no-grad) that returns
    a tensor per generated token besides the tokens (read ``.sequences`` alone and nothing is)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "generate" and facts.is_module_expr(func.value)):
        return False
    return any(arg.keyword is not None and arg.keyword.value in _PER_STEP_OUTPUTS
               and isinstance(arg.value, cst.Name) and arg.value.value == "True" for arg in call.args)


def _reads_sequences(value: cst.BaseExpression) -> bool:
    """``out.sequences`` (also sliced): the generated tokens of a generation's output."""
    while isinstance(value, cst.Subscript):
        value = value.value
    return isinstance(value, cst.Attribute) and value.attr.value == "sequences"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 3, 4)] + "..."


def _text(node: cst.CSTNode) -> str:
    return " ".join(cst.Module(body=()).code_for_node(node).split())


def _predict_hook_values(function: FunctionScope) -> tuple[str, ...]:
    """The parameters of a hook Lightning runs once per batch of ``trainer.predict()`` that hold
    what it hands over (the step's outputs, the batch), on the module's device and computed
    under inference mode; () for any other function. A callback's ``on_predict_batch_end(trainer,
    pl_module, outputs, batch, ...)``, a LightningModule's ``on_predict_batch_end(outputs, batch,
    ...)`` and ``predict_step(batch, ...)``."""
    info = function.class_info
    if info is None or function.name not in ("on_predict_batch_end", "predict_step"):
        return ()
    parameters = function.parameters
    if function.name == "predict_step":
        return parameters[:1] if info.is_lightning else ()
    if info.kinds.lightning_callback:
        return parameters[2:4]
    return parameters[:2] if info.is_lightning else ()


def _maps_a_given_list(loop: Loop, function: FunctionScope, target: str) -> bool:
    """``for i in range(0, len(samples), bs)`` over a list the function was given, collecting
    into ``target`` what it then returns (``torch.cat(scores)``): the function maps the caller's
    items to their outputs; what it keeps is its result, bounded by what it was handed."""
    node = loop.node
    if not (isinstance(node, cst.For) and isinstance(node.iter, cst.Call) and isinstance(node.iter.func, cst.Name)
            and node.iter.func.value == "range"):
        return False
    sized = [arg.value.args[0].value for arg in node.iter.args if isinstance(arg.value, cst.Call)
             and isinstance(arg.value.func, cst.Name) and arg.value.func.value == "len" and arg.value.args]
    given = any(isinstance(value, cst.Name) and value.value in function.parameters for value in sized)
    return given and "." not in target and function.derives_from(function.returned_names, {target})


def _stops_after_a_count(loop: Loop) -> bool:
    """``for i, x in enumerate(loader):`` whose body breaks out under a test of ``i`` (``if i ==
    n_samples - 1: break``): it keeps the first few batches, not the loader's."""
    node = loop.node
    if not isinstance(node, cst.For) or not isinstance(node.iter, cst.Call) \
            or dotted_name(node.iter.func) != "enumerate" or not isinstance(node.target, cst.Tuple) \
            or not node.target.elements or not isinstance(node.target.elements[0].value, cst.Name):
        return False
    counter = node.target.elements[0].value.value
    for statement in node.body.body:
        if isinstance(statement, cst.If) and counter in names_in(statement.test) and any(
                isinstance(small, cst.Break) for line in statement.body.body
                if isinstance(line, cst.SimpleStatementLine) for small in line.body):
            return True
    return False


def _walks_positions(loop: Loop) -> bool:
    """``for t in range(x.shape[1])`` / ``range(x.size(1))``: a pass over the positions of an
    input the function was given (teacher-forced scoring with a cache). What it keeps per step
    adds up to the outputs of one forward over that input, bounded by the input, not by a run."""
    node = loop.node
    if not (isinstance(node, cst.For) and isinstance(node.iter, cst.Call) and len(node.iter.args) == 1):
        return False
    bound = node.iter.args[0].value
    if isinstance(bound, cst.Subscript) and isinstance(bound.value, cst.Attribute):
        return bound.value.attr.value == "shape"
    return (isinstance(bound, cst.Call) and isinstance(bound.func, cst.Attribute)
            and bound.func.attr.value == "size" and len(bound.args) == 1)


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_names(element.value)]
    name = dotted_name(target)
    return [name] if name is not None else []


def _peel_subscripts(value: cst.BaseExpression) -> cst.BaseExpression:
    """``out["boxes"][0]`` down to ``out``; anything else as it is."""
    while isinstance(value, (cst.Subscript, cst.Attribute)):
        value = value.value
    return value
