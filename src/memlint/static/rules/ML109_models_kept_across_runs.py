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
module class of this file...). Not flagged: state dicts, scores or predictions kept
(``model.state_dict()``, ``evaluate(model)``), a model moved to the CPU before it is kept
(``model.cpu()``), an ensemble loaded for inference (no training in the loop), a model built
before the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import Kind, Loop, dotted_name
from memlint.static.rule import Invalid, Rule

_TRAINING_CALLS = frozenset({"fit", "train", "train_model", "fit_model", "train_one_epoch", "train_epoch",
                             "run_training", "train_and_evaluate", "train_fold", "fit_fold"})
_HOLDER_SUFFIXES = ("Trainer", "Learner", "Engine", "Runner")
# Calls after which a model is off the accelerator.
_OFF_DEVICE = frozenset({"cpu", "state_dict", "to_dict"})
# Libraries whose estimators are not PyTorch modules (a "model" name is not enough there).
_NOT_TORCH = ("sklearn", "xgboost", "lightgbm", "catboost", "statsmodels")


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
        self._training_loops: set[int] = set()  # loops that call fit/train or build an optimizer

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
        if trains or (qualified.startswith("torch.optim.") and last[:1].isupper()):
            self._training_loops.update(id(loop) for loop in facts.loops_in_function())

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Subscript) and self.facts.loop is not None:
                self._kept(node, target.target.value, node.value)

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
        if binding.kind is Kind.MODULE:
            return value.value
        last = qualified.rsplit(".", 1)[-1]
        if last.endswith(_HOLDER_SUFFIXES):
            return value.value  # Trainer(model=model, ...), Learner(dls, model)
        return None

    def _decide(self, kept: _Kept) -> None:
        loop = kept.loop
        if not (loop.is_training_loop or id(loop) in self._training_loops):
            return  # an ensemble loaded for inference, models collected without training
        self.report(
            kept.node,
            f"'{kept.container}' keeps every run's trained '{kept.name}', weights and optimizer state",
            help="keep scores, or a CPU state_dict ({k: v.cpu() for k, v in model.state_dict().items()}) or a "
                 "file, instead of the model",
            needs_grad=False,
        )

    VALID = [
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

    INVALID = [
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
