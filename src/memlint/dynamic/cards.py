"""GPU capacities for ``--gpu-memory``: a size (``24GiB``, ``80GB``) or a known card's name.

No dependencies beyond the configuration errors: the options module validates with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlint.config import ConfigError

GiB = 1 << 30

# Memory as torch reports it on each card (torch.cuda.get_device_properties().total_memory, the
# "total capacity" of its out-of-memory message), the smallest figure seen in public reports: a
# few hundred MiB below the marketed size, and a little different across drivers and ECC modes.
CARDS: dict[str, float] = {
    "T4": 14.56, "V100-16GB": 15.77, "V100-32GB": 31.75, "A10": 21.99, "A10G": 22.06, "L4": 22.03,
    "RTX3090": 23.55, "RTX4090": 23.64, "A100-40GB": 39.39, "L40S": 44.52, "A100-80GB": 79.15,
    "H100": 79.11, "H200": 139.80,
}
_ALIASES = {"H100-80GB": "H100", "3090": "RTX3090", "4090": "RTX4090", "A10-24GB": "A10", "A10G-24GB": "A10G"}
_AMBIGUOUS = {"A100": ("A100-40GB", "A100-80GB"), "V100": ("V100-16GB", "V100-32GB")}
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)\s*$", re.IGNORECASE)


def _normal(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).upper()


_CARD_BY_NAME = {_normal(name): name for name in CARDS} | {_normal(a): c for a, c in _ALIASES.items()}


@dataclass(frozen=True)
class Capacity:
    """A GPU's memory in bytes, and how to name it in the report."""

    bytes: int
    label: str


def parse_capacity(value: str | int | float | None) -> Capacity | None:
    """``--gpu-memory``: ``24GiB``, ``40GB`` (10^9), ``512MiB``, bytes as a number (API), or a card name."""
    if value is None:
        return None
    if isinstance(value, str):
        name = _normal(value)
        if name in _CARD_BY_NAME:
            card = _CARD_BY_NAME[name]
            return Capacity(int(CARDS[card] * GiB), f"{card} ({CARDS[card]:.2f} GiB)")
        if name in _AMBIGUOUS:
            raise ConfigError(f"--gpu-memory {value.strip()}: say which, {' or '.join(_AMBIGUOUS[name])}")
    size = parse_size(value, what="--gpu-memory", cards=True)
    label = value.strip().replace(" ", "") if isinstance(value, str) else f"{size / GiB:.2f} GiB"
    return Capacity(size, label)


def parse_size(value: str | int | float, *, what: str = "size", cards: bool = False) -> int:
    """Bytes in ``24GiB``, ``80GB`` (10^9), ``512 MiB``; a number is bytes."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ConfigError(f"{what}: {value!r} is not a size")
    if isinstance(value, (int, float)):
        size = int(value)
    else:
        match = _SIZE.match(value)
        if match is None:
            if re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
                raise ConfigError(f"{what} {value}: give a unit (24GiB, 24GB)" + (" or a card name" if cards else ""))
            if cards:
                raise ConfigError(f"{what} {value!r} is neither a size (24GiB, 80GB, 512MiB) nor a known card "
                                  f"({', '.join(CARDS)})")
            raise ConfigError(f"{what} {value!r} is not a size (24GiB, 80GB, 512MiB)")
        size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size <= 0:
        raise ConfigError(f"{what} must be positive, not {value!r}")
    return size
