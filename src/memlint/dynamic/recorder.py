"""Samples per step and the final attribution, shared by the child runtime and the pytest fixture.

The caller decides when a step ends and which variables are the roots (the user's
frames in the child, the step function's closure in the fixture); the recorder
samples the signals, and the live bytes per allocation site at every step. A site
grows when its own live bytes trend upwards over the measured steps, which catches
both a list that gains a tensor per step and one tensor that is re-grown by
``torch.cat`` every step; the batch and loss of the current step (alive at any step
boundary) stay flat. At the end it also finds the variable holding each growing
site, and the variable whose autograd graph grew fastest.
"""

from __future__ import annotations

from memlint.dynamic import holders
from memlint.dynamic.bindings import binding_line
from memlint.dynamic.storages import StorageTracker
from memlint.dynamic.system import rss_bytes
from memlint.dynamic.usercode import UserFiles
from memlint.dynamic.verdict import RISING_SHARE, rising_share, theil_sen


class Recorder:
    def __init__(self, tracker: StorageTracker, is_user: UserFiles, warmup: int, steps: int) -> None:
        self.tracker = tracker
        self.is_user = is_user
        self.warmup = warmup
        self.steps = steps
        self.samples: list[dict] = []
        self.holder_counts: list[dict] = []  # per sample: HolderKey -> graph nodes
        self.site_totals: list[dict] = []  # per sample: site -> (live bytes, live storages)

    def sample(self, step: int, roots, tensor_bytes: int) -> None:
        """Record the signals at the end of ``step`` (1-based); the tracker moves to the next step."""
        nodes, per_holder = holders.graph_nodes(roots, self.is_user)
        self.samples.append({"step": step, "tensor_bytes": tensor_bytes, "graph_nodes": nodes,
                             "rss_bytes": rss_bytes()})
        self.holder_counts.append(per_holder)
        self.site_totals.append(self.tracker.by_site())
        if self.tracker.accountant is not None:
            self.tracker.accountant.end_step(step)
        self.tracker.step = step + 1

    def _window(self, series: list) -> list:
        """The samples from the end of warmup on (the baseline) to the last step."""
        return series[max(0, self.warmup - 1):]

    def sites(self, roots) -> list[dict]:
        """Allocation sites whose live bytes grow over the measured steps, with their holder."""
        window = self._window(self.site_totals)
        growing = []
        for site in {site for totals in window for site in totals}:
            nbytes = [totals.get(site, (0, 0))[0] for totals in window]
            slope = theil_sen(nbytes)
            if slope > 0 and rising_share(nbytes) >= RISING_SHARE:
                counts = theil_sen([totals.get(site, (0, 0))[1] for totals in window])
                growing.append((slope, counts, site))
        growing.sort(key=lambda g: (-g[0], g[2]))
        sites = []
        for slope, counts, (path, line, function) in growing:
            ids = self.tracker.storages_from((path, line, function), self.warmup + 1)
            held = holders.storage_holders(roots, set(ids), self.is_user) if ids else {}
            keys = list(held.values())
            holder = max(set(keys), key=keys.count) if keys else None
            sites.append({"path": path, "line": line, "function": function, "bytes_per_step": slope,
                          "count_per_step": counts, "holder": holder_json(holder)})
        return sites

    def graph_holder(self) -> dict | None:
        """The variable whose reachable autograd graph grew fastest over the measured steps."""
        window = self._window(self.holder_counts)
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
