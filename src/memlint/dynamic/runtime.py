"""The child side of ``memlint verify``: count steps, sample memory, stop the script.

Imported by :mod:`memlint.dynamic.child` in the process that runs the user's
script (one per rank under ``torch.distributed.run``). Where a step ends is
decided by :mod:`memlint.dynamic.boundaries` (an optimizer step, a DataLoader
batch, an outermost module call, ``memlint.step()``). At every step boundary we sample the signals; after
``warmup + steps`` steps we measure the survivors, write the result file and raise
:class:`StopVerify` from inside the hook: measuring *before* unwinding matters,
because once the script's frames are gone its leaked objects are gone too.
"""

from __future__ import annotations

import json
import os
import sys
import threading

import torch

from memlint.dynamic import heap
from memlint.dynamic.boundaries import STEP_ON, StepBoundaries
from memlint.dynamic.graph import GraphTracker
from memlint.dynamic.peak import PeakAccountant
from memlint.dynamic.profiling import start_window_profiler
from memlint.dynamic.recorder import Recorder
from memlint.dynamic.system import available_ram
from memlint.dynamic.usercode import UserFiles, user_frames

_SESSION: "Session | None" = None


def _running_since_the_first_step(frame, event, arg) -> None:
    """The mark on a frame that ran the first step (see Session._mark_stack); as a local trace
    function, which it would be under a trace function set later, it traces nothing."""
    return None


class StopVerify(BaseException):
    """Ends the user's script after the last measured step.

    A ``BaseException`` so that the script's own ``except Exception`` blocks let it pass.
    """


def manual_step() -> None:
    """``memlint.step()``: end one step here (it outranks every automatic boundary)."""
    if _SESSION is not None:
        _SESSION.boundaries.marker()


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
        self.loaders_ended_before: int | None = None  # DataLoader passes ended before the first step
        step_on = config.get("step_on")
        self.boundaries = StepBoundaries(self.on_step, self.restart, STEP_ON[step_on] if step_on else None)

    # -- setup -------------------------------------------------------------
    def install(self) -> None:
        requested = self.config.get("device", "auto")
        cuda = torch.cuda.is_available() and requested in ("auto", "cuda")
        self.device = "cuda" if cuda else "cpu"
        self.device_error = None
        if requested == "cuda" and not cuda:
            self.device_error = "RuntimeError: --device cuda, but torch.cuda.is_available() is False"
        with open(os.path.join(self.result_dir, f"device-{self.rank}"), "w") as fh:
            fh.write(self.device)  # the parent names the device even when the script never ends a step
        self._torch = torch
        self.is_user = UserFiles()  # after importing torch, so that its folder counts as library code
        self.tracker = GraphTracker(self.device, self.is_user)
        self.peaks = PeakAccountant(self.tracker, self.warmup)
        self.peaks.install()  # before the step hooks: a step's optimizer state is classed before the step ends
        self.boundaries.install()
        self.recorder = Recorder(self.tracker, self.is_user, self.warmup, self.steps)
        self.tracker.__enter__()

    def restart(self) -> None:
        """A higher-ranked step boundary took over: count steps again from the first."""
        if self.step == 0:
            return
        self.step = 0
        self.recorder.restart()
        self._write_progress()

    # -- each step ---------------------------------------------------------
    def on_step(self) -> None:
        if self.done:
            raise StopVerify
        self.step += 1
        if self.step == 1:
            self._mark_stack()
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
            return heap.frame_roots(frames, self.is_user)
        finally:
            del frames

    def _mark_stack(self) -> None:
        """Mark the user's frames running at the first step, to tell at the end which ones never
        returned since (their code after the current line never ran: see memlint.dynamic.phases).

        A frame's ``f_trace`` is read only while a trace function is set (a debugger, coverage):
        when one is, nothing is marked."""
        self.loaders_ended_before = self.boundaries.loaders_ended
        if sys.gettrace() is not None:
            return
        for frame in user_frames(sys._getframe(1), self.is_user):
            if frame.f_trace is None:
                frame.f_trace = _running_since_the_first_step

    def _stack(self) -> list[dict]:
        """The user's frames at the end, outermost first, and whether each ran since the first step."""
        frames = user_frames(sys._getframe(1), self.is_user)
        try:
            return [{"path": frame.f_code.co_filename, "function": frame.f_code.co_name,
                     "first_line": frame.f_code.co_firstlineno, "line": frame.f_lineno,
                     "since_first_step": frame.f_trace is _running_since_the_first_step}
                    for frame in reversed(frames)]
        finally:
            del frames

    def _sample(self) -> None:
        self.recorder.sample(self.step, self._tensor_bytes())

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
        sites, graph_holder = self.recorder.attribute(self._roots())
        ended = self.boundaries.loaders_ended
        self._write_result("done", sites=sites, graph_holder=graph_holder,
                           bounded_state=self.recorder.bounded_summary(), stack=self._stack(),
                           loaders_ended=None if ended is None else ended - (self.loaders_ended_before or 0))
        if threading.current_thread() is not threading.main_thread():
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)  # a step ended in a worker thread: StopVerify there would not stop the script

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
            "step_boundary": self.boundaries.kind, "step_owner": self.boundaries.owner_label,
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
