"""ML202 empty-cache-in-loop: ``torch.cuda.empty_cache()`` runs on every step of a training
or evaluation loop.

``empty_cache`` only hands back cached blocks that no tensor uses any more; it frees nothing
that is still referenced. Called every step it makes the caching allocator go back to
``cudaMalloc`` for the next step's activations (a synchronising, slow call) and it hides a
real leak instead of fixing it. Once per epoch, after a deliberate teardown, or in an
out-of-memory handler it is fine.

How a step loop is told from an epoch loop: the call's innermost loop (in its own function)
must walk data or steps (a loader, ``batches``, ``steps``, a ``while`` loop that trains) or
run the backward pass / optimizer step itself, and must not contain another data loop (a
loop around a data loop is an epoch loop) nor mention ``epoch``. Inside ``training_step``,
``forward`` and the other per-step methods of a module the call runs once per step too.
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import FunctionScope, Loop
from memlint.static.rule import Invalid
from memlint.static.rules.per_step_call import PerStepCallRule

EMPTY_CACHE_FUNCTIONS = frozenset({
    "torch.cuda.empty_cache", "torch.cuda.memory.empty_cache", "torch.mps.empty_cache",
    "torch.xpu.empty_cache", "torch.npu.empty_cache", "torch.accelerator.empty_cache",
})


class EmptyCacheInLoop(PerStepCallRule):
    code = "ML202"
    CALLEE_NAMES = frozenset({"empty_cache"})

    def per_step_target(self, node: cst.Call) -> str | None:
        qualified = self.facts.qualified_name(node.func)
        return qualified if qualified in EMPTY_CACHE_FUNCTIONS else None

    def report_per_step(self, node: cst.Call, what: str, loop: Loop | None, function: FunctionScope,
                        via: str | None = None) -> None:
        if via is not None:
            self.report(
                node,
                f"{via}() calls {what}() every iteration of this loop, which frees nothing in use",
                help="call it once per epoch (or after teardown); if memory grows, find the leak it hides with "
                     "memlint verify",
                needs_grad=False,
            )
            return
        if loop is None:
            self.report(
                node,
                f"{what}() runs every step, in {function.name}(), and frees nothing in use",
                help="remove it (or call it once per epoch); if memory grows, find the leak it hides "
                     "with memlint verify",
                needs_grad=False,
            )
            return
        self.report(
            node,
            f"{what}() runs every iteration of this {'training' if loop.is_training_loop else 'data'} "
            f"loop and frees nothing in use",
            help="move it after the loop (once per epoch or after teardown); if memory grows, find the "
                 "leak it hides with memlint verify",
            needs_grad=False,
        )

    VALID = [
        # once per video: each iteration of the loader loop runs a loop of forward passes of its
        # own (a window over the video's frames)
        """
import torch

@torch.no_grad()
def evaluate(model, test_loader, stride=10):
    for index, (frames, masks) in enumerate(test_loader):
        torch.cuda.empty_cache()
        outputs = []
        for f in range(0, frames.size(1), stride):
            outputs.append(model(frames[:, f:f + stride], masks[:, f:f + stride]).cpu())
        save(torch.cat(outputs, 1), index)
""",
        # once per epoch, after the step loop
        """
import torch
def fit(model, train_loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.cuda(), y.cuda()
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        torch.cuda.empty_cache()
""",
        # once per epoch in a loop that calls an epoch function
        """
import torch
def main(args, model, loaders, optimizer):
    for epoch in range(args.epochs):
        train_one_epoch(model, loaders["train"], optimizer)
        validate(model, loaders["val"])
        torch.cuda.empty_cache()
""",
        # after deliberate teardown, outside any loop
        """
import gc
import torch
def release(model, optimizer):
    del model, optimizer
    gc.collect()
    torch.cuda.empty_cache()
""",
        # in an out-of-memory handler: retry with a smaller batch after leaving the except
        """
import torch
def find_batch_size(model, make_batch, batch_size=1024):
    while batch_size > 1:
        oom = False
        try:
            model(make_batch(batch_size)).sum().backward()
        except torch.cuda.OutOfMemoryError:
            oom = True
            torch.cuda.empty_cache()
        if not oom:
            return batch_size
        batch_size //= 2
""",
        # every N steps, not every step
        """
import torch
def train(model, loader, optimizer, criterion, empty_cache_every=500):
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % empty_cache_every == 0:
            torch.cuda.empty_cache()
""",
        # a retry loop: it goes round again only when the run failed (out of memory)
        """
import torch
def try_run(bench_fn, batch_size):
    while batch_size:
        try:
            torch.cuda.empty_cache()
            return bench_fn(batch_size=batch_size).run()
        except RuntimeError:
            pass
        batch_size //= 2
""",
        # once per episode, whose frames a helper scores with forward passes of its own
        """
import torch
def score_episode(model, dataset, start, num_frames, device):
    scores = []
    with torch.no_grad():
        for length in range(1, num_frames + 1):
            frames = torch.stack([dataset[start + i] for i in range(length)]).to(device)
            scores.append(model(frames).item())
    return scores

def compute_weights(model, dataset, episodes, device):
    results = []
    for start, num_frames in episodes:
        results.extend(score_episode(model, dataset, start, num_frames, device))
        torch.cuda.empty_cache()
    return results
""",
        # once per epoch: the helper the loop calls runs the step loop
        """
import torch
def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        model(x, y).loss.backward()
        optimizer.step()
        optimizer.zero_grad()

def fit(model, loader, optimizer, epochs):
    for _ in range(epochs):
        train_one_epoch(model, loader, optimizer)
        torch.cuda.empty_cache()
""",
        # every save_interval steps, the step counted by a method the loop calls
        """
import torch
class TrainLoop:
    def run_step(self, batch):
        self.model(batch).loss.backward()
        self.optimizer.step()
        self.global_step += 1

    def run_loop(self, loader):
        for batch in loader:
            self.run_step(batch)
            if self.global_step and self.save_interval != -1 and self.global_step % self.save_interval == 0:
                self.save()
                torch.cuda.empty_cache()
""",
        # an opt-in setting (Megatron's empty_unused_memory_level), or under memory pressure
        """
import torch
def train_step(self, batch_iterator, args):
    for batch in batch_iterator:
        loss = self.model(batch).loss
        loss.backward()
        self.optimizer.step()
        if args.empty_unused_memory_level >= 1:
            torch.cuda.empty_cache()
        if torch.cuda.memory_reserved() > args.reserved_limit:
            torch.cuda.empty_cache()
""",
        # once, on the first step; at the last batch
        """
import torch
def train(model, loader, optimizer):
    for i, batch in enumerate(loader):
        model(batch).loss.backward()
        optimizer.step()
        if i == 0:
            torch.cuda.empty_cache()
        if is_last_batch(i, loader):
            torch.cuda.empty_cache()
""",
        # before the step loop of the epoch
        """
import torch
def fit(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        torch.cuda.empty_cache()
        for batch in loader:
            model(batch).loss.backward()
            optimizer.step()
""",
        # a loop over models to benchmark, not a step loop
        """
import torch
def benchmark(model_names, build, x):
    for name in model_names:
        model = build(name).cuda()
        with torch.no_grad():
            model(x)
        del model
        torch.cuda.empty_cache()
""",
        # a clear-cache helper called from a loop elsewhere: the call is not in a loop
        """
import torch
def clear_device_cache():
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
""",
    ]

    INVALID = [
        # each iteration is one step, whose helper loops over micro-batches
        Invalid("""
import torch
def train_step(model, batch, optimizer, chunks=4):
    for part in batch.chunk(chunks):
        model(part).loss.backward()
    optimizer.step()
    optimizer.zero_grad()

def train(model, loader, optimizer):
    for batch in loader:
        train_step(model, batch, optimizer)
        torch.cuda.empty_cache()
""", line=12),
        # a setting that does not change in the loop: every evaluation step once it is on
        Invalid("""
import torch
def evaluation_loop(self, dataloader):
    for step, inputs in enumerate(dataloader):
        losses, logits, labels = self.prediction_step(self.model, inputs)
        if self.args.batch_eval_metrics:
            self.metrics.update(logits, labels)
            del losses, logits, labels, inputs
            torch.cuda.empty_cache()
""", line=9),
        Invalid("""
import torch
def train(model, loader, optimizer, criterion):
    model.train()
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()
""", line=11),
        # evaluation loop, import alias
        Invalid("""
import torch as t
def evaluate(model, val_loader):
    model.eval()
    correct = 0
    with t.no_grad():
        for images, labels in val_loader:
            logits = model(images.to("cuda"))
            correct += (logits.argmax(1) == labels.to("cuda")).sum().item()
            t.cuda.empty_cache()
    return correct
""", line=10),
        # the step loop nested in an epoch loop
        Invalid("""
import torch
from torch.cuda import empty_cache
def fit(model, train_loader, optimizer, epochs):
    for epoch in range(epochs):
        for batch in train_loader:
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            empty_cache()
""", line=11),
        # a while loop over steps, guarded by a condition that holds every step
        Invalid("""
import torch
def train(model, batches, optimizer, max_steps):
    step = 0
    while step < max_steps:
        loss = model(next(batches)).mean()
        loss.backward()
        optimizer.step()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        step += 1
""", line=10),
        # Lightning training_step: once per step
        Invalid("""
import torch
import lightning as L
class LitModel(L.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.model(batch).loss
        torch.cuda.empty_cache()
        return loss
""", line=7),
    ]

