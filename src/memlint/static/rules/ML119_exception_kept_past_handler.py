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

from memlint.static.facts import block_statements, dotted_name, nested_blocks
from memlint.static.rule import Invalid, Rule

_STORING_METHODS = frozenset({"append", "add", "appendleft", "insert"})


class ExceptionKeptPastHandler(Rule):
    code = "ML119"

    # Only handlers are visited, and each reads its own body: no callback on every call and
    # assignment of the module for a shape that lives in ``except`` blocks.
    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        name = node.name.name if node.name is not None else None
        if not isinstance(name, cst.Name):
            return
        caught = name.value
        for statement in _statements(node.body):
            for small in statement.body:
                if type(small) is cst.Assign and _holds(small.value, caught):
                    for target in small.targets:
                        where = self._outliving_place(target.target)
                        if where is not None:
                            self._report(small, caught, where, _peel(target.target))
                            break
                elif type(small) is cst.Expr and type(small.value) is cst.Call:
                    call = small.value
                    func = call.func
                    if type(func) is cst.Attribute and func.attr.value in _STORING_METHODS \
                            and any(_holds(arg.value, caught) for arg in call.args):
                        where = self._outliving_place(func.value)
                        if where is not None:
                            self._report(call, caught, where, _peel(func.value))

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
            if any(type(small) is cst.Global and any(item.name.value == target.value for item in small.names)
                   for statement in _statements(facts.function.node.body, nested=False)
                   for small in statement.body):
                return "a module global"
        return None

    def _report(self, node: cst.CSTNode, caught: str, where: str, place: cst.BaseExpression) -> None:
        stored = dotted_name(place)
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


def _holds(value: cst.BaseExpression, caught: str) -> bool:
    """Is ``value`` the name ``caught``, or a tuple, list or dict written out holding it?"""
    if type(value) is cst.Name:
        return value.value == caught
    if type(value) in (cst.Tuple, cst.List):
        return any(type(element.value) is cst.Name and element.value.value == caught for element in value.elements)
    if type(value) is cst.Dict:
        return any(type(element) is cst.DictElement and type(element.value) is cst.Name
                   and element.value.value == caught for element in value.elements)
    return False


def _statements(suite: cst.BaseSuite, nested: bool = True) -> list[cst.SimpleStatementLine | cst.SimpleStatementSuite]:
    """The simple statement lines of ``suite`` and of the blocks inside it (``if``, ``for``, ``with``...),
    not of the functions and classes it defines; only its own lines when not ``nested``."""
    found: list[cst.SimpleStatementLine | cst.SimpleStatementSuite] = []
    stack = [block_statements(suite)]
    while stack:
        for statement in stack.pop():
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                found.append(statement)
            elif nested and isinstance(statement, cst.BaseCompoundStatement) \
                    and not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                stack.extend(nested_blocks(statement))
    return found


def _peel(target: cst.BaseExpression) -> cst.BaseExpression:
    while type(target) is cst.Subscript:
        target = target.value
    return target
