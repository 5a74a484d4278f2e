"""The child side of ``memlint verify``: count steps, sample memory, stop the script.

Imported by :mod:`memlint.dynamic.child` in the process that runs the user's
script (one per rank under ``torch.distributed.run``). A step ends at each
``Optimizer.step`` of the first optimizer that steps (a global post hook), or at
each ``memlint.step()`` call. At every step boundary we sample the signals; after
``warmup + steps`` steps we measure the survivors, write the result file and raise
:class:`StopVerify` from inside the hook: measuring *before* unwinding matters,
because once the script's frames are gone its leaked objects are gone too.
"""

from __future__ import annotations

import json
import os
import sys
import weakref

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from memlint.dynamic import holders
from memlint.dynamic.peak import PeakAccountant
from memlint.dynamic.profiling import start_window_profiler
from memlint.dynamic.recorder import Recorder
from memlint.dynamic.storages import StorageTracker
from memlint.dynamic.system import available_ram
from memlint.dynamic.usercode import UserFiles, user_frames

_SESSION: "Session | None" = None
_MANUAL = object()  # the step owner when memlint.step() stepped before any optimizer


class StopVerify(BaseException):
    """Ends the user's script after the last measured step.

    A ``BaseException`` so that the script's own ``except Exception`` blocks let it pass.
    """


def manual_step() -> None:
    """``memlint.step()``: end one step in loops that never call ``Optimizer.step``."""
    if _SESSION is not None:
        _SESSION.manual_step()


def start_session(config: dict, rank: int) -> "Session":
    """Install the step hook and the storage tracker for this process."""
    global _SESSION
    _SESSION = Session(config, rank)
    _SESSION.install()
    return _SESSION


class Session:
    """Step counting and sampling for one process (one rank)."""

    def __init__(self, config: dict, rank: int) -> None:
        self.config = config
        self.rank = rank
        self.steps = int(config["steps"])
        self.warmup = int(config["warmup"])
        self.total = self.steps + self.warmup
        self.result_dir = config["result_dir"]
        self.trace_dir = config.get("trace_dir")
        self.step = 0
        self.profiler_conflict = False
        self.profiler = None
        self.done = False
        self._owner = None

    # -- setup -------------------------------------------------------------
    def install(self) -> None:
        requested = self.config.get("device", "auto")
        cuda = torch.cuda.is_available() and requested in ("auto", "cuda")
        self.device = "cuda" if cuda else "cpu"
        self.device_error = None
        if requested == "cuda" and not cuda:
            self.device_error = "RuntimeError: --device cuda, but torch.cuda.is_available() is False"
        self._torch = torch
        self.is_user = UserFiles()  # after importing torch, so that its folder counts as library code
        self.tracker = StorageTracker(self.device, self.is_user)
        self.peaks = PeakAccountant(self.tracker, self.warmup)
        self.peaks.install()  # before the step hook: a step's optimizer state is classed before the step ends
        register_optimizer_step_post_hook(self._optimizer_hook)
        self.recorder = Recorder(self.tracker, self.is_user, self.warmup, self.steps)
        self.tracker.__enter__()

    def _optimizer_hook(self, optimizer, args, kwargs) -> None:
        if self._owner is None:
            self._owner = weakref.ref(optimizer)
        elif self._owner is _MANUAL or self._owner() is not optimizer:
            return  # the first optimizer that steps (or memlint.step()) defines the step
        self.on_step()

    def manual_step(self) -> None:
        if self._owner is None:
            self._owner = _MANUAL
        if self._owner is _MANUAL:  # ignored in loops whose optimizer already defines the step
            self.on_step()

    # -- each step ---------------------------------------------------------
    def on_step(self) -> None:
        if self.done:
            raise StopVerify
        self.step += 1
        self._watch_profiler()
        self._sample()
        self._write_progress()
        if self.step >= self.total:
            self._finish()
            raise StopVerify

    def _tensor_bytes(self) -> int:
        if self.device == "cuda":
            return int(self._torch.cuda.memory_allocated())
        return self.tracker.live_bytes

    def _roots(self):
        frames = user_frames(sys._getframe(1), self.is_user)
        try:
            return holders.frame_roots(frames, self.is_user)
        finally:
            del frames

    def _sample(self) -> None:
        self.recorder.sample(self.step, self._roots(), self._tensor_bytes())

    def _write_progress(self) -> None:
        path = os.path.join(self.result_dir, f"progress-{self.rank}")
        with open(path, "w") as fh:
            fh.write(str(self.step))

    def _watch_profiler(self) -> None:
        """Note another profiler (ours would see nothing); start ours for --trace-dir lazily."""
        if self.step < self.warmup or self.profiler is not None:
            return
        if self._torch._C._autograd._profiler_enabled():
            self.profiler_conflict = True
            return
        if self.trace_dir and self.step < self.total:
            self.profiler = start_window_profiler(self.trace_dir, self.rank, self.device)

    # -- the end -----------------------------------------------------------
    def _finish(self) -> None:
        self.done = True
        if self.profiler is not None:
            self.profiler.stop()  # writes the trace
        self._write_result("done", sites=self.recorder.sites(self._roots()),
                           graph_holder=self.recorder.graph_holder())

    def headroom(self) -> int | None:
        if self.device == "cuda":
            torch = self._torch
            total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
            return int(total - torch.cuda.memory_allocated())
        return available_ram()

    def _write_result(self, status: str, **extra) -> None:
        data = {
            "rank": self.rank, "status": status, "step": self.step, "device": self.device,
            "samples": self.recorder.samples, "profiler_conflict": self.profiler_conflict,
            "headroom_bytes": self.headroom() if status == "done" else None,
            "sites": [], "graph_holder": None, "memory": self.peaks.to_json(self.device),
        }
        data.update(extra)
        path = os.path.join(self.result_dir, f"result-{self.rank}.json")
        with open(path + ".tmp", "w") as fh:
            json.dump(data, fh)
        os.replace(path + ".tmp", path)

    def record_end(self, status: str, **extra) -> None:
        """The script ended on its own (finished, exited or raised) before the last step."""
        if not self.done:
            self.done = True
            self._write_result(status, **extra)
