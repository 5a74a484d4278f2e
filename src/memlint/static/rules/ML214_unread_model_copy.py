"""ML214 unread-model-copy: a deep copy of a model, or of its state dict, kept on an object
where no code of the project reads it.

``copy.deepcopy(model.state_dict())`` duplicates every parameter and buffer on the device they
live on; ``copy.deepcopy(model)`` the whole module. Kept on ``self`` it lives as long as the
object — and appended to a list on ``self`` at every call, one more model per call (a bank of
every round's posterior, huggingface/setfit#199's ``model_original_state``, sbi-dev/sbi#812's
``_model_bank``). When nothing ever reads the attribute, that memory buys nothing.

Flagged (warning): ``self.x = copy.deepcopy(m)`` / ``copy.deepcopy(m.state_dict())``, or the copy
appended / inserted / stored by key into ``self.x``, where ``m`` is known to be a module (built
from one, annotated as one, its parameters read) and ``x`` is read nowhere: no other mention of
the attribute in this module (strings included, for ``getattr``) and no mention of the word in
any other module of the project.

Not flagged: an attribute some code reads (a best model restored later, a reset to the initial
weights), copies of other objects, a module copy kept on an ``nn.Module`` (a registered submodule:
``parameters()``, ``state_dict()`` and ``.to()`` reach it), a module whose objects are read as a
whole (``vars(self)``, ``self.__dict__``, ``getattr`` with a computed name).
"""

from __future__ import annotations

import os
import re

import libcst as cst

from memlint.static.facts import Kind, dotted_name, without_comments
from memlint.static.rule import Invalid, Rule

_DEEPCOPY = "copy.deepcopy"
_STORING = frozenset({"append", "insert", "add", "appendleft"})
# The object read as a whole: every attribute may be reached without its name.
_WHOLE_OBJECT_READS = re.compile(r"__dict__|\bvars\s*\(|__getstate__|__getattr__|\bgetattr\s*\(\s*\w+\s*,\s*[^\"'\s]")


class UnreadModelCopy(Rule):
    code = "ML214"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._stores: dict[str, int] = {}  # attribute -> how many of its mentions are stores
        # attribute, deepcopy call, what is copied, made at every call, the function making it
        self._copies: list[tuple[str, cst.Call, str, bool, object]] = []

    # ----- where an attribute of self is written ---------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            attribute = _self_attribute(target.target)
            if attribute is None and isinstance(target.target, cst.Subscript):
                attribute = _self_attribute(target.target.value)  # self.bank[key] = copy
            if attribute is None:
                continue
            self._stores[attribute] = self._stores.get(attribute, 0) + 1
            self._note_copy(attribute, node.value, per_call=isinstance(target.target, cst.Subscript))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        attribute = _self_attribute(node.target)
        if attribute is not None:
            self._stores[attribute] = self._stores.get(attribute, 0) + 1
            if node.value is not None:
                self._note_copy(attribute, node.value, per_call=False)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _STORING and node.args:
            attribute = _self_attribute(func.value)
            if attribute is not None:
                self._stores[attribute] = self._stores.get(attribute, 0) + 1
                self._note_copy(attribute, node.args[-1].value, per_call=True)

    def _note_copy(self, attribute: str, value: cst.BaseExpression, per_call: bool) -> None:
        facts = self.facts
        if not isinstance(value, cst.Call) or facts.qualified_name(value.func) != _DEEPCOPY or len(value.args) != 1:
            return
        copied = value.args[0].value
        what = "the model"
        if isinstance(copied, cst.Call) and isinstance(copied.func, cst.Attribute) \
                and copied.func.attr.value == "state_dict" and not copied.args:
            copied, what = copied.func.value, "the model's state dict"
        name = dotted_name(copied)
        binding = facts.lookup(name) if name is not None else None
        if binding is None or binding.kind is not Kind.MODULE:
            return
        info = facts.function.class_info if facts.function is not None else None
        if info is None:
            return
        if what == "the model" and info.is_module:
            return  # a registered submodule: parameters(), state_dict() and .to() reach it
        self._copies.append((attribute, value, f"{what} ({name})" if len(name) <= 30 else what, per_call,
                             facts.function))
        if len(self._copies) == 1:
            self.at_module_exit(self._decide)

    # ----- at the end: is any of them read? --------------------------------------------------------
    def _decide(self) -> None:
        source = without_comments(self._checker.source)
        if _WHOLE_OBJECT_READS.search(source):
            return
        project = self.facts.project
        here = self._checker.path
        for attribute, call, what, per_call, function in self._copies:
            mentions = len(re.findall(rf"\b{re.escape(attribute)}\b", source))
            if mentions > self._stores.get(attribute, 0):
                continue  # read in this module (or named in a string or comment)
            if project is not None:
                others = project.modules_mentioning(attribute)
                if others is None or any(not _same_file(module.path, here) for module in others):
                    continue  # another module may read it (or the project is too large to tell)
            growth = "another copy at every call" if per_call else "a copy"
            self.report(
                call,
                f"'self.{attribute}' keeps {growth} of {what} that no code reads",
                help="drop the copy; if it is needed later, keep it on the CPU: "
                     "{k: v.to('cpu', copy=True) for k, v in <model>.state_dict().items()}",
                needs_grad=False,
                function=function,
            )

    VALID = [
        # the copy is read: the best weights are restored after training
        """
import copy
import torch

class Trainer:
    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.best_state = None

    def fit(self, loader, optimizer):
        best = float("inf")
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if loss.item() < best:
                best = loss.item()
                self.best_state = copy.deepcopy(self.model.state_dict())
        self.model.load_state_dict(self.best_state)
""",
        # an EMA copy kept on an nn.Module: a registered submodule, saved and moved with it
        """
import copy
import torch

class WithEMA(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model
        self.ema = copy.deepcopy(model)

    def forward(self, x):
        return self.model(x)
""",
        # a copy of something not known to be a module (a config, a list of numbers)
        """
import copy

class Run:
    def __init__(self, config):
        self.config = config
        self.original_config = copy.deepcopy(config)
""",
        # the object is saved whole: every attribute is read through __dict__
        """
import copy
import torch
from torch import nn

class Wrapper:
    def __init__(self, body: nn.Module):
        self.body = body
        self.initial = copy.deepcopy(body.state_dict())

    def save(self, path):
        torch.save(self.__dict__, path)
""",
    ]

    INVALID = [
        Invalid("""
import copy
from typing import Optional
from torch import nn

class FewShotModel:
    def __init__(self, model_body: Optional[nn.Module] = None, model_head=None):
        self.model_body = model_body
        self.model_head = model_head
        self.model_original_state = copy.deepcopy(self.model_body.state_dict())

    def fit(self, x_train, y_train):
        self.model_head.fit(self.model_body.encode(x_train), y_train)
""", line=10),
        # a bank of every round's network, appended at every call and never read
        Invalid("""
from copy import deepcopy
import torch

class Inference:
    def __init__(self, build):
        self._build = build
        self._net = None
        self._bank = []

    def train(self, theta, x, epochs):
        if self._net is None:
            self._net = self._build(theta, x)
        optimizer = torch.optim.Adam(self._net.parameters())
        for _ in range(epochs):
            loss = -self._net.log_prob(theta, context=x).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        self._bank.append(deepcopy(self._net))
        return self._net
""", line=20),
    ]


def _self_attribute(node: cst.BaseExpression) -> str | None:
    """``x`` of ``self.x``."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _same_file(first: str, second: str) -> bool:
    return os.path.realpath(first) == os.path.realpath(second)
