"""The peak of a block of code in this process: what the ``memlint_peak_below`` fixture runs.

``with measure_peak() as measured: ...`` tracks the live tensor storages of the
block with the same accounting as ``memlint verify`` (parameters, gradients,
optimizer state, activations, other; the phase of the peak). Each step of the
first optimizer that steps inside the block ends a step; what runs after the last
one is a step of its own. Tensors made before the block count once the block uses
them (a model's parameters at its first call, a batch when it is saved for backward).
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from memlint.dynamic.budget import build_memory
from memlint.dynamic.cards import parse_capacity
from memlint.dynamic.memory import MemoryReport
from memlint.dynamic.peak import PeakAccountant
from memlint.dynamic.storages import StorageTracker
from memlint.dynamic.usercode import UserFiles


@dataclass
class PeakMeasurement:
    """Filled in when the block ends."""

    device: str = "cpu"
    memory: MemoryReport | None = None  # None when nothing was allocated in the block


@contextlib.contextmanager
def measure_peak(*, device: str = "auto", gpu_memory: str | int | None = None):
    """Measure the block; ``gpu_memory`` adds the fit projection as ``memlint verify --gpu-memory`` does."""
    capacity = parse_capacity(gpu_memory)
    device = "cuda" if device in ("auto", "cuda") and torch.cuda.is_available() else "cpu"
    tracker = StorageTracker(device, UserFiles())
    accountant = PeakAccountant(tracker)
    measured = PeakMeasurement(device)
    owner = None

    def on_step(optimizer, args, kwargs) -> None:
        nonlocal owner
        if owner is None:
            owner = weakref.ref(optimizer)
        if owner() is optimizer:
            accountant.end_step(len(accountant.steps) + 1)

    accountant.install()
    handle = register_optimizer_step_post_hook(on_step)  # after the accountant's: the state is classed first
    try:
        with tracker:
            yield measured
            if accountant.phase_peaks[:3] != [None, None, None] or not accountant.steps:
                accountant.end_step(len(accountant.steps) + 1)
    finally:
        handle.remove()
        accountant.uninstall()
    measured.memory = build_memory(accountant.to_json(device), warmup=0, capacity=capacity, device=device)
