"""The rule registry: every ``MLxxx_*.py`` module here holds one :class:`Rule` subclass.

Adding a rule means adding a module (and its page in ``rules/``); nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from memlint.static.rule import Rule


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    found: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("ML"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and getattr(value, "code", None):
                if value.__module__ == module.__name__:
                    if value.code in found and found[value.code] is not value:
                        raise RuntimeError(f"two rules claim code {value.code}")
                    found[value.code] = value
    return tuple(found[code] for code in sorted(found))


def all_codes() -> list[str]:
    return [rule.code for rule in all_rules()]


def default_codes() -> list[str]:
    return [rule.code for rule in all_rules() if rule.enabled_by_default]


def rules_by_code(codes: Iterable[str]) -> list[type[Rule]]:
    wanted = set(codes)
    # Rules with a detector only: ML901/ML902 are produced by the runner itself.
    return [rule for rule in all_rules() if rule.code in wanted and rule.code not in ("ML901", "ML902")]


def _page_folders() -> list[Path]:
    package = Path(__file__).resolve().parents[2]  # src/memlint
    return [package / "rules", package.parents[1] / "rules"]


def rule_page(code: str) -> str | None:
    """The Markdown page of a rule, shipped in the wheel (``memlint/rules/CODE.md``)."""
    if code not in all_codes():
        return None
    for folder in _page_folders():
        page = folder / f"{code}.md"
        if page.is_file():
            return page.read_text(encoding="utf-8")
    rule = next(r for r in all_rules() if r.code == code)
    return f"# {rule.code} {rule.name}\n\n{rule.summary}\n"
