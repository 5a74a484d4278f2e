"""ML210 metric-lifecycle: a torchmetrics metric is built on every batch, or updated every step
and computed every epoch without ever being reset.

A ``torchmetrics`` metric is a stateful module: building one allocates its states (on the
device after ``.to(device)``) and registers them, so a metric built per batch costs
allocations and host-device copies every step for a result one ``update`` would give. A
metric built once must be ``reset()`` after each ``compute()``: otherwise its states keep
accumulating across epochs: the value is an all-time average, and metrics with list states
(``AUROC``, ``AveragePrecision``, ``PrecisionRecallCurve``, ``SpearmanCorrCoef``, retrieval
and detection metrics, ``CatMetric``) keep every prediction ever seen, so memory grows every
step for the whole run.

Flagged: a ``torchmetrics`` class built inside a step loop (see
:attr:`memlint.static.facts.Loop.runs_every_step`) or in ``training_step`` / ``forward`` and
the other per-step methods; a metric updated every step (``m.update(...)``, ``m(...)``) and
computed per epoch (in an epoch loop, an ``on_*_epoch_end`` hook, or a function called in a
loop) that is never ``reset()`` in the module; a metric with list states (``AUROC``,
``AveragePrecision``, retrieval metrics, ``CatMetric``...) updated every step and never reset,
even if never computed. Not flagged: a metric built once and reset;
built per epoch; ``torchmetrics.functional``; a metric Lightning resets itself (logged as the
object: ``self.log("acc", self.acc)``, ``self.log_dict(collection)``); any ``.reset()`` on
something the rule cannot name (a loop over metrics) counts as a reset.

Also flagged: a ``torchmetrics.Metric`` subclass that keeps another metric on ``self`` (built from
a ``torchmetrics`` class, or a parameter annotated ``Metric``) and updates it, when no ``reset``
of the class, its bases or its subclasses in the file resets that metric: ``Metric.reset()``
resets only the states registered with ``add_state``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from memlint.static.facts import FunctionScope, Loop, descendants, dotted_name
from memlint.static.rule import Invalid, Rule

_PER_STEP_METHODS = frozenset({"training_step", "validation_step", "test_step", "predict_step", "forward",
                               "train_step", "eval_step", "shared_step", "_shared_step", "step"})
_EPOCH_END_METHODS = frozenset({"on_train_epoch_end", "on_validation_epoch_end", "on_test_epoch_end",
                                "training_epoch_end", "validation_epoch_end", "test_epoch_end", "on_epoch_end"})


_METRIC_BASES = frozenset({"torchmetrics.Metric", "torchmetrics.metric.Metric"})


# Metrics whose states are lists of every prediction seen (they grow with every update).
_LIST_STATE_WORDS = ("AUROC", "ROC", "AveragePrecision", "PrecisionRecallCurve", "SpearmanCorr", "KendallRank",
                     "Retrieval", "MeanAveragePrecision", "CatMetric", "CalibrationError", "LogAUC")


@dataclass
class _Metric:
    name: str
    node: cst.Call
    cls: str = ""
    updates: list[tuple[Loop | None, FunctionScope, cst.Call]] = field(default_factory=list)
    computes: list[tuple[cst.Call, Loop | None, FunctionScope]] = field(default_factory=list)
    reset: bool = False


class MetricLifecycle(Rule):
    code = "ML210"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._metrics: dict[str, _Metric] = {}
        self._reset_unknown = False  # a .reset() on something that is not a known metric
        self._called_in_loops: set[str] = set()  # names of functions called inside a loop
        self._scheduled = False
        self._classes_scheduled = False

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        func = node.func
        loop = facts.loop
        if loop is not None:
            callee = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func)
            if callee:
                self._called_in_loops.add(callee)
        qualified = facts.qualified_name(func) or ""
        if qualified.startswith("torchmetrics.") and not qualified.startswith("torchmetrics.functional"):
            last = qualified.rsplit(".", 1)[-1]
            if last[:1].isupper():
                self._construction(node, last)
                return
        if isinstance(func, cst.Attribute):
            owner = dotted_name(func.value)
            method = func.attr.value
            if method == "reset":
                if owner in self._metrics:
                    self._metrics[owner].reset = True
                else:
                    self._reset_unknown = True
                return
            if method in ("log", "log_dict") and owner in ("self", "self.trainer", "pl_module"):
                for arg in node.args[1:] if method == "log" else node.args[:1]:
                    name = dotted_name(arg.value)
                    if name in self._metrics:
                        self._metrics[name].reset = True  # Lightning resets a metric logged as the object
                return
            if owner in self._metrics:
                metric = self._metrics[owner]
                if method in ("update", "forward", "__call__"):
                    metric.updates.append((loop, facts.function, node))
                elif method == "compute":
                    metric.computes.append((node, loop, facts.function))
            return
        name = dotted_name(func)
        if name in self._metrics:
            self._metrics[name].updates.append((loop, facts.function, node))

    def _construction(self, node: cst.Call, cls: str) -> None:
        facts = self.facts
        targets = [name for name in self._checker.assign_targets if name != "self"]
        loop = facts.loop
        function = facts.function
        name = targets[0] if len(targets) == 1 else None
        if loop is not None:
            def decide() -> None:
                if loop.runs_every_step:
                    self._report_per_batch(node, cls, name)

            self.at_function_exit(decide)
        elif function.class_info is not None and function.name in _PER_STEP_METHODS:
            self._report_per_batch(node, cls, name)
        elif name is not None:
            self._metrics[name] = _Metric(name, node, cls)
            if not self._scheduled:
                self._scheduled = True
                self.at_module_exit(self._decide_resets)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self._classes_scheduled:
            self._classes_scheduled = True
            self.at_module_exit(self._decide_inner_metrics)

    def _decide_inner_metrics(self) -> None:
        """A ``torchmetrics.Metric`` subclass that keeps another metric on ``self`` and updates it
        (a wrapper computing a retrieval score with ``self.metric_func``): ``Metric.reset()`` resets
        only the states the class registered with ``add_state``, so unless some class of the
        hierarchy overrides ``reset`` to reset the inner metric too, every batch the inner metric
        was given stays in its list states across epochs."""
        facts = self.facts
        for info in facts.classes.values():
            if not self._is_metric_class(info):
                continue
            for attribute in self._inner_metrics(info):
                if not self._updates(info, attribute) or self._resets_in_hierarchy(info, attribute):
                    continue
                self.report(
                    info.node.name,
                    f"{info.name} never resets the metric '{attribute}' it updates: its states pile up",
                    help=f"override reset(): call super().reset() and {attribute}.reset()",
                    needs_grad=False,
                )

    def _is_metric_class(self, info, depth: int = 0) -> bool:
        facts = self.facts
        for base in info.base_names:
            if base in _METRIC_BASES or (facts.imports.qualify(base) or "") in _METRIC_BASES:
                return True
            parent = facts.classes.get(base.rsplit(".", 1)[-1])
            if parent is not None and parent is not info and depth < 5 and self._is_metric_class(parent, depth + 1):
                return True
        return False

    def _inner_metrics(self, info):
        """``self.x`` bound in ``__init__`` to a ``torchmetrics`` class's instance, or to a parameter
        annotated as a ``Metric``."""
        facts = self.facts
        init = info.methods.get("__init__")
        annotated = set()
        if init is not None and isinstance(init.node, cst.FunctionDef):
            for param in init.node.params.params:
                if param.annotation is not None and (facts.imports.qualify(
                        dotted_name(param.annotation.annotation) or "") or "") in _METRIC_BASES:
                    annotated.add(param.name.value)
        for attribute, binding in info.attributes.items():
            value = binding.node
            if isinstance(value, cst.Name) and value.value in annotated:
                yield attribute
            elif isinstance(value, cst.Call) and (facts.qualified_name(value.func) or "").startswith("torchmetrics.") \
                    and not (facts.qualified_name(value.func) or "").startswith("torchmetrics.functional"):
                yield attribute

    def _updates(self, info, attribute: str) -> bool:
        for method in info.methods.values():
            for node in descendants(method.node):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                        and dotted_name(node.func.value) == attribute and node.func.attr.value in ("update", "forward"):
                    return True
        return False

    def _resets_in_hierarchy(self, info, attribute: str) -> bool:
        """Does a ``reset`` of this class, a base or a subclass in the file reset ``attribute``?"""
        related = [other for other in self.facts.classes.values()
                   if other is info or self._derives(other, info) or self._derives(info, other)]
        for other in related:
            reset = other.methods.get("reset")
            if reset is None:
                continue
            for node in descendants(reset.node):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                        and node.func.attr.value == "reset" and dotted_name(node.func.value) == attribute:
                    return True
        return False

    def _derives(self, info, ancestor, depth: int = 0) -> bool:
        for base in info.base_names:
            parent = self.facts.classes.get(base.rsplit(".", 1)[-1])
            if parent is ancestor or (parent is not None and parent is not info and depth < 5
                                      and self._derives(parent, ancestor, depth + 1)):
                return True
        return False

    def _report_per_batch(self, node: cst.Call, cls: str, name: str | None) -> None:
        what = f"'{name}' is a new {cls}" if name else f"a new {cls} is built"
        self.report(
            node,
            f"{what} on every step, allocating its states again",
            help="build the metric once (in __init__ or before the loop), update it per batch and reset() it "
                 "per epoch",
            needs_grad=False,
        )

    def _decide_resets(self) -> None:
        if self._reset_unknown:
            return
        for metric in self._metrics.values():
            step_updates = [node for loop, function, node in metric.updates if self._per_step(loop, function)]
            if metric.reset or not step_updates:
                continue
            if not metric.computes and any(word in metric.cls for word in _LIST_STATE_WORDS):
                self.report(
                    step_updates[0],
                    f"'{metric.name}' ({metric.cls}) keeps every prediction and is never reset: it grows every step",
                    help=f"compute() and reset() it once per epoch ({metric.name}.reset())",
                    needs_grad=False,
                )
                continue
            for node, loop, function in metric.computes:
                if self._per_epoch(loop, function):
                    self.report(
                        node,
                        f"'{metric.name}' is computed every epoch but never reset: its states pile up",
                        help=f"call {metric.name}.reset() after compute() (list states such as AUROC's grow every "
                             f"step until then)",
                        needs_grad=False,
                    )
                    break

    def _per_step(self, loop: Loop | None, function: FunctionScope) -> bool:
        if loop is not None:
            return loop.runs_every_step
        return function.class_info is not None and function.name in _PER_STEP_METHODS

    def _per_epoch(self, loop: Loop | None, function: FunctionScope) -> bool:
        if loop is not None:
            return loop.mentions_epoch or loop.contains_step_loop
        return function.name in _EPOCH_END_METHODS or function.name in self._called_in_loops

    VALID = [
        # a wrapper metric whose reset() also resets the metric it keeps and updates
        """
import torch
from torchmetrics import Metric
from torchmetrics.retrieval import RetrievalMAP


class IndexBasedMeter(Metric):
    def __init__(self, metric_func: Metric, k: int = 10):
        super().__init__()
        self.metric_func = metric_func
        self.add_state("vectors", default=[], dist_reduce_fx=None)

    def update(self, vectors):
        self.vectors.append(vectors.detach())

    def compute(self):
        vectors = torch.cat(self.vectors)
        scores = vectors @ vectors.T
        self.metric_func.update(scores, scores > 0, torch.zeros_like(scores, dtype=torch.long))
        return self.metric_func.compute()

    def reset(self):
        super().reset()
        self.metric_func.reset()


class RetrievalMAPMeter(IndexBasedMeter):
    def __init__(self):
        super().__init__(metric_func=RetrievalMAP())
""",
        # built once, reset every epoch
        """
import torch
import torchmetrics
def fit(model, train_loader, optimizer, epochs, device):
    accuracy = torchmetrics.Accuracy(task="multiclass", num_classes=10).to(device)
    for epoch in range(epochs):
        for x, y in train_loader:
            logits = model(x.to(device))
            loss = torch.nn.functional.cross_entropy(logits, y.to(device))
            loss.backward()
            optimizer.step()
            accuracy.update(logits, y.to(device))
        print(epoch, accuracy.compute().item())
        accuracy.reset()
""",
        # Lightning resets a metric logged as the object
        """
import lightning as L
from torchmetrics.classification import MulticlassAccuracy
class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.val_acc = MulticlassAccuracy(num_classes=10)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_acc(self(x), y)
        self.log("val_acc", self.val_acc, on_epoch=True)
""",
        # the functional API per batch
        """
import torch
from torchmetrics.functional import accuracy
def evaluate(model, loader):
    scores = []
    for x, y in loader:
        scores.append(accuracy(model(x), y, task="binary").item())
    return sum(scores) / len(scores)
""",
        # built per epoch, not per batch; metrics built in a loop over their names
        """
import torch
import torchmetrics
METRICS = {"acc": torchmetrics.Accuracy, "f1": torchmetrics.F1Score}
def validate(model, val_loader, epochs):
    collection = {name: cls(task="binary") for name, cls in METRICS.items()}
    for name in ["precision", "recall"]:
        collection[name] = torchmetrics.Precision(task="binary")
    for epoch in range(epochs):
        auroc = torchmetrics.AUROC(task="binary")
        for x, y in val_loader:
            auroc.update(model(x), y)
        print(auroc.compute())
""",
        # one evaluation pass: computed once
        """
import torch
import torchmetrics
def test(model, test_loader):
    metric = torchmetrics.AveragePrecision(task="binary")
    with torch.no_grad():
        for x, y in test_loader:
            metric.update(model(x), y)
    return metric.compute()
""",
        # metrics reset through a loop over a collection
        """
import torchmetrics
class Evaluator:
    def __init__(self):
        self.acc = torchmetrics.Accuracy(task="binary")
        self.auroc = torchmetrics.AUROC(task="binary")

    def on_validation_epoch_end(self):
        print(self.acc.compute(), self.auroc.compute())
        for metric in (self.acc, self.auroc):
            metric.reset()

    def validation_step(self, batch, batch_idx):
        self.acc.update(batch["p"], batch["y"])
        self.auroc.update(batch["p"], batch["y"])
""",
    ]

    INVALID = [
        # a wrapper metric updates the metric it keeps, but Metric.reset() resets only its own
        # add_state states: the inner metric's lists grow across epochs (torchok#166)
        Invalid("""
import torch
from torchmetrics import Metric
from torchmetrics.retrieval import RetrievalMAP


class IndexBasedMeter(Metric):
    def __init__(self, metric_func: Metric, k: int = 10):
        super().__init__()
        self.metric_func = metric_func
        self.add_state("vectors", default=[], dist_reduce_fx=None)

    def update(self, vectors):
        self.vectors.append(vectors.detach())

    def compute(self):
        vectors = torch.cat(self.vectors)
        scores = vectors @ vectors.T
        self.metric_func.update(scores, scores > 0, torch.zeros_like(scores, dtype=torch.long))
        return self.metric_func.compute()


class RetrievalMAPMeter(IndexBasedMeter):
    def __init__(self):
        super().__init__(metric_func=RetrievalMAP())
""", line=7),
        # a metric built per batch
        Invalid("""
import torch
import torchmetrics
def evaluate(model, val_loader, device):
    scores = []
    with torch.no_grad():
        for images, labels in val_loader:
            acc = torchmetrics.Accuracy(task="multiclass", num_classes=1000).to(device)
            scores.append(acc(model(images.to(device)), labels.to(device)).item())
    return sum(scores) / len(scores)
""", line=8),
        # in validation_step
        Invalid("""
import lightning as L
from torchmetrics import F1Score
class Model(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        f1 = F1Score(task="binary").to(self.device)
        self.log("val_f1", f1(self(x), y))
""", line=7),
        # updated every step, computed every epoch, never reset
        Invalid("""
import torch
from torchmetrics import AUROC
def fit(model, train_loader, optimizer, epochs):
    auroc = AUROC(task="binary")
    for epoch in range(epochs):
        for x, y in train_loader:
            logits = model(x)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
            loss.backward()
            optimizer.step()
            auroc.update(logits.detach(), y.int())
        print(f"epoch {epoch}: auroc {auroc.compute():.3f}")
""", line=13),
        # a list-state metric updated every step, never computed nor reset (torchmetrics#1461)
        Invalid("""
import torch
from torchmetrics.classification import MultilabelAUROC
def train(model, loader, optimizer):
    auroc = MultilabelAUROC(num_labels=9).cuda()
    for step, (x, y) in enumerate(loader):
        logits = model(x.cuda())
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y.cuda().float())
        loss.backward()
        optimizer.step()
        auroc(logits.detach(), y.cuda())
""", line=11),
        # Lightning: computed in the epoch-end hook, logged as a number, never reset
        Invalid("""
import lightning as L
import torchmetrics
class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.train_ap = torchmetrics.AveragePrecision(task="binary")

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.train_ap.update(logits, y)
        return self.loss(logits, y)

    def on_train_epoch_end(self):
        self.log("train_ap", self.train_ap.compute())
""", line=16),
    ]
