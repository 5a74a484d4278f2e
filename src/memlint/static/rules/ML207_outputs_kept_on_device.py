"""ML207 outputs-kept-on-device: model outputs are collected on the accelerator for an
epoch-end metric.

``preds.append(out.detach())`` in a loop over a whole loader keeps every batch's outputs
(logits, embeddings, masks) in GPU memory until the epoch ends: memory grows through the
epoch and the evaluation that comes last runs out of memory on a dataset that trains fine.
Move each batch to the CPU as it is collected (``out.detach().cpu()``), or update a
streaming metric (``torchmetrics``, running sums) per batch.

Flagged: appending (``append`` / ``extend``) to a list that outlives the iteration, in a
loop over a loader (its iterable names a loader, dataset, batches...; not an epoch loop), a
model output that was detached (``.detach()``) or computed under ``torch.no_grad()`` /
``inference_mode()``, when the module moves data to an accelerator (``.cuda()``,
``.to(device)``, ``device="cuda"``). Not flagged: ``.cpu()``, ``.item()``, ``.numpy()``,
``.tolist()``, ``.to("cpu")`` anywhere in the stored value; values reduced per batch
(``argmax``, ``sum``, ``mean``, a loss); a module that never moves data off the CPU;
appending a graph-carrying output (that is ML101's finding, not repeated here); outputs
kept in Lightning's ``validation_step`` (one step per call, the pattern Lightning's own
documentation uses); a list emptied or replaced within the same loop (a bounded buffer).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import (
    GRAPH_ENDING_METHODS, TENSOR_METHODS, FunctionScope, Loop, concatenated_onto, dotted_name, names_in,
)
from memlint.static.rule import Invalid, Rule

_CPU_METHODS = frozenset({"cpu", "item", "numpy", "tolist", "__float__"})
# Methods and functions whose result is a per-batch reduction (small), not the outputs.
_REDUCING = frozenset({"argmax", "argmin", "sum", "mean", "max", "min", "eq", "ne", "gt", "lt", "ge", "le",
                       "std", "var", "norm", "all", "any", "count_nonzero", "nansum", "nanmean", "size",
                       "numel", "prod", "median", "equal", "allclose", "float_power"})
_LOADER_WORDS = ("loader", "dataset", "data", "batches", "samples")
_DEVICE_WORDS = ("device", "cuda", "gpu", "rank", "accelerator")
_ACCELERATOR_PREFIXES = ("cuda", "mps", "xpu", "npu", "hpu")
# Methods of a tensor that the chain of a collected value is peeled through (``self.model(x)``
# is a module call, not a method of ``self``).
_CHAIN_METHODS = TENSOR_METHODS | GRAPH_ENDING_METHODS | _CPU_METHODS | _REDUCING | {"detach", "detach_"}
# Methods that run a model and hand back its outputs (checked against what the method returns).
_PREDICTING_METHODS = frozenset({"predict", "predict_step", "inference", "infer", "extract_features",
                                 "forward_features", "embed", "encode"})


@dataclass
class _Output:
    detached: bool


class OutputsKeptOnDevice(Rule):
    code = "ML207"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._outputs: dict[int, dict[str, _Output]] = {}  # function id -> name -> output facts
        self._moves_to_device = False
        self._pending: list[tuple[cst.Call, str, str, int]] = []
        self._reset_in_loop: dict[int, set[str]] = {}  # loop id -> lists rebound or cleared in it
        self._returns_output: set[int] = set()  # id() of functions returning a model output, not on the CPU
        self._hooks: set[int] = set()  # id() of Lightning predict hooks that keep what they are given
        self._scheduled = False

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

    def visit_Assign(self, node: cst.Assign) -> None:
        grown = len(node.targets) == 1 and self._concatenation(node, node.targets[0].target, node.value)
        for target in node.targets:
            for name in _target_names(target.target):
                if not grown:
                    self._note_reset(name)
        outputs = self._function_outputs()
        kind = self._classify(node.value, outputs)
        for target in node.targets:
            for name in _target_names(target.target):
                if kind is None or "loss" in name.lower():
                    outputs.pop(name, None)
                else:
                    outputs[name] = kind

    def _classify(self, value: cst.BaseExpression, outputs: dict[str, _Output]) -> _Output | None:
        """An ``_Output`` if ``value`` holds (part of) a model output kept at full size."""
        if isinstance(value, cst.IfExp):  # out["prediction"] if mode == "prediction" else out
            kinds = [self._classify(branch, outputs) for branch in (value.body, value.orelse)]
            kinds = [kind for kind in kinds if kind is not None]
            return _Output(all(kind.detached for kind in kinds)) if kinds else None
        chain = _call_chain(value)
        if chain.on_cpu or chain.reduced:
            return None
        base = chain.base
        detached = chain.detached or self.facts.in_no_grad
        if isinstance(base, cst.Call):
            func = base.func
            if self.facts.is_module_expr(func) and not _is_loss_callee(func):
                return _Output(detached)
            # torch.sigmoid(out), F.softmax(out, -1): an elementwise function of an output
            qualified = self.facts.qualified_name(func) or ""
            if qualified.startswith("torch.") and base.args:
                inner = self._classify(base.args[0].value, outputs)
                if inner is not None:
                    return _Output(detached or inner.detached)
            return None
        name = dotted_name(base)
        if name is not None and name in outputs:
            return _Output(detached or outputs[name].detached)
        return None

    # ----- where data goes ---------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
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
        if loop is not None and _walks_loader(loop) and facts.outlives_iteration(func.value):
            batches = id(loop)
        elif _predict_hook_values(facts.function) and facts.outlives_call(func.value):
            batches = id(facts.function)  # Lightning calls it once per batch of the predict loop
            self._hooks.add(batches)
        else:
            return
        value = positional[0]
        if isinstance(value, (cst.List, cst.Tuple)) and method == "extend":
            return
        target = dotted_name(func.value) or " ".join(cst.Module(body=()).code_for_node(func.value).split())
        self._collected(node, target, value, batches)

    def _concatenation(self, node: cst.Assign, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """``preds = torch.cat([preds, logits])`` (or ``logits if preds is None else torch.cat(...)``)
        in a loop over a loader: the running tensor grows by every batch's outputs (not a reset)."""
        name = dotted_name(target)
        loop = self.facts.loop
        if name is None or loop is None or not _walks_loader(loop) or not self.facts.outlives_iteration(target):
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
        value_text = " ".join(cst.Module(body=()).code_for_node(value).split())
        self._pending.append((node, target, value_text, batches, method_output))
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    def visit_Return(self, node: cst.Return) -> None:
        function = self.facts.function
        if (node.value is not None and function.name in _PREDICTING_METHODS and function.class_info is not None
                and self._classify(node.value, self._function_outputs()) is not None):
            self._returns_output.add(id(function))

    def _method_output(self, value: cst.BaseExpression) -> tuple[cst.CSTNode, str] | None:
        """``task.predict(batch)``: (what ``task`` is bound to, "predict"), to be checked at the
        end against what the method of that class returns."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in _PREDICTING_METHODS and isinstance(value.func.value, cst.Name)):
            return None
        binding = self.facts.lookup(value.func.value.value)
        if binding is None or binding.node is None:
            return None
        return binding.node, value.func.attr.value

    def _returns_model_output(self, method_output: tuple[cst.CSTNode, str]) -> bool:
        bound_to, method = method_output
        cls = self.facts.instance_class(bound_to)
        scope = self.facts.find_method(cls, method) if cls is not None else None
        return scope is not None and id(scope) in self._returns_output

    def _decide(self) -> None:
        for node, target, value_text, loop_id, method_output in self._pending:
            if not self._moves_to_device and loop_id not in self._hooks:
                continue  # a CPU-only script (Lightning puts a hook's batch on the module's device itself)
            if target in self._reset_in_loop.get(loop_id, ()):
                continue  # emptied or replaced within the loop: a bounded buffer
            if method_output is not None and not self._returns_model_output(method_output):
                continue
            shown = value_text if len(value_text) <= 26 else value_text[:23] + "..."
            moved = f"{value_text}.cpu()" if len(value_text) <= 40 else ".cpu() on each"
            growing = "through trainer.predict()" if loop_id in self._hooks else "through the loop"
            self.report(
                node,
                f"'{target}' keeps '{shown}' of every batch on the device, growing {growing}",
                help=f"move each batch off the device as you collect it ({moved}), or update a streaming metric "
                     f"per batch",
                needs_grad=False,
            )

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
        # a progress bar over something that is not a loader
        """
import torch
from tqdm import tqdm
@torch.no_grad()
def track(model, processing_order):
    results = []
    for frame_idx in tqdm(processing_order):
        results.append(model(frame_idx.to("cuda")).detach())
    return results
""",
    ]

    VALID += [
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

    INVALID = [
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


@dataclass
class _Chain:
    base: cst.BaseExpression
    detached: bool = False
    on_cpu: bool = False
    reduced: bool = False


def _call_chain(value: cst.BaseExpression) -> _Chain:
    """Peel ``x.detach().float()[0].logits`` down to ``x``, noting what the chain does."""
    chain = _Chain(value)
    node = value
    while True:
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not _is_plain_reference(node.func)
                and node.func.attr.value in _CHAIN_METHODS):
            method = node.func.attr.value
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


def _is_loss_callee(func: cst.BaseExpression) -> bool:
    name = (dotted_name(func) or "").lower()
    return "loss" in name or "criterion" in name


def _walks_loader(loop: Loop) -> bool:
    node = loop.node
    if not isinstance(node, cst.For):
        return False
    names = [name.lower() for name in names_in(node.iter)]
    if any("epoch" in name for name in names):
        return False
    return any(word in name for name in names for word in _LOADER_WORDS)


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


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_names(element.value)]
    name = dotted_name(target)
    return [name] if name is not None else []
