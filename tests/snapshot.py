"""Snapshot assertions: compare output with a file in tests/snapshots/.

When the output changes on purpose (a rule's message was rewritten), regenerate the files
with ``MEMLINT_UPDATE_SNAPSHOTS=1 python3 -m pytest tests/test_text_report.py`` and review
the diff like any other change.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"


def assert_snapshot(name: str, actual: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("MEMLINT_UPDATE_SNAPSHOTS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path.name}: run with MEMLINT_UPDATE_SNAPSHOTS=1 to write it"
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                            fromfile=f"snapshots/{name}", tofile="actual"))
        raise AssertionError(f"output differs from snapshots/{name} (MEMLINT_UPDATE_SNAPSHOTS=1 rewrites it):\n{diff}")
