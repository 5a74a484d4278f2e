"""The ``memory`` section of a verify report: dataclasses and their JSON.

Built by :mod:`memlint.dynamic.budget` from what the child measured; the JSON keys
are a contract (docs/json.md, "memory").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations", "other")
PHASES = ("forward", "backward", "optimizer", "other")


def other_bytes(snapshot: list[int]) -> int:
    """The bytes of no class in one of the child's snapshots: ``[live, parameters, gradients, state,
    narrow activations, wide activations]`` (see :mod:`memlint.dynamic.peak`)."""
    return snapshot[0] - sum(snapshot[1:])


@dataclass
class Composition:
    """Bytes by class of storage."""

    parameters: int = 0
    gradients: int = 0
    optimizer_state: int = 0
    activations: int = 0
    other: int = 0

    @property
    def total(self) -> int:
        return self.parameters + self.gradients + self.optimizer_state + self.activations + self.other

    @property
    def fixed(self) -> int:
        """What does not scale with the batch."""
        return self.parameters + self.gradients + self.optimizer_state

    @classmethod
    def of_snapshot(cls, snapshot: list[int]) -> "Composition":
        """From the child's ``[live, parameters, gradients, state, narrow activations, wide activations]``."""
        _, p, g, s, narrow, wide = snapshot
        return cls(p, g, s, narrow + wide, max(0, other_bytes(snapshot)))

    def as_tuple(self) -> tuple[int, ...]:
        return (self.parameters, self.gradients, self.optimizer_state, self.activations, self.other)

    def to_json(self) -> dict[str, int]:
        return dict(zip(CATEGORIES, self.as_tuple()))


@dataclass
class StepPeak:
    """One step's highest live tensor bytes, its phase and composition; the peak of each phase."""

    step: int
    phase: str
    peak_bytes: int
    at_peak: Composition
    high_water: Composition
    phase_peaks: dict[str, int]
    batch: int | None = None


@dataclass
class Fit:
    """Whether the peak, with the allowance, fits ``capacity`` (a projection)."""

    capacity_bytes: int
    capacity_label: str
    projected_bytes: int
    fits: bool
    headroom_bytes: int
    max_batch: int | None
    batch: int | None  # the batch the projection starts from
    allocator_factor: float  # the allowance for the caching allocator, a factor on the peak
    allocator_measured: bool
    foreach_bytes: int = 0  # added to the optimizer step: CUDA's default foreach step (a run on CPU)
    context_bytes: int = 0  # the allowance for the CUDA context

    def to_json(self) -> dict[str, Any]:
        return {"capacity_bytes": self.capacity_bytes, "projected_bytes": self.projected_bytes, "fits": self.fits,
                "headroom_bytes": self.headroom_bytes, "max_batch": self.max_batch}


@dataclass
class Lever:
    """A change that would lower the peak, and the bytes it would save (estimated from the measurement)."""

    what: str
    saves_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "saves_bytes": self.saves_bytes}


@dataclass
class MemoryReport:
    """The ``memory`` section of a verify report (one rank)."""

    peak_bytes: int
    peak_step: int
    peak_phase: str
    peak_by_category: Composition
    high_water_by_category: Composition
    fit: Fit | None = None
    levers: list[Lever] = field(default_factory=list)
    steps: list[StepPeak] = field(default_factory=list)  # every step with a peak, warmup included
    measured_steps: int = 0
    batch: dict | None = None  # {"size", "module"} of the peak step, when seen
    allocator: dict | None = None  # CUDA: {"max_allocated", "max_reserved"}, since the start of the run
    warmup_only: bool = False  # no measured step ran: the peak is the warm-up steps'
    unfinished_step: int | None = None  # the peak is in this step, unfinished when the script raised
    rises_per_step: float = 0.0  # how fast the per-step peak rises over the measured steps (0: it does not)
    levers_matter: bool = True  # False: the peak is under 1% of the card, no lever can matter
    too_small_for: str = ""  # the card the peak was compared with, when levers_matter is False

    def to_json(self) -> dict[str, Any]:
        return {"peak_bytes": self.peak_bytes, "peak_step": self.peak_step, "peak_phase": self.peak_phase,
                "peak_by_category": self.peak_by_category.to_json(),
                "high_water_by_category": self.high_water_by_category.to_json(),
                "fit": self.fit.to_json() if self.fit else None,
                "levers": [lever.to_json() for lever in self.levers], "levers_matter": self.levers_matter,
                "warmup_only": self.warmup_only}
