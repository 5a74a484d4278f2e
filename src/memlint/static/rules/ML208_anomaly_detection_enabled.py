"""ML208 anomaly-detection-enabled: autograd anomaly detection is left on for a training run.

``torch.autograd.set_detect_anomaly(True)`` (or ``with torch.autograd.detect_anomaly():``,
or Lightning's ``Trainer(detect_anomaly=True)``) makes autograd record the Python traceback
of the forward call that created every graph node, keep it with the node, and check every
backward output for NaNs. It is a debugging switch: a training step runs several times
slower and each step's graph holds thousands of traceback objects on top of its tensors.

Flagged: ``set_detect_anomaly(True)`` (a literal ``True``; as a ``with`` item it is a block like
``detect_anomaly()``, on only inside) at module level (it is on for every
program that imports the module), or in a function of a module that trains (backpropagates,
steps an optimizer or fits); ``with detect_anomaly():`` around a training
loop, around a call that trains (``fit``/``train``...), or inside a step loop around the
backward pass; ``Trainer(detect_anomaly=True)``. Not flagged: under an ``if`` (a debug flag or
branch), with a non-literal mode (``set_detect_anomaly(args.debug)``), turned off again in
the same function (one step), a ``with`` block around a single forward/backward outside any
loop (debugging one batch), ``set_detect_anomaly(False)``, and tests (``test_*`` functions
and files).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import Loop, dotted_name, is_test_file
from memlint.static.rule import Invalid, Rule

_SETTERS = frozenset({"torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly",
                      "torch.set_anomaly_enabled", "torch.autograd.anomaly_mode.set_anomaly_enabled"})
_CONTEXTS = frozenset({"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly"})
# Text that says the module trains.
_TRAINING_TEXT = ("backward(", ".step(", ".fit(", "trainer.train(", "train_one_epoch(", "Trainer(", "autograd.grad(")
# Callees (last name) that run a training loop.
_TRAINING_CALLS = ("fit", "train", "train_epoch", "train_one_epoch", "run_training", "training_loop")


@dataclass
class _Block:
    node: cst.With
    call: cst.Call
    outer_loop: Loop | None  # the loop the with block is in
    loops_open: int  # loops open when the block started
    trains: bool = False  # a training loop, or a call that trains, inside the block
    backward: bool = False  # a backward pass directly inside the block


class AnomalyDetectionEnabled(Rule):
    code = "ML208"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._if_depth: dict[int, int] = {}  # id(function) -> ifs open in it
        self._blocks: list[_Block] = []  # open with detect_anomaly() blocks
        self._turned_off: set[int] = set()
        self._test_file = is_test_file(checker.path)
        self._with_setters: set[int] = set()  # set_detect_anomaly(...) calls used as a with item

    def _in_if(self) -> bool:
        return self._if_depth.get(id(self.facts.function), 0) > 0

    def _in_test(self) -> bool:
        function = self.facts.function
        return self._test_file or function.name.startswith("test_")

    def visit_If(self, node: cst.If) -> None:
        key = id(self.facts.function)
        self._if_depth[key] = self._if_depth.get(key, 0) + 1

    def leave_If(self, node: cst.If) -> None:
        key = id(self.facts.function)
        self._if_depth[key] -= 1

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            while isinstance(call, cst.BooleanOperation):
                # with set_grad_enabled(True) and set_detect_anomaly(True): the block enters the
                # last operand (a context manager is truthy)
                call = call.right
            if not isinstance(call, cst.Call):
                continue
            qualified = self.facts.qualified_name(call.func)
            if qualified in _SETTERS:
                # with set_detect_anomaly(True): on for the block only, restored as it ends
                self._with_setters.add(id(call))
                if not (call.args and _is_true(call.args[0].value)):
                    continue
            elif qualified not in _CONTEXTS:
                continue
            if not self._in_if() and not self._in_test():
                self._blocks.append(_Block(node, call, self.facts.loop, len(self.facts.loops)))

    def leave_With(self, node: cst.With) -> None:
        while self._blocks and self._blocks[-1].node is node:
            block = self._blocks.pop()
            if block.trains:
                self._report(block.call, "detect_anomaly() is on around the whole training")
            elif block.backward and block.outer_loop is not None:
                loop = block.outer_loop

                def decide(call=block.call, loop=loop) -> None:
                    if loop.runs_every_step:
                        self._report(call, "detect_anomaly() is on around every step's backward")

                self.at_function_exit(decide)

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        func = node.func
        qualified = facts.qualified_name(func)
        if qualified in _SETTERS:
            self._setter(node)
            return
        last = qualified.rsplit(".", 1)[-1] if qualified else (
            func.attr.value if isinstance(func, cst.Attribute) else None)
        if last is None:
            return
        if last.endswith("Trainer"):
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "detect_anomaly" and _is_true(arg.value):
                    if not self._in_if() and not self._in_test():
                        self._report(node, f"{last}(detect_anomaly=True) leaves anomaly detection on for the whole run")
            return
        if not self._blocks:
            return
        backward = last in ("backward", "manual_backward")
        step = last == "step" and isinstance(func, cst.Attribute) and "optim" in (dotted_name(func.value) or "")
        trains = last in _TRAINING_CALLS and (last != "train" or not isinstance(func, cst.Attribute) or any(
            word in (dotted_name(func.value) or "").lower() for word in ("trainer", "engine", "learner", "runner")))
        for block in self._blocks:
            if trains or ((backward or step) and len(facts.loops) > block.loops_open):
                block.trains = True  # a training loop inside the block, or a call that trains
            elif backward:
                block.backward = True

    def _setter(self, node: cst.Call) -> None:
        if id(node) in self._with_setters:
            return  # a with block: decided as one (see visit_With)
        mode = node.args[0].value if node.args else None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("mode", "enabled"):
                mode = arg.value
        function = self.facts.function
        if mode is not None and _is_false(mode):
            self._turned_off.add(id(function))
            return
        if mode is None or not _is_true(mode) or self._in_if() or self._in_test():
            return
        if function is not self.facts.module_scope and not any(text in self._checker.source for text in _TRAINING_TEXT):
            return  # in a function of a module that does not train (a module-level call affects every importer)

        def decide() -> None:
            if id(function) in self._turned_off:
                return  # on for one step, then off again
            self._report(node, "set_detect_anomaly(True) leaves autograd anomaly detection on for training")

        self.at_function_exit(decide)

    def _report(self, node: cst.Call, what: str) -> None:
        self.report(
            node,
            what,
            help="turn it on only to debug one step, under a flag: it keeps a traceback per graph node and slows "
                 "every step",
            needs_grad=False,
        )

    VALID = [
        # entered through `and` (the last operand is the context manager): on for the block only
        """
import torch

def ode_fn(model, t, x):
    with torch.set_grad_enabled(True) and torch.autograd.set_detect_anomaly(True):
        x = x.detach().requires_grad_(True)
        energy = model(t, x).sum()
        return torch.autograd.grad(energy, x)[0]
""",
        # set_detect_anomaly used as a context manager around nothing, then the training loop
        """
import torch

def run(model, loader, optimizer):
    with torch.autograd.set_detect_anomaly(True):
        pass
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # under a debug flag
        """
import torch
def main(args, model, loader, optimizer):
    if args.detect_anomaly:
        torch.autograd.set_detect_anomaly(True)
    for x, y in loader:
        model(x, y).backward()
        optimizer.step()
""",
        # a configurable mode, and off
        """
import torch
def main(cfg, model, loader, optimizer):
    torch.autograd.set_detect_anomaly(cfg.debug)
    torch.autograd.set_detect_anomaly(False)
    for x, y in loader:
        model(x, y).backward()
        optimizer.step()
""",
        # one batch, to find the op that made a NaN
        """
import torch
def debug_one_batch(model, batch):
    with torch.autograd.detect_anomaly():
        model.train()
        loss = model(**batch).loss
        loss.backward()
""",
        # on for one step, then off again
        """
import torch
def check_step(model, batch, optimizer):
    torch.autograd.set_detect_anomaly(True)
    model(batch).sum().backward()
    torch.autograd.set_detect_anomaly(False)
    optimizer.step()
""",
        # a flag for the Trainer; a test
        """
import lightning as L
def build(cfg):
    return L.Trainer(max_epochs=cfg.epochs, detect_anomaly=cfg.debug)

def test_anomaly_raises(model, batch):
    trainer = L.Trainer(fast_dev_run=True, detect_anomaly=True)
    trainer.fit(model)
""",
        # only at a debug branch inside the loop
        """
import torch
def train(model, loader, optimizer, debug_step):
    for step, batch in enumerate(loader):
        if step == debug_step:
            with torch.autograd.detect_anomaly():
                model(batch).sum().backward()
        else:
            model(batch).sum().backward()
        optimizer.step()
""",
    ]

    INVALID = [
        # set_detect_anomaly(True) as a context manager around the whole training loop
        Invalid("""
import torch

def run(model, loader, optimizer):
    with torch.autograd.set_detect_anomaly(True):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""", line=5),
        Invalid("""
import torch
torch.autograd.set_detect_anomaly(True)

def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
""", line=3),
        # a with block around the whole training loop
        Invalid("""
import torch
def main(model, loader, optimizer, epochs):
    with torch.autograd.detect_anomaly():
        for epoch in range(epochs):
            for batch in loader:
                loss = model(**batch).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
""", line=4),
        # around a call that trains
        Invalid("""
from torch import autograd
def run(trainer, model, datamodule):
    with autograd.detect_anomaly(check_nan=True):
        trainer.fit(model, datamodule=datamodule)
""", line=4),
        # every step's backward inside the loop
        Invalid("""
import torch
def train(model, loader, optimizer):
    for batch in loader:
        with torch.autograd.detect_anomaly():
            loss = model(batch).mean()
            loss.backward()
        optimizer.step()
""", line=5),
        # Lightning's switch
        Invalid("""
import lightning as L
def main(model, dm):
    trainer = L.Trainer(max_epochs=10, accelerator="gpu", detect_anomaly=True)
    trainer.fit(model, dm)
""", line=4),
    ]


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_false(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"
