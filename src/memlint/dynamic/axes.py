"""Axis ticks for verify's charts, chosen from the data (pure functions, no drawing).

An honest axis:

- spans at least ``min_span``, so that a flat series plots flat instead of having its last
  byte of jitter stretched over the whole panel (the caller picks the span: for memory, the
  growth that the verdict's threshold would add over the measured steps);
- puts ticks on "nice" steps (1, 2 or 5 x 10^k of the unit) and starts and ends on a tick;
- labels bytes in the binary unit (B, KiB, MiB, GiB, TiB) that the values call for, with as
  many decimals as the step needs, so that no two ticks read the same ("158.3 KiB" three
  times); when the step is too fine for the values' own unit (a flat 1.2 GiB), a smaller
  unit with whole numbers is used;
- never goes below zero for values that cannot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

BINARY_UNITS = (("TiB", 1024 ** 4), ("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024), ("B", 1))
TARGET_INTERVALS = 5  # about this many steps between the lowest and the highest tick
MAX_DECIMALS = 2  # a finer step in a unit moves to the next smaller unit


@dataclass(frozen=True)
class Axis:
    lo: float  # the axis starts here (the lowest tick)...
    hi: float  # ...and ends here (the highest tick)
    ticks: tuple[float, ...]
    labels: tuple[str, ...]

    def fraction(self, value: float) -> float:
        """Where ``value`` sits on the axis, 0 at ``lo`` and 1 at ``hi``."""
        return (value - self.lo) / (self.hi - self.lo)


def nice_step(raw: float) -> float:
    """The smallest 1, 2 or 5 x 10^k that is at least ``raw`` (> 0)."""
    exponent = math.floor(math.log10(raw))
    for mantissa in (1, 2, 5, 10):
        step = mantissa * 10.0 ** exponent
        if step >= raw * (1 - 1e-9):
            return step
    raise AssertionError("unreachable")


def decimals(step: float) -> int:
    """Decimals that tell apart ticks ``step`` apart (a 1/2/5 x 10^k step)."""
    return max(0, -math.floor(math.log10(step) + 1e-9))


def _range(values: Sequence[float], min_span: float, floor: float | None) -> tuple[float, float]:
    lo, hi = (min(values), max(values)) if values else (0.0, 0.0)
    if hi - lo < min_span:
        middle = (lo + hi) / 2
        lo, hi = middle - min_span / 2, middle + min_span / 2
    if floor is not None and lo < floor:
        lo, hi = floor, hi + (floor - lo)
    return lo, hi


def _ticks(lo: float, hi: float, step: float) -> list[float]:
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    if last == first:
        last += 1
    return [k * step for k in range(first, last + 1)]


def byte_axis(values: Sequence[float], min_span: float, intervals: int = TARGET_INTERVALS) -> Axis:
    """An axis for byte counts (never below zero), labelled in binary units."""
    lo, hi = _range(values, max(min_span, 1.0), 0.0)
    magnitude = max(abs(lo), abs(hi))
    units = [(name, size) for name, size in BINARY_UNITS if size <= max(magnitude, 1)]
    for name, size in units:
        step = nice_step((hi - lo) / size / intervals)
        if name == "B":
            step = max(step, 1.0)  # whole bytes
        digits = decimals(step)
        if digits <= MAX_DECIMALS or name == "B":
            ticks = _ticks(lo / size, hi / size, step)
            return Axis(ticks[0] * size, ticks[-1] * size, tuple(t * size for t in ticks),
                        tuple(f"{t:,.{digits}f} {name}" for t in ticks))
    raise AssertionError("unreachable: bytes are the last unit")


def count_axis(values: Sequence[float], min_span: float, intervals: int = TARGET_INTERVALS,
               floor: float | None = 0.0) -> Axis:
    """An axis for whole counts (graph nodes, steps): integer ticks with thousands separators."""
    lo, hi = _range(values, max(min_span, 1.0), floor)
    step = max(1.0, nice_step((hi - lo) / intervals))
    ticks = _ticks(lo, hi, step)
    return Axis(ticks[0], ticks[-1], tuple(ticks), tuple(f"{t:,.0f}" for t in ticks))


def step_ticks(first: int, last: int, intervals: int = TARGET_INTERVALS) -> tuple[int, ...]:
    """Step numbers to label on an x axis that spans exactly ``first..last``: the first step,
    then the multiples of a 1/2/5 x 10^k stride (none crowding the first)."""
    stride = int(max(1.0, nice_step((last - first) / intervals))) if last > first else 1
    ticks = [first]
    for step in range(math.ceil(first / stride) * stride, last + 1, stride):
        if step - first >= stride / 2:
            ticks.append(step)
    return tuple(ticks)
