"""ML119 exception-kept-past-handler: a caught exception stored where it outlives its ``except``.

An exception carries its traceback, the traceback its frames, and each frame every local of its
function and a link to the frame that called it: the whole call stack at the time of the error,
with whatever tensors, batches and models those functions held. Python deletes the ``as`` name at
the end of the handler for this reason. Stored in a module global, on an object or in a container
that lives on, the exception keeps those frames — and their tensors — alive for as long as it is
kept: a model that ``del``, ``gc.collect()`` and ``empty_cache()`` cannot free, or one step's
activations per stored error.

Flagged: the ``as`` name of an ``except`` clause, as it is (or in a tuple, list or dict written
out), assigned to a module global (at module level, or a name the function declares ``global``),
to an attribute (``self.error = e``), to a slot of a global or an attribute
(``self.errors[k] = e``), or appended to one (``self.errors.append(e)``). Not flagged: what is
kept of it without its frames (``str(e)``, ``repr(e)``, ``e.args``, ``type(e)``,
``e.with_traceback(None)``); a local name (it dies with the call); an exception stored to be
raised again (``raise self.error`` in the module: a hand-off between threads or calls).
"""

from __future__ import annotations

import re

import libcst as cst

from memlint.static.facts import dotted_name
from memlint.static.rule import Invalid, Rule

_STORING_METHODS = frozenset({"append", "add", "appendleft", "insert"})


class ExceptionKeptPastHandler(Rule):
    code = "ML119"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._caught: list[str | None] = []  # the ``as`` names of the handlers the walk is in
        self._declared_global: dict[int, set[str]] = {}  # id() of a function -> its ``global`` names

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        name = node.name.name if node.name is not None else None
        self._caught.append(name.value if isinstance(name, cst.Name) else None)

    def leave_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._caught.pop()

    def visit_Global(self, node: cst.Global) -> None:
        self._declared_global.setdefault(id(self.facts.function), set()).update(
            item.name.value for item in node.names)

    def visit_Assign(self, node: cst.Assign) -> None:
        caught = self._caught_in(node.value)
        if caught is None:
            return
        for target in node.targets:
            where = self._outliving_place(target.target)
            if where is not None:
                self._report(node, caught, where)
                return

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not self._caught or type(func) is not cst.Attribute or func.attr.value not in _STORING_METHODS:
            return
        caught = next((found for found in (self._caught_in(arg.value) for arg in node.args) if found), None)
        if caught is None:
            return
        where = self._outliving_place(func.value)
        if where is not None:
            self._report(node, caught, where)

    def _caught_in(self, value: cst.BaseExpression) -> str | None:
        """The handler's ``as`` name when ``value`` is it, or a tuple/list/dict written out holding it."""
        names = {name for name in self._caught if name is not None}
        if not names:
            return None
        if type(value) is cst.Name:
            return value.value if value.value in names else None
        if type(value) in (cst.Tuple, cst.List):
            return next((element.value.value for element in value.elements
                         if type(element.value) is cst.Name and element.value.value in names), None)
        if type(value) is cst.Dict:
            return next((element.value.value for element in value.elements
                         if type(element) is cst.DictElement and type(element.value) is cst.Name
                         and element.value.value in names), None)
        return None

    def _outliving_place(self, target: cst.BaseExpression) -> str | None:
        """How ``target`` outlives the handler ("a module global", "an attribute"), or None for a local."""
        while type(target) is cst.Subscript:
            target = target.value
        if type(target) is cst.Attribute:
            return "an attribute"
        if type(target) is cst.Name:
            facts = self.facts
            if facts.function is facts.module_scope:
                return "a module global"
            if target.value in self._declared_global.get(id(facts.function), ()):
                return "a module global"
        return None

    def _report(self, node: cst.CSTNode, caught: str, where: str) -> None:
        stored = dotted_name(node.func.value) if type(node) is cst.Call else dotted_name(
            _peel(node.targets[0].target))
        if stored is not None and re.search(rf"\braise\s+{re.escape(stored)}\b", self._checker.source):
            return  # kept to be raised again: handed on, not hoarded
        self.report(
            node,
            f"'{caught}' is kept in {where} past its except block: its traceback keeps every frame of the "
            "call stack alive, with the tensors and models they hold",
            help=f"keep what is needed without the frames: str({caught}) or repr({caught}), or "
                 f"{caught}.with_traceback(None)",
            needs_grad=False,
        )

    VALID = [
        # the message, not the exception
        """
import torch

try:
    import fused_kernels
except ImportError as e:
    fused_kernels = None
    import_error = str(e)


class Trainer:
    def step(self, model, batch):
        try:
            return model(batch).sum()
        except RuntimeError as err:
            self.last_error = repr(err)
            return None
""",
        # a local (dies with the call), and an exception kept to be raised again in the caller's thread
        """
import threading
import torch


def safe_forward(model, batch):
    try:
        return model(batch)
    except RuntimeError as e:
        error = e
    print("failed:", error)
    return None


class Prefetcher(threading.Thread):
    def run(self):
        try:
            self.batch = next(self.source)
        except Exception as exc:
            self.failure = exc

    def get(self):
        if self.failure is not None:
            raise self.failure
        return self.batch
""",
    ]

    INVALID = [
        # GPTQModel: the ImportError of a lazily imported kernel kept at module level pins the frames of
        # the code that triggered the import, with the model it was loading
        Invalid("""
import torch

marlin_import_exception = None
try:
    import marlin_kernels
except ImportError as e:
    marlin_import_exception = e
""", line=8),
        # the exception of a failed step kept on the trainer, and a list of them
        Invalid("""
import torch


class Trainer:
    def __init__(self):
        self.failures = []

    def step(self, model, batch):
        try:
            return model(batch).sum()
        except RuntimeError as err:
            self.failures.append(err)
            return None
""", line=13),
        Invalid("""
import torch

LAST_ERROR = None


def step(model, batch):
    global LAST_ERROR
    try:
        return model(batch).sum()
    except RuntimeError as err:
        LAST_ERROR = err
""", line=12),
    ]


def _peel(target: cst.BaseExpression) -> cst.BaseExpression:
    while type(target) is cst.Subscript:
        target = target.value
    return target
