"""ML211 gc-collect-in-loop: ``gc.collect()`` runs on every step of a training or evaluation
loop.

A full collection walks every container object the interpreter holds: on the heap of a
training process (datasets of Python objects, tokenizers, framework state) it costs tens of
milliseconds to seconds, every step. Tensors are freed by reference counting as soon as the
last reference goes; ``gc.collect()`` only adds reference *cycles* to that, so calling it every
step either frees nothing or hides a cycle that should be broken (a closure, an exception kept
with its traceback, a graph stored on a module). Once per epoch, after a deliberate teardown,
or in an out-of-memory handler it is fine.

Where "every step" is decided exactly as for ML202 (:mod:`memlint.static.rules.per_step_call`):
the call's innermost loop walks batches or steps or runs the backward pass / optimizer step,
is not an epoch loop (it mentions ``epoch`` or contains another step loop), and the call is
not under a condition that changes per step (``if step % 100 == 0:``) or an opt-in about
memory; or the call sits in ``training_step``, ``forward`` or another per-step method.
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import FunctionScope, Loop
from memlint.static.rule import Invalid
from memlint.static.rules.per_step_call import PerStepCallRule

GC_COLLECT = frozenset({"gc.collect"})


class GcCollectInLoop(PerStepCallRule):
    code = "ML211"
    CALLEE_NAMES = frozenset({"collect"})

    def per_step_target(self, node: cst.Call) -> str | None:
        qualified = self.facts.qualified_name(node.func)
        return qualified if qualified in GC_COLLECT else None

    def report_per_step(self, node: cst.Call, what: str, loop: Loop | None, function: FunctionScope,
                        via: str | None = None) -> None:
        where = f"every call of {function.name}()" if loop is None else (
            f"every iteration of this {'training' if loop.is_training_loop else 'data'} loop")
        what = f"{via}() calls gc.collect()" if via else "gc.collect() runs"
        self.report(
            node,
            f"{what} on {where}",
            help="remove it (or run it once per epoch): a full collection costs milliseconds to seconds; if "
                 "memory grows without it, find the reference cycle it hides with memlint verify",
            needs_grad=False,
        )

    VALID = [
        # a helper collecting per structure of one batch (its fields zipped row by row), not per step
        """
import gc
import torch

def bandgap(structure, potential):
    value = potential(structure)
    gc.collect()
    return value

def bandgaps_of(batched_data, potential):
    found = []
    for sid, lattice, pos in zip(batched_data["sid"], batched_data["cell"], batched_data["pos"]):
        found.append(bandgap((lattice, pos), potential))
    return found
""",
        # once per checkpoint shard of a conversion script (even in tqdm): files, not steps
        """
import gc
import glob
import torch
from tqdm import tqdm
def split_files(model_path, out_path):
    for part, file_path in enumerate(tqdm(glob.glob(model_path + "/pytorch_model-*.bin"))):
        state_dict = torch.load(file_path, map_location="cpu")
        torch.save({k: v.half() for k, v in state_dict.items()}, f"{out_path}/part-{part}.bin")
        state_dict = None
        gc.collect()
""",
        # a helper that collects, called only when a step runs out of memory
        """
import gc
import torch
class Trainer:
    def _clear_memory(self):
        gc.collect()
        torch.cuda.empty_cache()
    def fit(self, loader):
        for batch in loader:
            try:
                self.model(batch).backward()
                self.optimizer.step()
            except torch.cuda.OutOfMemoryError:
                self._clear_memory()
""",
        # profiling one op after another: the step loop is the inner one
        """
import gc
import torch
def profile_ops(x, ops, n=10):
    for m in ops:
        try:
            for _ in range(n):
                m(x).sum().backward()
        finally:
            gc.collect()
""",
        # once per epoch, after the step loop
        """
import gc
import torch
def fit(model, train_loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            criterion(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
        gc.collect()
        torch.cuda.empty_cache()
""",
        # after a deliberate teardown, between folds
        """
import gc
import torch
def cross_validate(folds, build, train):
    scores = []
    for fold, (train_idx, val_idx) in enumerate(folds):
        model = build().cuda()
        scores.append(train(model, train_idx, val_idx))
        del model
        gc.collect()
        torch.cuda.empty_cache()
    return scores
""",
        # every N steps
        """
import gc
import torch
def train(model, loader, optimizer, collect_every=1000):
    for step, batch in enumerate(loader):
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % collect_every == 0:
            gc.collect()
""",
        # in an out-of-memory handler
        """
import gc
import torch
def train(model, loader, optimizer):
    for batch in loader:
        try:
            model(**batch).loss.backward()
            optimizer.step()
        except torch.cuda.OutOfMemoryError:
            optimizer.zero_grad(set_to_none=True)
            gc.collect()
            torch.cuda.empty_cache()
""",
        # a loop over models to benchmark, not over steps
        """
import gc
import torch
def benchmark(names, build, x):
    for name in names:
        model = build(name).cuda()
        with torch.no_grad():
            model(x)
        del model
        gc.collect()
""",
        # a helper that collects, called once per epoch; a helper that collects only under a condition
        """
import gc
import torch
def release():
    gc.collect()

def maybe_release(step):
    if step % 100 == 0:
        gc.collect()

def fit(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for step, batch in enumerate(loader):
            model(batch).sum().backward()
            optimizer.step()
            maybe_release(step)
        release()
""",
        # a flag set inside the loop: runs once
        """
import gc
import torch
def train(model, loader, optimizer):
    collected = False
    for batch in loader:
        model(batch).sum().backward()
        optimizer.step()
        if not collected:
            gc.collect()
            collected = True
""",
    ]

    INVALID = [
        # the step loop runs micro-batches inside: each batch is still one step
        Invalid("""
import gc
import torch
def train(model, loader, optimizer):
    for batch in loader:
        for micro in batch.split(4):
            model(micro).sum().backward()
        optimizer.step()
        gc.collect()
""", line=9),
        Invalid("""
import gc
import torch
def train(model, loader, optimizer, criterion):
    model.train()
    for images, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(images.cuda()), labels.cuda())
        loss.backward()
        optimizer.step()
        del images, labels, loss
        gc.collect()
        torch.cuda.empty_cache()
""", line=12),
        # evaluation loop, from-import
        Invalid("""
from gc import collect
import torch
@torch.no_grad()
def evaluate(model, val_loader):
    for batch in val_loader:
        model(batch.cuda())
        collect()
""", line=8),
        # a step loop inside an epoch loop, with a guard that holds every step
        Invalid("""
import gc
import torch
def fit(model, loader, optimizer, epochs, device):
    for epoch in range(epochs):
        for step, batch in enumerate(loader):
            model(batch.to(device)).mean().backward()
            optimizer.step()
            if device.type == "cuda":
                gc.collect()
""", line=10),
        # a helper of this module that collects, called every step
        Invalid("""
import gc
import torch
class Engine:
    def sync_weights(self, trainer, rollout):
        rollout.update_params(trainer.params)
        gc.collect()

    def train(self, loader, optimizer):
        for batch in loader:
            self.model(batch).loss.backward()
            optimizer.step()
            self.sync_weights(self.trainer, self.rollout)
""", line=13),
        # Lightning training_step
        Invalid("""
import gc
import lightning as L
class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.model(batch).loss
        gc.collect()
        return loss
""", line=7),
    ]
