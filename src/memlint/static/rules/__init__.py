"""The rule registry: the :class:`Rule` class of each code in :mod:`memlint.catalogue`.

Each code's class lives in ``memlint/static/rules/<CODE>_<name>.py``; a module is imported
only when its rule is asked for, so a run imports just the rules it uses.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Iterable

from memlint.catalogue import BY_CODE, CATALOGUE, RUNNER_CODES
from memlint.static.rule import Rule


@lru_cache(maxsize=None)
def rule_class(code: str) -> type[Rule]:
    """The rule class of ``code`` (KeyError for a code that is not in the catalogue)."""
    info = BY_CODE[code]
    module = importlib.import_module(f"{__name__}.{info.module}")
    found = [value for value in vars(module).values()
             if isinstance(value, type) and issubclass(value, Rule) and value.__dict__.get("code") == code]
    if len(found) != 1:
        raise RuntimeError(f"{module.__name__} must define exactly one Rule subclass with code {code}")
    return found[0]


def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, in code order."""
    return tuple(rule_class(info.code) for info in CATALOGUE)


def rules_by_code(codes: Iterable[str]) -> list[type[Rule]]:
    """The classes of ``codes`` that have a detector (ML901/ML902 come from the runner), in code order."""
    wanted = set(codes)
    return [rule_class(info.code) for info in CATALOGUE if info.code in wanted and info.code not in RUNNER_CODES]
