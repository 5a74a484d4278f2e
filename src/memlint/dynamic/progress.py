"""A one-line progress bar over steps, drawn on a terminal's stderr."""

from __future__ import annotations

import sys

WIDTH = 30


class ProgressBar:
    """``update(step)`` redraws the line in place; ``close()`` erases it before the report."""

    def __init__(self, total: int, warmup: int, stream=None) -> None:
        self.total = total
        self.warmup = warmup
        self.stream = stream or sys.stderr

    def update(self, step: int) -> None:
        done = min(step, self.total)
        filled = WIDTH * done // self.total if self.total else WIDTH
        phase = "starting" if done == 0 else "warmup" if done < self.warmup else "measuring"
        self.stream.write(f"\r[{'#' * filled}{'.' * (WIDTH - filled)}] step {done}/{self.total} {phase}   ")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\r" + " " * (WIDTH + 40) + "\r")
        self.stream.flush()
