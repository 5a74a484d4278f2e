"""ML118 cycle-keeps-every-batch: ``itertools.cycle`` over a ``DataLoader``.

``itertools.cycle(iterable)`` keeps a reference to every element it yields on its first pass,
so that it can replay them once the iterable is exhausted. Over a DataLoader, the elements are
batches: the cycle holds every batch of an epoch (pinned, collated, on the CPU or on the
device the collate put them), and host memory grows step after step until the first pass ends
— for a large dataset, until the job is killed. The replayed batches are also the first
epoch's, in its order: no new shuffle, no new augmentation.

Flagged: ``itertools.cycle(x)`` (also ``from itertools import cycle``) where ``x`` is a
``torch.utils.data.DataLoader`` built in view: the call itself, or a name or attribute bound to
one. Not flagged: a loader the function is given or that another call returns (what it is is
not in view), a cycle over a list or another container (its elements exist already).
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import dotted_name
from memlint.static.rule import Invalid, Rule

CYCLE = frozenset({"itertools.cycle"})
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})


class CycleKeepsEveryBatch(Rule):
    code = "ML118"

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        if facts.qualified_name(node.func) not in CYCLE or len(node.args) != 1 or node.args[0].star:
            return
        iterable = node.args[0].value
        built = iterable if isinstance(iterable, cst.Call) else None
        qualified = facts.qualified_name(built.func) if built is not None else facts.constructed_by(iterable)
        if qualified not in DATA_LOADERS:
            return
        name = dotted_name(iterable)
        shown = f"'{name}'" if name and len(name) <= 30 else "the loader"
        self.report(
            node,
            f"itertools.cycle() keeps every batch of {shown} to replay it: a whole epoch stays in memory",
            help="draw with a fresh iterator instead: `it = iter(loader)`, and on StopIteration "
                 "`it = iter(loader)` again (or a generator: `while True: yield from loader`)",
            needs_grad=False,
        )

    VALID = [
        # a fresh iterator per pass: each batch is freed once used, and each epoch reshuffles
        """
import torch
from torch.utils.data import DataLoader

def train(dataset, model, optimizer, steps):
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    batches = iter(loader)
    for step in range(steps):
        try:
            x, y = next(batches)
        except StopIteration:
            batches = iter(loader)
            x, y = next(batches)
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # a loader handed in (what it is is not in view), and a cycle over a short list
        """
import itertools
import torch

def train(loader, model, optimizer, steps, schedules):
    lrs = itertools.cycle([1e-3, 1e-4])
    data = itertools.cycle(loader)
    for step in range(steps):
        x, y = next(data)
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
    ]

    INVALID = [
        Invalid("""
import itertools
import torch
from torch.utils.data import DataLoader

def training(dataset, model, optimizer, iterations):
    dataloader = DataLoader(dataset, batch_size=1, shuffle=True, num_workers=4)
    data_iter = itertools.cycle(dataloader)
    for iteration in range(iterations):
        x, y = next(data_iter)
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""", line=8),
        # the unlabeled stream of a semi-supervised loop, cycled beside the labeled one
        Invalid("""
from itertools import cycle
import torch
import torch.utils.data as data

class Trainer:
    def __init__(self, labeled, unlabeled):
        self.labeled = data.DataLoader(labeled, batch_size=32, shuffle=True)
        self.unlabeled = data.DataLoader(unlabeled, batch_size=128, shuffle=True)

    def epoch(self, model, optimizer):
        for (x, y), (u, _) in zip(self.labeled, cycle(self.unlabeled)):
            loss = model.supervised(x, y) + model.consistency(u)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""", line=12),
    ]
