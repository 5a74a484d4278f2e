"""ML302 accumulation-without-no-sync: gradient accumulation on a DistributedDataParallel
model without ``model.no_sync()`` on the micro-batches that do not step.

DDP all-reduces the gradients during every ``backward()``. With accumulation
(``loss.backward()`` every micro-batch, ``optimizer.step()`` every ``accum`` of them) all
but the last all-reduce are wasted: ``accum`` times the communication, and the reducer's
bucket buffers are filled and synchronised every micro-batch. Wrap the non-stepping
backward passes in ``with model.no_sync():``.

Also flagged: a loop inside the step loop that backpropagates every iteration while the
optimizer steps after it (micro-batches: ``zip(x.chunk(k), y.chunk(k))``, ``range(k)``).

Flagged: in a loop that backpropagates every iteration, an ``if`` with a modulo test
(``(step + 1) % accum == 0``, ``step % k == 0``) whose body steps the optimizer and does
not backpropagate itself, in a module that wraps a model with ``DistributedDataParallel``.
Not flagged: a module that uses ``no_sync`` or sets ``require_backward_grad_sync``, or
imports from a module of its project that calls ``no_sync()`` (``misc.ddp_sync(ddp, sync)``); FSDP
(``FullyShardedDataParallel`` / ``fully_shard``: ``no_sync`` there keeps unsharded
gradients and raises memory, so skipping it is a valid choice); accelerate's
``accelerator.accumulate(model)``, Lightning and DeepSpeed, which handle it; a model
wrapped elsewhere (the wrap is not visible here); an ``if`` that also runs the backward
pass (alternating updates, not accumulation).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.engine import is_optimizer_step
from memlint.static.facts import Loop, dotted_name
from memlint.static.rule import Invalid, Rule

_DDP = frozenset({"DistributedDataParallel"})
_FSDP = frozenset({"FullyShardedDataParallel", "fully_shard"})
# Text that says the file handles synchronisation itself (or lets a framework do it).
_HANDLED_TEXT = ("no_sync", "require_backward_grad_sync", "accumulate(", "deepspeed", "gradient_accumulation_plugin")


@dataclass
class _PeriodicIf:
    node: cst.If | cst.For  # the accumulation condition, or a loop over the chunks of a batch
    loop: Loop
    steps: bool = False
    backward: bool = False


class AccumulationWithoutNoSync(Rule):
    code = "ML302"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._open: list[_PeriodicIf] = []
        self._candidates: list[_PeriodicIf] = []
        self._wraps_ddp = False
        self._accelerate = False
        self._wrapping_functions: dict[int, str] = {}  # id(function) -> "ddp" | "accelerate"
        self._uses_fsdp = False
        self._scheduled = False

    def visit_If(self, node: cst.If) -> None:
        loop = self.facts.loop
        if loop is not None and _has_modulo(node.test):
            self._open.append(_PeriodicIf(node, loop))

    def leave_If(self, node: cst.If) -> None:
        if not self._open or self._open[-1].node is not node:
            return
        record = self._open.pop()
        if not record.steps or record.backward:
            return

        def decide() -> None:
            if record.loop.has_backward:
                self._candidates.append(record)
                self._schedule()

        self.at_function_exit(decide)

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    def visit_For(self, node: cst.For) -> None:
        # A loop inside the step loop that backpropagates every iteration while the optimizer
        # steps after it: for xc, yc in zip(x.chunk(k), y.chunk(k)), for i in range(k)...
        facts = self.facts
        outer = facts.loop  # visit_For runs before the engine enters the new loop
        if outer is None:
            return

        def decide() -> None:
            loop = facts.loop_of_node.get(id(node))
            if (loop is not None and loop.has_backward and not loop.has_optimizer_step
                    and outer.has_optimizer_step and not loop.walks_steps):
                self._candidates.append(_PeriodicIf(node, loop, steps=True))
                self._schedule()

        self.at_function_exit(decide)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        facts = self.facts
        qualified = facts.qualified_name(func) or ""
        last = qualified.rsplit(".", 1)[-1]
        if last in _DDP:
            self._wraps_ddp = True
            self._wrapping_functions[id(facts.function)] = "ddp"
        elif isinstance(func, cst.Attribute) and func.attr.value == "prepare" and "accelerator" in (
                dotted_name(func.value) or "").lower():
            self._wraps_ddp = True  # accelerate wraps the model in DDP when launched on several GPUs
            self._accelerate = True
            self._wrapping_functions.setdefault(id(facts.function), "accelerate")
        elif last in _FSDP:
            self._uses_fsdp = True
        if not self._open or not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method in ("backward", "manual_backward") or qualified in ("torch.autograd.backward",):
            for record in self._open:
                record.backward = True
        elif method == "step" and is_optimizer_step(node, self.facts):
            for record in self._open:
                record.steps = True

    def _no_sync_imported(self) -> bool:
        """Does this module import something from a module of its project that calls
        ``no_sync`` (a helper such as ``ddp_sync(module, sync)``)? Unknown counts as yes."""
        project = self.facts.project
        if project is None:
            return False
        modules = project.modules_mentioning("no_sync", called=True)
        if modules is None:
            return True
        names = {module.name for module in modules}
        return any(qualified == name or qualified.startswith(f"{name}.") or name.startswith(f"{qualified}.")
                   for qualified in self.facts.imports.aliases.values() for name in names)

    def _decide(self) -> None:
        source = self._checker.source
        if not self._wraps_ddp or self._uses_fsdp or self.facts.imports.uses_lightning:
            return
        if any(text in source for text in _HANDLED_TEXT) or "FullyShardedDataParallel" in source:
            return
        if self._candidates and self._no_sync_imported():
            return  # with misc.ddp_sync(ddp, sync): a helper of the project that enters no_sync()
        for record in self._candidates:
            chunks = isinstance(record.node, cst.For)
            unit, units = ("chunk", "chunks") if chunks else ("micro-batch", "micro-batches")
            wrapper = self._wrapping_functions.get(id(record.loop.scope))
            if wrapper == "accelerate" or (wrapper is None and self._accelerate and "DistributedDataParallel"
                                          not in self._checker.source):
                self.report(
                    record.node,
                    f"accumulation without accelerator.accumulate(model): each {unit}'s backward all-reduces",
                    help="wrap each micro-batch in 'with accelerator.accumulate(model):' (or "
                         "accelerator.no_sync(model) on the non-stepping ones)",
                    needs_grad=False,
                )
                continue
            self.report(
                record.node,
                f"gradient accumulation without model.no_sync(): each {unit}'s backward all-reduces gradients",
                help=f"run the backward of the non-stepping {units} under 'with model.no_sync():' "
                     f"(contextlib.nullcontext() on the stepping one)",
                needs_grad=False,
            )

    VALID = [
        # no_sync on the micro-batches that do not step
        """
import contextlib
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def train(model, loader, optimizer, criterion, accum_steps, local_rank):
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    for step, (x, y) in enumerate(loader):
        stepping = (step + 1) % accum_steps == 0
        context = contextlib.nullcontext() if stepping else model.no_sync()
        with context:
            loss = criterion(model(x.cuda()), y.cuda()) / accum_steps
            loss.backward()
        if stepping:
            optimizer.step()
            optimizer.zero_grad()
""",
        # FSDP: no_sync would keep unsharded gradients
        """
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

def train(model, loader, optimizer, accum):
    model = FSDP(model)
    for i, batch in enumerate(loader):
        loss = model(**batch).loss / accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        # accelerate handles the synchronisation
        """
import torch
from accelerate import Accelerator

def train(model, loader, optimizer):
    accelerator = Accelerator(gradient_accumulation_steps=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        with accelerator.accumulate(model):
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
""",
        # no accumulation: step every iteration; logging every N steps
        """
import torch
from torch.nn.parallel import DistributedDataParallel

def train(model, loader, optimizer, log_every=100):
    model = DistributedDataParallel(model)
    for step, (x, y) in enumerate(loader):
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            print(f"step {step}: {loss.item():.4f}")
""",
        # a model wrapped elsewhere: the wrap is not visible in this module
        """
import torch
def train(model, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        model(x, y).backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
    ]

    VALID += [
        # micro-batches of one batch, the backward of all but the last under no_sync
        """
import contextlib
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def train(model, loader, optimizer, criterion, micro):
    model = DDP(model)
    for x, y in loader:
        chunks = list(zip(x.chunk(micro), y.chunk(micro)))
        for i, (xc, yc) in enumerate(chunks):
            context = model.no_sync() if i < len(chunks) - 1 else contextlib.nullcontext()
            with context:
                criterion(model(xc), yc).backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        # a critic loop with its own optimizer step (WGAN), not accumulation
        """
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def train(netG, netD, loader, opt_g, opt_d, n_critic):
    netD = DDP(netD)
    for real in loader:
        for _ in range(n_critic):
            opt_d.zero_grad()
            netD(netG(torch.randn(64, 100)).detach()).mean().backward()
            opt_d.step()
        opt_g.zero_grad()
        (-netD(netG(torch.randn(64, 100))).mean()).backward()
        opt_g.step()
""",
        # micro-batches on one GPU (no DDP in the module)
        """
import torch
def train(model, loader, optimizer, micro):
    for x, y in loader:
        for xc, yc in zip(x.split(micro), y.split(micro)):
            model(xc, yc).backward()
        optimizer.step()
        optimizer.zero_grad()
""",
    ]

    INVALID = [
        # accelerate: backward every micro-batch, no accumulate()
        Invalid("""
from accelerate import Accelerator
def train(model, optimizer, loader, accum_steps):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        loss = model(**batch).loss / accum_steps
        accelerator.backward(loss)
        if (step + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""", line=9),
        # a raw DDP loop over the chunks of each batch
        Invalid("""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def train(model, loader, optimizer, criterion, k, rank):
    model = DDP(model.to(rank), device_ids=[rank])
    for x, y in loader:
        x, y = x.to(rank), y.to(rank)
        for xc, yc in zip(x.chunk(k), y.chunk(k)):
            loss = criterion(model(xc), yc) / k
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""", line=8),
        # K backward passes per optimizer step (pytorch/pytorch#43201)
        Invalid("""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def train(model, loader, optimizer, loss_fn, K):
    model = DDP(model)
    for data, label in loader:
        optimizer.zero_grad()
        for i in range(K):
            loss_fn(model(data[i::K]), label[i::K]).backward()
        optimizer.step()
""", line=8),
        Invalid("""
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, train_loader, optimizer, criterion, args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(model.cuda(), device_ids=[local_rank])
    for epoch in range(args.epochs):
        for step, (images, labels) in enumerate(train_loader):
            loss = criterion(model(images.cuda()), labels.cuda()) / args.accum_steps
            loss.backward()
            if (step + 1) % args.accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
""", line=16),
        # AMP scaler step, while loop, wrap through torch.nn.parallel
        Invalid("""
import torch

def train(model, batches, optimizer, scaler, accumulation, max_steps):
    model = torch.nn.parallel.DistributedDataParallel(model)
    micro = 0
    while micro < max_steps * accumulation:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(next(batches)) / accumulation
        scaler.scale(loss).backward()
        micro += 1
        if micro % accumulation == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
""", line=12),
    ]


def _has_modulo(test: cst.BaseExpression) -> bool:
    stack: list[cst.CSTNode] = [test]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.BinaryOperation):
            if isinstance(current.operator, cst.Modulo) and not isinstance(current.left, cst.BaseString):
                return True
            stack.extend((current.left, current.right))
        elif isinstance(current, cst.Comparison):
            stack.append(current.left)
            stack.extend(target.comparator for target in current.comparisons)
        elif isinstance(current, cst.BooleanOperation):
            stack.extend((current.left, current.right))
        elif isinstance(current, cst.UnaryOperation):
            stack.append(current.expression)
    return False
