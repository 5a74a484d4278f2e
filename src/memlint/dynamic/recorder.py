"""Samples per step and the final attribution, shared by the child runtime and the pytest fixture.

The caller decides when a step ends and which variables are the roots (the user's
frames in the child, the step function's closure in the fixture); the recorder
samples the signals and, at the end, groups surviving storages by allocation site
and finds the variable whose autograd graph grew fastest.
"""

from __future__ import annotations

from memlint.dynamic import holders
from memlint.dynamic.bindings import binding_line
from memlint.dynamic.storages import StorageTracker, growing_sites
from memlint.dynamic.system import rss_bytes
from memlint.dynamic.usercode import UserFiles
from memlint.dynamic.verdict import theil_sen


class Recorder:
    def __init__(self, tracker: StorageTracker, is_user: UserFiles, warmup: int, steps: int) -> None:
        self.tracker = tracker
        self.is_user = is_user
        self.warmup = warmup
        self.steps = steps
        self.samples: list[dict] = []
        self.holder_counts: list[dict] = []  # per sample: HolderKey -> graph nodes

    def sample(self, step: int, roots, tensor_bytes: int) -> None:
        """Record the signals at the end of ``step`` (1-based); the tracker moves to the next step."""
        nodes, per_holder = holders.graph_nodes(roots, self.is_user)
        self.samples.append({"step": step, "tensor_bytes": tensor_bytes, "graph_nodes": nodes,
                             "rss_bytes": rss_bytes()})
        self.holder_counts.append(per_holder)
        self.tracker.step = step + 1

    def sites(self, roots) -> list[dict]:
        """Allocation sites of storages that survive from most measured steps, with their holder."""
        growth = growing_sites(self.tracker.survivors_since(self.warmup + 1), self.steps)
        wanted = {key for g in growth for key in g.storage_ids}
        held = holders.storage_holders(roots, wanted, self.is_user) if wanted else {}
        sites = []
        for g in growth:
            path, line, function = g.site
            keys = [held[k] for k in g.storage_ids if k in held]
            holder = max(set(keys), key=keys.count) if keys else None
            sites.append({"path": path, "line": line, "function": function, "bytes_per_step": g.bytes_per_step,
                          "count_per_step": g.count_per_step, "holder": holder_json(holder)})
        return sites

    def graph_holder(self) -> dict | None:
        """The variable whose reachable autograd graph grew fastest over the measured steps."""
        window = self.holder_counts[max(0, self.warmup - 1):]
        best, best_slope = None, 0.0
        for key in {key for counts in window for key in counts}:
            slope = theil_sen([counts.get(key, 0) for counts in window])
            if slope > best_slope:
                best, best_slope = key, slope
        if best is None:
            return None
        return {**holder_json(best), "nodes_per_step": best_slope}


def holder_json(key: holders.HolderKey | None) -> dict | None:
    """A holder with the line (and function) where it is rebound or grown."""
    if key is None:
        return None
    found = binding_line(key.path, key.function, key.first_line, key.name)
    line, function = found if found else (None, key.function)
    return {"name": key.name, "function": function, "path": key.path, "line": line}
