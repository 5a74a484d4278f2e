"""Where one step ends: an optimizer step, a DataLoader batch, an outermost module call, memlint.step().

Four kinds of boundary, by precedence:

``marker``       each ``memlint.step()`` (the script says where its steps end);
``optimizer``    each ``Optimizer.step()`` of the closing optimizer (a global post hook; see below);
``dataloader``   each batch drawn from a ``torch.utils.data.DataLoader``: a step ends when the
                 next batch is asked for (or the loader is exhausted);
``module_call``  each call of an outermost ``nn.Module`` (one not called from another module's
                 forward): a step ends when the next such call begins.

What the script does decides: the highest kind seen so far defines the step. A
training loop draws its first batch and calls its model before its optimizer first
steps, and Lightning validates two batches before training: so when a higher kind
appears for the first time, the steps counted so far are dropped and counting
starts again under it (warmup absorbs this; it happens once or twice, early). For
batches and module calls the busiest source defines the step: the DataLoader (by
its dataset) or module that has drawn or been called most, so a loader used once
for statistics, or a module called once at set-up, gives way to the real loop.
``--step-on`` forces one kind and ignores the others.

With several optimizers a step is one round of them: it ends at the step of the *closing*
optimizer, at first the first one that steps. A GAN's discriminator and generator, or one
optimizer per parameter group, step once each per round. When another optimizer steps twice
with no step of the closing one in between (one optimizer per layer, trained in turn), the
rounds have changed: that step ends a step, and that optimizer closes the rounds from then on.

Whatever runs inside an ``Optimizer.step()`` is part of that step: LBFGS calls its closure,
and so the model, up to ``max_iter`` times per step, and an optimizer that wraps another steps
it inside its own step; those module calls, batches and inner steps end no step, and an
optimizer step that begins takes over from module calls and batches at once.

Module hooks cost a little on every module call, so they come off as soon as a
higher kind is chosen (or never go on when another kind is forced).
"""

from __future__ import annotations

import os
import warnings
import weakref

KINDS = ("marker", "optimizer", "dataloader", "module_call")  # by precedence
STEP_ON = {"optimizer": "optimizer", "dataloader": "dataloader", "module": "module_call", "marker": "marker"}
_PRECEDENCE = {kind: rank for rank, kind in enumerate(KINDS)}


def describe(kind: str | None, owner: str = "") -> str:
    """How a step ends, in words, for the report's header."""
    if kind == "optimizer":
        return f"a step is one round of {owner}" if owner else "a step is one optimizer step"
    if kind == "dataloader":
        return f"a step is one batch from {owner or 'a DataLoader'}"
    if kind == "module_call":
        return f"a step is one call of {owner or 'the outermost module'}"
    if kind == "marker":
        return "a step ends at each memlint.step()"
    return "no step boundary was found"


def nothing_stepped(forced: str | None) -> str:
    """The reason a run that never ended a step gets."""
    if forced == "optimizer":
        return "it never called an optimizer's step() (--step-on optimizer)"
    if forced == "dataloader":
        return "it never drew two batches from a torch.utils.data.DataLoader (--step-on dataloader)"
    if forced == "module_call":
        return "it never called an nn.Module twice (--step-on module)"
    if forced == "marker":
        return "it never called memlint.step() (--step-on marker)"
    return ("it never stepped an optimizer, drew batches from a torch.utils.data.DataLoader, called an "
            "nn.Module more than once, or called memlint.step() (call memlint.step() where a step ends)")


class StepBoundaries:
    """Turns the script's optimizer steps, batches, module calls and markers into step ends.

    ``on_step()`` is called at each step end of the chosen kind; ``on_restart()`` when a
    higher kind takes over and counting starts again.
    """

    def __init__(self, on_step, on_restart, forced: str | None = None) -> None:
        self.on_step = on_step
        self.on_restart = on_restart
        self.forced = forced
        self.kind: str | None = None
        self.owner_label = ""
        self._owner = None  # the optimizer (weak), or the key of the loader / module that defines the step
        self._armed = False  # a batch or outermost call of the owner began since the last boundary
        self._counts: dict[int, int] = {}
        self._depth = 0
        self._pid = os.getpid()
        self._module_hooks: list = []
        self._original_next = None
        self._in_optimizer: list[int] = []  # ids of the optimizers whose step() is in progress, outermost first
        self._round: set[int] = set()  # ids of the optimizers that stepped since the last step ended
        self.loaders_ended: int | None = None  # DataLoader passes that reached their end (None: not watched)

    # -- installing ------------------------------------------------------------------------
    def install(self) -> None:
        from torch.optim.optimizer import (  # torch: child side only
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )

        register_optimizer_step_pre_hook(self._optimizer_starting)
        register_optimizer_step_post_hook(self._optimizer_stepped)
        if self._wants("dataloader"):
            self._patch_dataloader()
        if self._wants("module_call"):
            self._hook_modules()

    def _wants(self, kind: str) -> bool:
        return self.forced is None or self.forced == kind

    def _patch_dataloader(self) -> None:
        from torch.utils.data.dataloader import _BaseDataLoaderIter  # torch: child side only

        original = _BaseDataLoaderIter.__next__
        boundaries = self

        def __next__(iterator):
            key = id(getattr(iterator, "_dataset", iterator))
            boundaries._batch_starting(key, iterator)
            try:
                batch = original(iterator)
            except StopIteration:
                boundaries.loaders_ended += 1
                raise
            boundaries._batch_started(key)
            return batch

        self._original_next = original
        self.loaders_ended = 0
        _BaseDataLoaderIter.__next__ = __next__

    def _hook_modules(self) -> None:
        from torch.nn.modules import module as module_module  # torch: child side only

        # Our global hooks make torch.compile warn that hooks fire on the OptimizedModule too.
        warnings.filterwarnings("ignore", message=r"Using `torch.compile\(module\)` when there are global hooks")
        self._module_hooks = [
            module_module.register_module_forward_pre_hook(self._module_entering),
            module_module.register_module_forward_hook(self._module_left, always_call=True),
        ]

    def _unhook_modules(self) -> None:
        for handle in self._module_hooks:
            handle.remove()
        self._module_hooks = []

    # -- events ----------------------------------------------------------------------------
    def marker(self) -> None:
        if self._here() and self._take("marker"):
            self.on_step()

    def _optimizer_starting(self, optimizer, args, kwargs) -> None:
        if not self._here() or not self._wants("optimizer"):
            return
        if id(optimizer) in self._in_optimizer:  # its previous step raised before its post hook
            del self._in_optimizer[self._in_optimizer.index(id(optimizer)):]
        self._in_optimizer.append(id(optimizer))
        if self.kind != "optimizer":
            self._take("optimizer")

    def _optimizer_stepped(self, optimizer, args, kwargs) -> None:
        if not self._here() or not self._wants("optimizer"):
            return
        if id(optimizer) in self._in_optimizer:
            del self._in_optimizer[self._in_optimizer.index(id(optimizer)):]
        if self._in_optimizer:
            return  # a step inside another optimizer's step (a wrapper such as Lookahead) is part of it
        if self.kind != "optimizer" and not self._take("optimizer"):
            return
        closing = self._owner() if self._owner is not None else None
        if closing is None:
            self._owner = weakref.ref(optimizer)
        elif closing is not optimizer:
            if id(optimizer) not in self._round:
                self._round.add(id(optimizer))
                return
            self._owner = weakref.ref(optimizer)  # stepped twice in one round: it closes the rounds now
        stepped = len(self._round | {id(optimizer)})
        self.owner_label = f"the {stepped} optimizers" if stepped > 1 else ""
        self._round = set()
        self.on_step()

    def _batch_starting(self, key: int, iterator) -> None:
        if self._here() and not self._in_optimizer:
            self._started(key, "dataloader", lambda: _loader_label(iterator))

    def _batch_started(self, key: int) -> None:
        if self.kind == "dataloader" and not self._in_optimizer:
            self._counts[key] = self._counts.get(key, 0) + 1  # batches drawn (not the call that ends an epoch)
            if self._owner == key:
                self._armed = True

    def _module_entering(self, module, args) -> None:
        self._depth += 1
        if self._depth == 1 and self._here() and not self._in_optimizer:
            if self.kind == "module_call":
                self._counts[id(module)] = self._counts.get(id(module), 0) + 1
            self._started(id(module), "module_call", lambda: _module_label(module))

    def _module_left(self, module, args, output) -> None:
        self._depth -= 1
        if self._depth == 0 and self.kind == "module_call" and self._owner == id(module) and not self._in_optimizer:
            self._armed = True

    # -- deciding --------------------------------------------------------------------------
    def _here(self) -> bool:
        """Not in a forked DataLoader worker (it inherits the hooks, never the steps)."""
        return os.getpid() == self._pid

    def _take(self, kind: str) -> bool:
        """Whether an event of ``kind`` counts; switches to ``kind`` when it outranks the current one."""
        if not self._wants(kind):
            return False
        if self.kind == kind:
            return True
        if self.kind is not None and _PRECEDENCE[kind] > _PRECEDENCE[self.kind]:
            return False
        if self.kind is not None:
            self.on_restart()
        self.kind, self._owner, self._armed, self._counts, self._round = kind, None, False, {}, set()
        self.owner_label = ""
        if _PRECEDENCE[kind] < _PRECEDENCE["module_call"] and self.forced is None:
            self._unhook_modules()
        return True

    def _started(self, key: int, kind: str, label) -> None:
        """A batch or an outermost call begins: the end of the previous step of the busiest source.

        A source takes over from the owner once it has drawn (or been called) more often.
        """
        if not self._take(kind):
            return
        count = self._counts.setdefault(key, 1 if kind == "module_call" else 0)
        if kind == "dataloader":
            count += 1  # this batch, if it comes
        if self._owner is None or (self._owner != key and count > self._counts.get(self._owner, 0)):
            if self._owner is not None:
                self.on_restart()
            self._owner, self._armed, self.owner_label = key, False, label()
            return
        if self._owner == key and self._armed:
            self._armed = False
            self.on_step()


def _loader_label(iterator) -> str:
    dataset = getattr(iterator, "_dataset", None)
    return f"a DataLoader over {type(dataset).__name__}" if dataset is not None else "a DataLoader"


def _module_label(module) -> str:
    inner = getattr(module, "_orig_mod", None)  # torch.compile's OptimizedModule
    return type(inner if inner is not None else module).__name__
