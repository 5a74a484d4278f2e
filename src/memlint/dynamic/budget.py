"""A step's memory budget: the measured peak, what it is made of, and whether it fits a GPU.

Parent side (no torch). Builds the report's ``memory`` section from what the
child's :class:`memlint.dynamic.peak.PeakAccountant` recorded: the highest in-step
peak over the measured steps, its phase and composition, each class's high-water
mark, the fit on a GPU (``--gpu-memory``: :mod:`memlint.dynamic.cards`) and
the levers (:mod:`memlint.dynamic.levers`).

The fit is a projection, not a measurement: the peak of live tensor bytes, plus a
fixed allowance for the CUDA context and a proportional one for the caching
allocator (its rounding and fragmentation; measured as reserved over live bytes
when the run was on CUDA with a peak of 256 MiB or more, assumed +10% otherwise). The largest batch scales activations and ``other`` with
the batch (parameters, gradients and optimizer state stay), phase by phase.
"""

from __future__ import annotations

import math

from memlint.dynamic.assess import human_bytes
from memlint.dynamic.cards import CARDS, GiB, Capacity
from memlint.dynamic.levers import levers
from memlint.dynamic.memory import PHASES, Composition, Fit, MemoryReport, StepPeak, other_bytes
from memlint.dynamic.verdict import RISING_SHARE, rising_share, theil_sen

MiB = 1 << 20

# The CUDA context with lazy module loading takes ~300 MB on recent drivers (287 MB measured in
# pytorch/pytorch#86509; 667 MB with eager loading), then cuBLAS/cuDNN handles and workspaces.
CUDA_CONTEXT_BYTES = 512 * MiB
# The caching allocator rounds blocks up (to 512 B; 2 MiB segments for small blocks, 20 MiB for
# mid-size ones) and fragments. An assumed 10% over the live bytes when the run was not on CUDA;
# on CUDA the measured max_memory_reserved over the peak replaces it.
ALLOCATOR_OVERHEAD = 0.10
# Below this peak, what the allocator reserves is mostly fixed (cuBLAS workspaces, 2 MiB segments
# of a few small tensors): reserved over peak reads x1000 on a 50 KiB model and says nothing about
# how the peak would scale, so the assumed overhead is used.
MIN_PEAK_TO_MEASURE_ALLOCATOR = 256 * MiB
# Optimizers whose default CUDA step (foreach) copies every parameter once (torch/optim/adam.py,
# _multi_tensor_adam: torch._foreach_sqrt of the second moments; measured with foreach=True on CPU).
FOREACH_COPIES = {"Adam", "AdamW", "NAdam", "RAdam", "Adamax"}
# A peak under this share of the card (the one given, the one it ran on, else the smallest card
# people train on) leaves nothing for a lever to win: the levers are not shown, and the report says why.
MIN_SHARE_OF_CARD = 0.01
SMALLEST_CARD = "T4"


def _step_peak(record: dict) -> StepPeak:
    """One step of the child's record: its highest phase is its peak."""
    phases = record["phases"]
    name = max(phases, key=lambda p: (phases[p][0], -PHASES.index(p)))
    high = record["high_water"]
    batch = record.get("batch")
    return StepPeak(record["step"], name, phases[name][0], Composition.of_snapshot(phases[name]),
                    Composition(*high), {p: phases[p][0] for p in PHASES if p in phases},
                    batch["size"] if batch else None)


def build_memory(raw: dict | None, *, warmup: int, capacity: Capacity | None = None,
                 device: str = "cpu", unfinished: bool = True) -> MemoryReport | None:
    """The memory section from the child's raw record; None when no step had a peak.

    ``unfinished``: the step in progress when the script ended counts too (it raised: out of
    memory, say); not when it ended on its own, when what ran after the last step is no step.
    """
    if not raw or raw.get("error"):
        return None
    partial = raw.get("partial") if unfinished else None
    records = [r for r in [*raw.get("steps", []), partial] if r and r.get("phases")]
    if not records:
        return None
    steps = [_step_peak(r) for r in records]
    if not any(s.peak_bytes for s in steps):
        return None
    measured = [s for s in steps if s.step > warmup]
    warmup_only = not measured
    measured = measured or steps
    top = max(measured, key=lambda s: (s.peak_bytes, -s.step))
    record = next(r for r in records if r["step"] == top.step)
    high = Composition(*(max(values) for values in zip(*(s.high_water.as_tuple() for s in measured))))
    report = MemoryReport(top.peak_bytes, top.step, top.phase, top.at_peak, high, steps=steps,
                          measured_steps=len(measured), batch=record.get("batch"), allocator=raw.get("allocator"),
                          warmup_only=warmup_only, unfinished_step=partial["step"] if record is partial else None,
                          rises_per_step=_rising(measured))
    if capacity is None and device == "cuda" and raw.get("device_total_bytes"):
        capacity = Capacity(raw["device_total_bytes"], f"this GPU ({human_bytes(raw['device_total_bytes'])})")
    if capacity is not None:
        report.fit = project(record, top, capacity, raw.get("allocator"), foreach_step_bytes(record, raw, device))
    report.levers = levers(record, raw)
    smallest = CARDS[SMALLEST_CARD]
    reference = capacity or Capacity(int(smallest * GiB), f"a {SMALLEST_CARD} ({smallest:.2f} GiB)")
    if top.peak_bytes < MIN_SHARE_OF_CARD * reference.bytes:
        report.levers_matter = False
        report.too_small_for = reference.label
    return report


def _rising(steps: list[StepPeak]) -> float:
    """How fast the per-step peak rises over the measured steps (bytes/step), 0 when it does not."""
    peaks = [s.peak_bytes for s in steps]
    slope = theil_sen(peaks)
    return slope if slope > 0 and rising_share(peaks) >= RISING_SHARE else 0.0


def project(record: dict, top: StepPeak, capacity: Capacity, allocator: dict | None,
            foreach_bytes: int = 0) -> Fit:
    """Peak plus allowance against ``capacity``, and the largest batch that stays under it.

    ``foreach_bytes``: what the optimizer step would add on CUDA (see :func:`foreach_step_bytes`).
    """
    factor, measured = 1.0 + ALLOCATOR_OVERHEAD, False
    if allocator and allocator.get("max_reserved") and top.peak_bytes >= MIN_PEAK_TO_MEASURE_ALLOCATOR:
        factor, measured = max(1.0, allocator["max_reserved"] / top.peak_bytes), True
    phases = {name: Composition.of_snapshot(snapshot) for name, snapshot in record["phases"].items()}
    if foreach_bytes and "optimizer" in phases:
        phases["optimizer"].other += foreach_bytes
    peak = max(top.peak_bytes, *(phase.total for phase in phases.values()))
    projected = CUDA_CONTEXT_BYTES + math.ceil(peak * factor)
    max_batch = None
    if top.batch:
        usable = (capacity.bytes - CUDA_CONTEXT_BYTES) / factor
        limits = []
        for name, phase in phases.items():
            scaled = phase.activations + phase.other - (foreach_bytes if name == "optimizer" else 0)
            fixed = phase.fixed + (foreach_bytes if name == "optimizer" else 0)
            if usable < fixed:
                limits.append(0)
            elif scaled > 0:
                limits.append(math.floor(top.batch * (usable - fixed) / scaled))
        max_batch = max(0, min(limits)) if limits else None
    return Fit(capacity.bytes, capacity.label, projected, projected <= capacity.bytes, capacity.bytes - projected,
               max_batch, top.batch, factor, measured, foreach_bytes, CUDA_CONTEXT_BYTES)


def foreach_step_bytes(record: dict, raw: dict, device: str) -> int:
    """On CUDA, Adam-family optimizers step with the ``foreach`` implementation by default, which
    makes a temporary copy of every parameter (``_foreach_sqrt`` of the second moments); on CPU
    they loop over the parameters one at a time. A run measured on CPU is projected with the
    copy in place of the temporaries it measured; what it adds to the optimizer step's peak."""
    step = record["phases"].get("optimizer")
    default = [o for o in raw.get("optimizers") or []
               if o["class"] in FOREACH_COPIES and o.get("foreach") is None and not o.get("fused")]
    if device == "cuda" or step is None or not default:
        return 0
    end = record.get("end")
    measured = other_bytes(step) - (other_bytes(end) if end else 0)  # the loop's temporaries, measured here
    return max(0, step[1] - max(0, measured))


def worst_memory(reports) -> MemoryReport | None:
    """The rank with the highest peak (what has to fit on every GPU)."""
    found = [r for r in reports if r is not None]
    return max(found, key=lambda m: m.peak_bytes) if found else None
