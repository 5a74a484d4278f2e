"""``--format json``: an array of finding objects (their keys: docs/json.md)."""

from __future__ import annotations

import json

from memlint.findings import CheckResult


def render_json(result: CheckResult) -> str:
    return json.dumps([f.to_json() for f in result.findings], indent=2) + "\n"
