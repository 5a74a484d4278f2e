"""``memlint.step()``: the explicit end of a step, for loops ``memlint verify`` cannot step
on its own. It imports nothing: outside ``memlint verify`` it does nothing, and it must not
cost a training loop anything."""

from __future__ import annotations

import sys


def step() -> None:
    """Mark the end of one training step for ``memlint verify``.

    Only needed by loops that ``memlint verify`` cannot step automatically. Outside
    ``memlint verify`` this does nothing.
    """
    runtime = sys.modules.get("memlint.dynamic.runtime")  # loaded only in a verify child
    if runtime is not None:
        runtime.manual_step()
