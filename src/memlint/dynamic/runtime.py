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

from memlint.dynamic import holders
from memlint.dynamic.bindings import binding_line
from memlint.dynamic.system import available_ram, rss_bytes
from memlint.dynamic.usercode import UserFiles, user_frames
from memlint.dynamic.verdict import theil_sen

_SESSION: "Session | None" = None


class StopVerify(BaseException):
    """Ends the user's script after the last measured step.

    A ``BaseException`` so that the script's own ``except Exception`` blocks let it pass.
    """


def manual_step() -> None:
    """``memlint.step()``: end one step in loops that never call ``Optimizer.step``."""
    if _SESSION is not None:
        _SESSION.on_step()


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
        self.is_user = UserFiles()
        self.step = 0
        self.samples: list[dict] = []
        self.holder_counts: list[dict] = []  # per sample: HolderKey -> graph nodes
        self.profiler_conflict = False
        self.profiler = None
        self.done = False
        self._owner = None

    # -- setup -------------------------------------------------------------
    def install(self) -> None:
        import torch
        from torch.optim.optimizer import register_optimizer_step_post_hook

        from memlint.dynamic.storages import StorageTracker

        requested = self.config.get("device", "auto")
        cuda = torch.cuda.is_available() and requested in ("auto", "cuda")
        self.device = "cuda" if cuda else "cpu"
        self._torch = torch
        self.is_user = UserFiles()  # now that torch is imported, its folder is known
        register_optimizer_step_post_hook(self._optimizer_hook)
        self.tracker = StorageTracker(self.device, self.is_user)
        self.tracker.__enter__()

    def _optimizer_hook(self, optimizer, args, kwargs) -> None:
        if self._owner is None:
            self._owner = weakref.ref(optimizer)
        elif self._owner() is not optimizer:
            return  # with several optimizers, the first that steps defines the step
        self.on_step()

    # -- each step ---------------------------------------------------------
    def on_step(self) -> None:
        if self.done:
            raise StopVerify
        self.step += 1
        self.tracker.step = self.step + 1
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
        roots = self._roots()
        nodes, per_holder = holders.graph_nodes(roots, self.is_user)
        del roots
        self.samples.append(
            {"step": self.step, "tensor_bytes": self._tensor_bytes(), "graph_nodes": nodes, "rss_bytes": rss_bytes()}
        )
        self.holder_counts.append(per_holder)

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
            from memlint.dynamic.profiling import start_window_profiler

            self.profiler = start_window_profiler(self.trace_dir, self.rank, self.device)

    # -- the end -----------------------------------------------------------
    def _finish(self) -> None:
        from memlint.dynamic.storages import growing_sites

        self.done = True
        if self.profiler is not None:
            self.profiler.stop()  # writes the trace
        survivors = self.tracker.survivors_since(self.warmup + 1)
        growth = growing_sites(survivors, self.steps)
        wanted = {key for g in growth for key in g.storage_ids}
        roots = self._roots()
        held = holders.storage_holders(roots, wanted, self.is_user) if wanted else {}
        del roots
        sites = []
        for g in growth:
            path, line, function = g.site
            keys = [held[k] for k in g.storage_ids if k in held]
            holder = max(set(keys), key=keys.count) if keys else None
            sites.append({
                "path": path, "line": line, "function": function,
                "bytes_per_step": g.bytes_per_step, "count_per_step": g.count_per_step,
                "holder": _holder_json(holder),
            })
        self._write_result("done", sites=sites, graph_holder=self._graph_holder())

    def _graph_holder(self) -> dict | None:
        """The variable whose reachable autograd graph grew fastest over the measured steps."""
        window = self.holder_counts[max(0, self.warmup - 1):]
        keys = {key for counts in window for key in counts}
        best, best_slope = None, 0.0
        for key in keys:
            slope = theil_sen([counts.get(key, 0) for counts in window])
            if slope > best_slope:
                best, best_slope = key, slope
        if best is None:
            return None
        data = _holder_json(best)
        data["nodes_per_step"] = best_slope
        return data

    def headroom(self) -> int | None:
        if self.device == "cuda":
            torch = self._torch
            total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
            return int(total - torch.cuda.memory_allocated())
        return available_ram()

    def _write_result(self, status: str, **extra) -> None:
        data = {
            "rank": self.rank, "status": status, "step": self.step, "device": self.device,
            "samples": self.samples, "profiler_conflict": self.profiler_conflict,
            "headroom_bytes": self.headroom() if status == "done" else None,
            "sites": [], "graph_holder": None,
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


def _holder_json(key: holders.HolderKey | None) -> dict | None:
    if key is None:
        return None
    line = binding_line(key.path, key.function, key.first_line, key.name)
    return {"name": key.name, "function": key.function, "path": key.path, "line": line}
