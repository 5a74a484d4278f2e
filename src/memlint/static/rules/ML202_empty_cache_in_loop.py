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

from memlint.static.facts import Loop, expression_children, names_in
from memlint.static.rule import Invalid, Rule

EMPTY_CACHE_FUNCTIONS = frozenset({
    "torch.cuda.empty_cache", "torch.cuda.memory.empty_cache", "torch.mps.empty_cache",
    "torch.xpu.empty_cache", "torch.npu.empty_cache", "torch.accelerator.empty_cache",
})
# Names in a loop's iterable (or a while loop's test) that say it walks batches or steps.
_STEP_WORDS = ("loader", "batch", "data", "step", "iter", "sample", "tqdm", "stream", "episode")
# Per-step methods whose body runs once per training or evaluation step.
_PER_STEP_METHODS = frozenset({"training_step", "validation_step", "test_step", "predict_step",
                               "train_step", "eval_step", "forward", "training_step_end"})


class EmptyCacheInLoop(Rule):
    code = "ML202"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._loops_with_inner_data_loop: set[int] = set()
        self._except_depth = 0
        self._ifs: list[tuple[cst.If, Loop | None, bool]] = []

    # ----- context the call needs ----------------------------------------------------------
    def visit_For(self, node: cst.For) -> None:
        self._note_inner_loop(_is_step_iterable(node.iter, node.target))

    def visit_While(self, node: cst.While) -> None:
        self._note_inner_loop(_is_step_iterable(node.test))

    def _note_inner_loop(self, walks_data: bool) -> None:
        # visit_For runs before the engine pushes the new loop: facts.loop is the outer one.
        if walks_data:
            for loop in self.facts.loops_in_function():
                self._loops_with_inner_data_loop.add(id(loop))

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._except_depth += 1

    def leave_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._except_depth -= 1

    def visit_If(self, node: cst.If) -> None:
        # (the if, the loop it is in, does its test hold on every step once it holds?)
        loop = self.facts.loop
        self._ifs.append((node, loop, _holds_every_step(node.test, loop)))

    def leave_If(self, node: cst.If) -> None:
        if self._ifs and self._ifs[-1][0] is node:
            self._ifs.pop()

    # ----- the call ------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        qualified = facts.qualified_name(node.func)
        if qualified not in EMPTY_CACHE_FUNCTIONS:
            return
        loop = facts.loop
        if self._except_depth:
            return  # an out-of-memory handler
        if any(if_loop is loop and not device_test for _, if_loop, device_test in self._ifs):
            return  # conditional within the step: every N steps, an opt-in setting, once...
        function = facts.function
        if loop is None:
            if function.class_info is not None and function.name in _PER_STEP_METHODS:
                self.report(
                    node,
                    f"{qualified}() runs every step, in {function.name}(), and frees nothing in use",
                    help="remove it (or call it once per epoch); if memory grows, find the leak it hides "
                         "with memlint verify",
                    needs_grad=False,
                )
            return
        if _mentions_epoch(loop):
            return  # an epoch loop

        def decide() -> None:
            if id(loop) in self._loops_with_inner_data_loop:
                return  # an epoch loop around the step loop
            if not (loop.is_training_loop or _is_step_loop(loop)):
                return
            self.report(
                node,
                f"{qualified}() runs every iteration of this {'training' if loop.is_training_loop else 'data'} "
                f"loop and frees nothing in use",
                help="move it after the loop (once per epoch or after teardown); if memory grows, find the "
                     "leak it hides with memlint verify",
                needs_grad=False,
            )

        self.at_function_exit(decide)

    VALID = [
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


def _is_step_iterable(iterable: cst.BaseExpression, target: cst.BaseExpression | None = None) -> bool:
    names = [name.lower() for name in names_in(iterable)]
    if target is not None:
        names += [name.lower() for name in names_in(target)]
    if any("epoch" in name for name in names):
        return False
    return any(word in name for name in names for word in _STEP_WORDS)


def _is_step_loop(loop: Loop) -> bool:
    if isinstance(loop.node, cst.For):
        return _is_step_iterable(loop.node.iter, loop.node.target)
    if isinstance(loop.node, cst.While):
        return _is_step_iterable(loop.node.test)
    return False


def _mentions_epoch(loop: Loop) -> bool:
    node = loop.node
    parts = [node.iter, node.target] if isinstance(node, cst.For) else [node.test] if isinstance(node, cst.While) else []
    return any("epoch" in name.lower() for part in parts for name in names_in(part))


def _holds_every_step(test: cst.BaseExpression, loop: Loop | None) -> bool:
    """Does the body of ``if test:`` run on every step once it runs at all?

    Yes for a CUDA-availability test (``torch.cuda.is_available()``, ``device.type ==
    "cuda"``) and for a flag that does not change in the loop (``if self.args.batch_eval_metrics:``).
    No for a test of something that changes per step (``step % k == 0``, ``i == 0``, a call),
    and for an opt-in about memory (``if args.empty_cache:``,
    ``if cfg.empty_unused_memory_level >= 1:``, ``if torch.cuda.memory_reserved() > limit:``),
    which is a deliberate, configured choice."""
    names = names_in(test)
    if not names:
        return False
    if any(word in name.lower() for name in names for word in ("empty", "cache", "mem")):
        return False
    device_words = ("cuda", "device", "gpu", "is_available")
    if all(name == "torch" or any(word in name.lower() for word in device_words) for name in names):
        return True
    if loop is None or _has_call(test):
        return False
    changing = loop.bound_this_iteration | loop.target_names | loop.incremented
    return not any(name.split(".", 1)[0] in changing or name in changing for name in names)


def _has_call(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            return True
        if isinstance(current, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation, cst.BinaryOperation)):
            stack.extend(child for child in expression_children(current))
        elif isinstance(current, (cst.Attribute, cst.Subscript)):
            stack.append(current.value)
    return False
