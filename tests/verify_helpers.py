"""Helpers for the verify tests: run ``memlint verify`` on a fixture once and reuse the result."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from click.testing import CliRunner

from memlint.cli import main

VERIFY_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "verify"
FAST = ("--steps", "8", "--warmup", "2")


def fixture(name: str) -> str:
    return str(VERIFY_FIXTURES / name)


def line_of(name: str, text: str) -> int:
    """The 1-based line of the only line in a fixture that contains ``text``."""
    lines = [i for i, line in enumerate((VERIFY_FIXTURES / name).read_text().splitlines(), 1) if text in line]
    assert len(lines) == 1, f"{text!r} found on lines {lines} of {name}"
    return lines[0]


@lru_cache(maxsize=None)
def verify(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``memlint verify ARGS``; cached, each run costs seconds."""
    result = CliRunner().invoke(main, ["verify", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def verify_json(*args: str) -> tuple[int, dict]:
    code, out, _ = verify("--format", "json", *args)
    return code, json.loads(out)
