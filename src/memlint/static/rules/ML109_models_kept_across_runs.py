"""ML109 models-kept-across-runs: a loop over folds, trials or configurations trains a new model
each time and keeps every one of them.

Cross-validation and hyper-parameter searches build a model (and an optimizer) per run, train
it, and often append the trained model, or the trainer that holds it, to a list "for later".
Every run's weights, gradients and optimizer state then stay where they were trained: memory
grows by a whole training run's state per iteration, and fold 4 of 5 runs out of GPU memory
although each fold alone fits. ``del model; torch.cuda.empty_cache()`` cannot help while the
list holds it.

Flagged (warning): ``runs.append(model)`` / ``runs[fold] = model`` / ``runs += [model]`` (also
a tuple or dict holding it, or a trainer/learner built with it) in a loop that trains (it
backpropagates, steps an optimizer, calls ``fit``/``train``, or builds an optimizer), where the
model was built in the same iteration (an ``nn.Module`` constructor, ``from_pretrained``, a
module class of this file...). Also flagged (warning): a model taken from the runs a loop walks (``for name, run in
runs.items(): model = run["model"]``, or the loop target itself) moved to the device in place
(``model.to(device)``, ``model.cuda()``) and trained, and neither moved back nor dropped from
the run in the iteration: the container keeps every run's model on the GPU.

Not flagged: state dicts, scores or predictions kept
(``model.state_dict()``, ``evaluate(model)``), a model moved to the CPU before it is kept
(``model.cpu()``), an ensemble loaded for inference (no training in the loop), a model built
before the loop, heads built each with its optimizer by a loop in a constructor (``__init__``
building one linear probe per layer: the object's parts, trained together later).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import Kind, Loop, collection_name, dotted_name, names_in, root_name
from memlint.static.rule import Invalid, Rule

_TRAINING_CALLS = frozenset({"fit", "train", "train_model", "fit_model", "train_one_epoch", "train_epoch",
                             "run_training", "train_and_evaluate", "train_fold", "fit_fold"})
_HOLDER_SUFFIXES = ("Trainer", "Learner", "Engine", "Runner")
# Calls after which a model is off the accelerator.
_OFF_DEVICE = frozenset({"cpu", "state_dict", "to_dict"})
# Methods of a module that return the module (moved or converted), not something it computed.
_SAME_MODULE = frozenset({"to", "cuda", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_",
                          "to_empty", "type"})
# Libraries whose estimators are not PyTorch modules (a "model" name is not enough there).
_NOT_TORCH = ("sklearn", "xgboost", "lightgbm", "catboost", "statsmodels")


@dataclass
class _Moved:
    node: cst.Call
    name: str  # the model variable
    container: str  # what the loop walks
    element: str  # the loop target the model comes from
    loop: Loop
    binding: object  # the model variable's binding (read once the function is walked)


@dataclass
class _Kept:
    node: cst.CSTNode
    container: str
    name: str
    loop: Loop


class ModelsKeptAcrossRuns(Rule):
    code = "ML109"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        # loops that call fit/train or build an optimizer, each with the names those calls read
        # (the receiver and the arguments: what they train)
        self._training_loops: dict[int, set[str]] = {}
        self._released: set[tuple[int, str]] = set()  # (id(loop), name) deleted or moved off in the loop

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        if facts.loop is None:
            return
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if method in ("append", "appendleft", "insert"):
            positional = [arg.value for arg in node.args if arg.keyword is None]
            if positional:
                self._kept(node, func.value, positional[-1])
            return
        last = method if method is not None else (func.value if isinstance(func, cst.Name) else "")
        if last not in _TRAINING_CALLS and not last[:1].isupper():
            return  # neither fit/train nor a class (an optimizer)
        qualified = facts.qualified_name(func) or ""
        last = qualified.rsplit(".", 1)[-1] or last
        trains = (last in _TRAINING_CALLS and not (
            method == "train" and not node.args and "trainer" not in (dotted_name(func.value) or "").lower()))
        builds_optimizer = qualified.startswith("torch.optim.") and last[:1].isupper()
        if builds_optimizer and not trains and facts.function.name == "__init__":
            return  # a constructor building the object's own heads, each with its optimizer: parts, not runs
        if trains or builds_optimizer:
            read = set(names_in(node))
            for loop in facts.loops_in_function():
                self._training_loops.setdefault(id(loop), set()).update(read)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Subscript) and self.facts.loop is not None:
                self._kept(node, target.target.value, node.value)
            if self.facts.loop is not None:
                self._note_released(target.target, node.value)
        # model = model.to(device): the module moved in place (the container still holds it)
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._moved(node.value, node.targets[0].target.value)

    def visit_Expr(self, node: cst.Expr) -> None:
        self._moved(node.value, None)  # model.to(device) alone: only a module moves in place

    def visit_Del(self, node: cst.Del) -> None:
        if self.facts.loop is None:
            return
        targets = [el.value for el in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        for target in targets:
            if isinstance(target, (cst.Subscript, cst.Attribute)):
                self._released.add((id(self.facts.loop), root_name(target)))

    def _note_released(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """``run["model"] = None``: the iteration drops the model from what the loop walks."""
        if isinstance(target, (cst.Subscript, cst.Attribute)) and isinstance(value, cst.Name) \
                and value.value == "None":
            self._released.add((id(self.facts.loop), root_name(target)))

    def _moved(self, value: cst.BaseExpression, rebound: str | None) -> None:
        """``model.to(device)`` / ``model.cuda()`` in a loop, on a model taken from the element
        the loop is walking (``for name, run in runs.items(): model = run["model"]``)."""
        facts = self.facts
        if facts.loop is None or not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
            return
        method = value.func.attr.value
        receiver = value.func.value
        if method not in ("to", "cuda") or not isinstance(receiver, cst.Name):
            return
        if method == "to" and any("cpu" in cst.Module(body=()).code_for_node(arg.value) for arg in value.args):
            self._released.add((id(facts.loop), receiver.value))
            return
        if rebound is not None and rebound != receiver.value:
            return
        binding = facts.lookup(receiver.value)
        if binding is None:
            return
        for loop in reversed(facts.loops_in_function()):
            element = self._element_of(receiver.value, binding, loop)
            if element is None:
                continue
            container = collection_name(loop.node.iter) if isinstance(loop.node, cst.For) else None
            if container is None or container.split(".", 1)[0] in loop.bound_this_iteration:
                return
            moved = _Moved(value, receiver.value, container, element, loop, binding)
            self.at_function_exit(lambda moved=moved: self._decide_moved(moved))
            return

    def _element_of(self, name: str, binding, loop: Loop) -> str | None:
        """The loop target ``name`` is, or is taken from (``run["model"]``, ``run.get("model")``,
        ``run.model``), when the loop walks a container of runs; else None."""
        if name in loop.target_names:
            return name
        node = binding.node
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get":
            node = node.func.value
        elif isinstance(node, (cst.Subscript, cst.Attribute)):
            node = node.value
        else:
            return None
        return node.value if isinstance(node, cst.Name) and node.value in loop.target_names else None

    def _decide_moved(self, moved: "_Moved") -> None:
        loop = moved.loop
        if not (loop.is_training_loop or id(loop) in self._training_loops):
            return  # moved to the device for inference only
        if moved.binding.kind is not Kind.MODULE and not moved.binding.called:
            return  # not known to be a model (run as one, or a module by what it was built from)
        if {(id(loop), moved.name), (id(loop), moved.element), (id(loop), moved.container.split(".", 1)[0])} \
                & self._released:
            return  # moved back, deleted from the run, or the run dropped
        self.report(
            moved.node,
            f"'{moved.name}' is trained on the device and left there in '{moved.container}': every run stays",
            help=f"save what you need (state_dict to a file or the CPU), then move it off ({moved.name}.cpu()) or "
                 f"drop it from '{moved.container}' before the next run",
            needs_grad=False,
        )

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign) and isinstance(node.value, (cst.List, cst.Tuple)):
            for element in node.value.elements:
                self._kept(node, node.target, element.value)

    def _kept(self, node: cst.CSTNode, container: cst.BaseExpression, value: cst.BaseExpression) -> None:
        facts = self.facts
        loop = facts.loop
        if loop is None or not facts.outlives_iteration(container):
            return
        if isinstance(value, (cst.Tuple, cst.List)):
            candidates = [element.value for element in value.elements]
        elif isinstance(value, cst.Dict):
            candidates = [element.value for element in value.elements if isinstance(element, cst.DictElement)]
        else:
            candidates = [value]
        for candidate in candidates:
            name = self._model_built_this_iteration(candidate, loop)
            if name is not None:
                kept = _Kept(node, dotted_name(container) or "the list", name, loop)
                self.at_function_exit(lambda kept=kept: self._decide(kept))
                return

    def _model_built_this_iteration(self, value: cst.BaseExpression, loop: Loop) -> str | None:
        """The name of a model (or of a trainer holding one) built in this iteration, or None."""
        if not isinstance(value, cst.Name) or value.value not in loop.bound_this_iteration:
            return None
        facts = self.facts
        binding = facts.lookup(value.value)
        node = binding.node if binding is not None else None
        if not isinstance(node, cst.Call):
            return None
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _OFF_DEVICE:
            return None
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "to" and any(
                "cpu" in cst.Module(body=()).code_for_node(arg.value) for arg in node.args):
            return None
        qualified = facts.qualified_name(node.func) or ""
        if qualified.startswith(_NOT_TORCH):
            return None
        if isinstance(node.func, cst.Attribute) and node.func.attr.value not in _SAME_MODULE \
                and facts.is_module_expr(node.func.value) and not facts.is_module_constructor(node):
            return None  # model_fcsts = model.predict(...): what a model's method returns, not a model
        if binding.kind is Kind.MODULE:
            return value.value
        last = qualified.rsplit(".", 1)[-1]
        if last.endswith(_HOLDER_SUFFIXES):
            return value.value  # Trainer(model=model, ...), Learner(dls, model)
        return None

    def _trained_by_a_call(self, name: str, loop: Loop) -> bool:
        """Does a fit/train call or an optimizer built in ``loop`` take the model ``name``, or
        an object built with it (``Trainer(model)``), as receiver or argument? (Not an
        ``IsolationForest(...).fit(features)`` beside a network that is only run.)"""
        read = self._training_loops.get(id(loop))
        if not read:
            return False
        if name in read:
            return True
        for other in read:
            binding = self.facts.lookup(other)
            node = binding.node if binding is not None else None
            if isinstance(node, cst.Call) and other in loop.bound_this_iteration \
                    and (dotted_name(node.func) or "").rsplit(".", 1)[-1][:1].isupper() \
                    and any(isinstance(arg.value, cst.Name) and arg.value.value == name for arg in node.args):
                return True  # trainer = Trainer(model, ...); trainer.fit()
        return False

    def _decide(self, kept: _Kept) -> None:
        loop = kept.loop
        if not (loop.is_training_loop or self._trained_by_a_call(kept.name, loop)):
            return  # an ensemble loaded for inference, models collected without training
        self.report(
            kept.node,
            f"'{kept.container}' keeps every run's trained '{kept.name}', weights and optimizer state",
            help="keep scores, or a CPU state_dict ({k: v.cpu() for k, v in model.state_dict().items()}) or a "
                 "file, instead of the model",
            needs_grad=False,
        )

    VALID = [
        # a constructor building one probe per layer, each with its optimizer: the object's parts
        """
import torch
from torch import nn
class ClassifierDict(nn.Module):
    def __init__(self, dims, num_classes, lr):
        super().__init__()
        self.classifiers = nn.ModuleDict()
        self.optims = {}
        for name, dim in dims.items():
            layers = nn.Linear(dim, num_classes)
            optimizer = torch.optim.Adam(layers.parameters(), lr=lr)
            self.classifiers[name] = layers
            self.optims[name] = optimizer
""",
        # scores and CPU state dicts kept
        """
import copy
import torch
def cross_validate(folds, build_model, train, evaluate):
    scores, states = [], []
    for fold, (train_idx, val_idx) in enumerate(folds):
        model = build_model().cuda()
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
        train(model, optimizer, train_idx)
        scores.append(evaluate(model, val_idx))
        states.append({k: v.cpu() for k, v in model.state_dict().items()})
        torch.save(model.state_dict(), f"fold{fold}.pt")
    return scores, states
""",
        # moved to the CPU before it is kept
        """
import torch
from torch import nn
def run_trials(configs, train):
    models = []
    for config in configs:
        model = nn.Sequential(nn.Linear(config.dim, config.dim), nn.ReLU()).cuda()
        train(model, config)
        model = model.cpu()
        models.append(model)
    return models
""",
        # what a model's method returns (predictions), kept per model
        """
import numpy as np
def cross_validation(models, dataset, h):
    fcsts_list = []
    for model in models:
        model.fit(dataset=dataset)
        model_fcsts = model.predict(dataset, h=h)
        fcsts_list.append(model_fcsts)
    return np.concatenate(fcsts_list, axis=-1)
""",
        # an ensemble loaded for inference: no training in the loop
        """
import torch
from torchvision.models import resnet50
def load_ensemble(paths, device):
    members = []
    for path in paths:
        model = resnet50()
        model.load_state_dict(torch.load(path, map_location="cpu"))
        members.append(model.to(device).eval())
    return members
""",
        # sklearn estimators in a torch project
        """
import torch
from sklearn.linear_model import LogisticRegression
def probe(folds, features):
    models = []
    for train_idx, _ in folds:
        model = LogisticRegression()
        model.fit(features[train_idx], features[train_idx])
        models.append(model)
    return models
""",
        # one model trained across the loop (built before it)
        """
import torch
def fit(model, loaders, optimizer):
    checkpoints = []
    for loader in loaders:
        for x, y in loader:
            model(x, y).backward()
            optimizer.step()
        checkpoints.append(model)
    return checkpoints
""",
    ]

    VALID += [
        # each run's model moved back to the CPU, or dropped from its run, after training
        """
import torch
import torch.nn.functional as F
def train_all(experiments, device, epochs):
    for name, exp in experiments.items():
        net = exp["net"]
        net.to(device)
        for epoch in range(epochs):
            for x, y in exp["loader"]:
                loss = F.cross_entropy(net(x.to(device)), y.to(device))
                exp["optimizer"].zero_grad()
                loss.backward()
                exp["optimizer"].step()
        net.to("cpu")

def train_each(runs, device):
    for run in runs:
        model = run.model
        model.cuda()
        for x, y in run.loader:
            model(x.cuda(), y.cuda()).backward()
            run.optimizer.step()
        torch.save(model.state_dict(), run.path)
        del run.model
""",
    ]

    INVALID = [
        # models of a dict of experiments, each moved to the GPU and trained, left there
        Invalid("""
import torch
import torch.nn.functional as F
def train_all(experiments, device, epochs):
    for name, exp in experiments.items():
        net = exp["net"]
        net.to(device)
        for epoch in range(epochs):
            for x, y in exp["loader"]:
                loss = F.cross_entropy(net(x.to(device)), y.to(device))
                exp["optimizer"].zero_grad()
                loss.backward()
                exp["optimizer"].step()
        exp["score"] = loss.item()
""", line=7),
        Invalid("""
import torch
from torch import nn
from sklearn.model_selection import KFold
def cross_validate(dataset, make_loader, epochs):
    models = []
    for fold, (train_idx, val_idx) in enumerate(KFold(5).split(dataset)):
        model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()
        optimizer = torch.optim.Adam(model.parameters())
        for epoch in range(epochs):
            for x, y in make_loader(dataset, train_idx):
                loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        models.append(model)
    return models
""", line=16),
        # a Trainer kept per trial, in a dict
        Invalid("""
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments
def search(learning_rates, train_set):
    trainers = {}
    for lr in learning_rates:
        model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
        trainer = Trainer(model=model, args=TrainingArguments("out", learning_rate=lr), train_dataset=train_set)
        trainer.train()
        trainers[lr] = trainer
    return trainers
""", line=9),
        # a module class of this file, a tuple with the score
        Invalid("""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, 1)

def sweep(widths, fit):
    results = []
    for width in widths:
        net = Net(width).to("cuda")
        score = fit(net)
        results.append((score, net))
    return max(results, key=lambda r: r[0])
""", line=14),
    ]
