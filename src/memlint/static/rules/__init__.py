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
    return [code for code, _ in _manifest()]


def default_codes() -> list[str]:
    return [code for code, default in _manifest() if default]


@lru_cache(maxsize=1)
def _manifest() -> tuple[tuple[str, bool], ...]:
    """(code, enabled by default) of every rule. Importing the rules imports libcst (a
    quarter of a second), which a run whose files are all cached never needs: the list is
    saved beside the rules, keyed by a fingerprint of memlint's source files, and read
    back while they are unchanged."""
    import json
    import os

    from memlint.static.cache import code_fingerprint

    folder = Path(__file__).resolve().parent / "__pycache__"
    saved = folder / f"rules-{code_fingerprint()}.json"
    try:
        data = json.loads(saved.read_text(encoding="utf-8"))
        return tuple((str(code), bool(default)) for code, default in data)
    except (OSError, ValueError, TypeError):
        pass
    manifest = tuple((rule.code, bool(rule.enabled_by_default)) for rule in all_rules())
    try:
        folder.mkdir(exist_ok=True)
        for old in folder.glob("rules-*.json"):
            old.unlink()
        tmp = folder / f".rules-{os.getpid()}.tmp"
        tmp.write_text(json.dumps(manifest), encoding="utf-8")
        os.replace(tmp, saved)
    except OSError:
        pass  # read-only install: import the rules each time
    return manifest


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
