"""Decide growth / stable from per-step samples (pure Python: the parent never imports torch).

A leak adds roughly the same amount every step, so the question per signal is
"is the trend over the measured steps clearly above noise?". We answer it with
two numbers that outliers (a garbage collection, one big batch) cannot move much:

* the Theil–Sen slope: the median of the slopes between every pair of samples;
* the share of rising pairs: among sample pairs that differ, the fraction where
  the later one is larger (0.5 for noise, 1.0 for steady growth).

A signal grows when its slope reaches its threshold *and* most pairs rise.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

# A signal whose sample pairs rise less often than this is treated as noise.
RISING_SHARE = 0.75

# Defaults for [tool.memlint.verify]; chosen so that one detached scalar per step
# (4-8 bytes, no graph) reads stable while every real leak we measured
# (>= 8 autograd nodes/step or >= tens of KiB/step) reads growth.
DEFAULT_THRESHOLD = 1024  # tensor bytes per step
DEFAULT_NODE_THRESHOLD = 1.0  # autograd graph nodes per step
DEFAULT_RSS_THRESHOLD = 1 << 20  # process RSS bytes per step: a coarse backstop


def theil_sen(values: list[float]) -> float:
    """Median slope over all pairs of (index, value); 0.0 for fewer than two values."""
    n = len(values)
    if n < 2:
        return 0.0
    slopes = [(values[j] - values[i]) / (j - i) for i in range(n) for j in range(i + 1, n)]
    return float(median(slopes))


def rising_share(values: list[float]) -> float:
    """Fraction of differing pairs (i < j) where values[j] > values[i]; 0.0 when all equal."""
    up = down = 0
    n = len(values)
    for i in range(n):
        vi = values[i]
        for j in range(i + 1, n):
            if values[j] > vi:
                up += 1
            elif values[j] < vi:
                down += 1
    return up / (up + down) if up + down else 0.0


@dataclass
class Trend:
    """The trend of one signal over the measured steps."""

    slope: float
    rising: float
    threshold: float

    @property
    def grows(self) -> bool:
        return self.slope >= self.threshold and self.rising >= RISING_SHARE


def trend(values: list[float], threshold: float) -> Trend:
    return Trend(theil_sen(values), rising_share(values), threshold)


def steps_until_exhausted(slope: float, headroom: float | None) -> int | None:
    """Steps until ``headroom`` bytes are used up at ``slope`` bytes/step (None if unknown)."""
    if headroom is None or slope <= 0:
        return None
    return int(headroom // slope) + 1
