"""Helpers for the verify tests: run ``memlint verify`` on fixtures, several runs at a time.

Each run is a separate ``memlint verify`` process that spends most of its time
importing torch in its child, on one core. The test module registers the runs it
will need with :func:`plan`; the first :func:`verify` call starts all of them on a
pool as wide as the machine, so on two cores the file takes about half as long.
Results are cached by arguments: tests that look at the same run share it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from memlint.dynamic.launcher import SPAWN_LOCK

VERIFY_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "verify"
FAST = ("--steps", "8", "--warmup", "2")
RUN_TIMEOUT = 600

_pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
_runs: dict[tuple, Future] = {}
_planned: list[tuple] = []


def fixture(name: str) -> str:
    return str(VERIFY_FIXTURES / name)


def line_of(name: str, text: str) -> int:
    """The 1-based line of the only line in a fixture that contains ``text``."""
    lines = [i for i, line in enumerate((VERIFY_FIXTURES / name).read_text().splitlines(), 1) if text in line]
    assert len(lines) == 1, f"{text!r} found on lines {lines} of {name}"
    return lines[0]


def plan(*args: str, cwd: str | None = None) -> None:
    """Announce a run a test will ask for, so that it can start early."""
    _planned.append((args, cwd))


def _run(args: tuple, cwd: str | None) -> tuple[int, str, str]:
    command = [sys.executable, "-m", "memlint.cli", "verify", *args]
    with SPAWN_LOCK:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    out, err = proc.communicate(timeout=RUN_TIMEOUT)
    return proc.returncode, out, err


def _start(args: tuple, cwd: str | None) -> Future:
    if (args, cwd) not in _runs:
        _runs[args, cwd] = _pool.submit(_run, args, cwd)
    return _runs[args, cwd]


def verify(*args: str, cwd: str | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``memlint verify ARGS``."""
    while _planned:
        _start(*_planned.pop(0))
    return _start(args, cwd).result()


def verify_json(*args: str, cwd: str | None = None) -> tuple[int, dict]:
    code, out, err = verify("--format", "json", *args, cwd=cwd)
    assert out, err
    return code, json.loads(out)
