"""Samples per step and the final attribution, shared by the child runtime and the pytest fixture.

The caller decides when a step ends and which variables are the named roots (the
user's frames in the child, the step function's closure in the fixture); the
recorder samples the signals, the live bytes per allocation site and the autograd
nodes per allocation site at every step. A site grows when its own live bytes
trend upwards over the measured steps, which catches both a list that gains a
tensor per step and one tensor that is re-grown by ``torch.cat`` every step; the
batch and loss of the current step (alive at any step boundary) stay flat. The
graph signal counts the nodes kept alive by every tracked tensor, whoever holds it
(:mod:`memlint.dynamic.graph`). At the end, once, the holder of each growing site
and of the fastest-growing graph is found on the heap (:mod:`memlint.dynamic.heap`).

What memlint itself adds must not read as the script's growth. Optimizer state bounded
by construction (LBFGS's history, :mod:`memlint.dynamic.bounded`) is left out of the live
bytes and of the sites. The RSS signal is the resident memory in use (RSS less what
malloc holds free, which the tracker's own small allocations make vary from run to run)
less memlint's bookkeeping: these per-step records and what it keeps per tracked storage.
"""

from __future__ import annotations

import sys
from collections import Counter

from memlint.dynamic.bindings import binding
from memlint.dynamic.bounded import BoundedState, bounded_history
from memlint.dynamic.graph import (
    GraphTracker,
    graph_roots,
    graph_sinks,
    sample_graph,
    saved_storages,
    tensors_sharing,
)
from memlint.dynamic.heap import HeapHolder, HolderSearch
from memlint.dynamic.system import resident_in_use
from memlint.dynamic.usercode import UserFiles
from memlint.dynamic.verdict import RISING_SHARE, rising_share, theil_sen

REPRESENTATIVES = 4  # surviving storages per site whose holder is looked up
MAX_SINKS = 6  # kept graphs named, to name the activations they saved
# What memlint keeps per tracked live storage (its Survivor, weakref.finalize, weak references to
# its tensors, the peak accountant's entry): measured with tracemalloc, 1,036 B on CPython 3.11.
BOOKKEEPING_PER_STORAGE = 1024


class Recorder:
    def __init__(self, tracker: GraphTracker, is_user: UserFiles, warmup: int, steps: int) -> None:
        self.tracker = tracker
        self.is_user = is_user
        self.warmup = warmup
        self.steps = steps
        self.samples: list[dict] = []
        self.site_totals: list[dict] = []  # per sample: site -> (live bytes, live storages)
        self.graph_totals: list[dict] = []  # per sample: site -> autograd nodes first reached from its tensors
        self.bounded_bytes: list[int] = []  # per sample: bytes of bounded optimizer state left out
        self.histories: list[BoundedState] = []  # that state at the last sample
        self.records_bytes = 0  # what the per-step records above take

    def sample(self, step: int, tensor_bytes: int) -> None:
        """Record the signals at the end of ``step`` (1-based); the tracker moves to the next step."""
        histories = self._bounded_histories()
        left_out = set().union(*(h.keys for h in histories))
        left_out_bytes = sum(self.tracker.live[key].nbytes for key in left_out if key in self.tracker.live)
        nodes, per_site = sample_graph(self.tracker)
        sites = self.tracker.by_site(left_out)
        sample = {"step": step, "tensor_bytes": tensor_bytes - left_out_bytes, "graph_nodes": nodes,
                  "rss_bytes": 0}
        self.samples.append(sample)
        self.graph_totals.append(per_site)
        self.site_totals.append(sites)
        self.bounded_bytes.append(left_out_bytes)
        self.histories = histories
        self.records_bytes += _records_size(sample, per_site, sites)
        if self.tracker.accountant is not None:
            self.tracker.accountant.end_step(step)
        # last, so that everything recorded for this step counts as memlint's
        sample["rss_bytes"] = resident_in_use() - self._bookkeeping_bytes()
        self.tracker.step = step + 1

    def _bookkeeping_bytes(self) -> int:
        """What memlint itself holds that grows with the run: its records, and its entry per live storage."""
        return self.records_bytes + BOOKKEEPING_PER_STORAGE * (len(self.tracker.live) + len(self.tracker.foreign))

    def _bounded_histories(self) -> list[BoundedState]:
        accountant = self.tracker.accountant
        if accountant is None:
            return []
        return [h for h in map(bounded_history, accountant.live_optimizers()) if h is not None]

    def bounded_summary(self) -> dict | None:
        """The optimizer history left out of the measured steps, if it grew there: what it is, how full."""
        window = self._window(self.bounded_bytes)
        if not window or window[-1] <= window[0]:
            return None
        return {"bytes_per_step": theil_sen(window), "histories": [h.to_json() for h in self.histories]}

    def restart(self) -> None:
        """Forget every sample: steps are counted again from 1 (a new step boundary took over)."""
        self.samples.clear()
        self.site_totals.clear()
        self.graph_totals.clear()
        self.bounded_bytes.clear()
        self.tracker.restart()

    def _window(self, series: list) -> list:
        """The samples from the end of warmup on (the baseline) to the last step."""
        return series[max(0, self.warmup - 1):]

    def _growing_sites(self) -> list[tuple[float, float, tuple]]:
        window = self._window(self.site_totals)
        growing = []
        for site in {site for totals in window for site in totals}:
            nbytes = [totals.get(site, (0, 0))[0] for totals in window]
            slope = theil_sen(nbytes)
            if slope > 0 and rising_share(nbytes) >= RISING_SHARE:
                counts = theil_sen([totals.get(site, (0, 0))[1] for totals in window])
                growing.append((slope, counts, site))
        growing.sort(key=lambda g: (-g[0], g[2]))
        return growing

    def _graph_site(self) -> tuple[tuple | None, float] | None:
        """The allocation site whose tensors hold the fastest-growing autograd graph, and its slope."""
        window = self._window(self.graph_totals)
        best, best_slope = None, 0.0
        for site in {site for counts in window for site in counts}:
            slope = theil_sen([counts.get(site, 0) for counts in window])
            if slope > best_slope:
                best, best_slope = (site,), slope
        return (best[0], best_slope) if best else None

    def attribute(self, roots) -> tuple[list[dict], dict | None]:
        """(growing tensor sites with their holders, the holder of the growing graph or None).

        ``roots``: (heap.Root, value) pairs, the variables that name a holder best. For each
        site a few surviving storages born after warmup are looked up, together with the
        kept graphs (tensors whose graph no other tracked graph contains). A storage that no
        Python object holds (an activation saved for backward: its tensor is gone, or kept
        alive from C++ only) is named by the kept graph that saved it.
        """
        growing = self._growing_sites()
        graph = self._graph_site()
        last_step = self.samples[-1]["step"] if self.samples else 0
        wanted: list[list[int]] = []
        for _, _, site in growing:
            keys = [key for key, s in self.tracker.live.items() if s.site == site and s.step > self.warmup]
            wanted.append(_spread(keys, self.tracker, last_step))
        sinks = [key for key, _, _ in graph_sinks(self.tracker, self.warmup)]
        graph_keys: list[int] = []
        if graph is not None:
            at_site = [key for key in sinks if (s := self.tracker.survivor(key)) is not None and s.site == graph[0]]
            if not at_site:  # a graph grown in place on one tensor made during warmup (total_loss += loss)
                at_site = list(dict.fromkeys(key for key, site, _ in graph_roots(self.tracker) if site == graph[0]))
            graph_keys = _spread(at_site, self.tracker, last_step)
        named = self._name_storages([k for keys in wanted for k in keys] + graph_keys,
                                    self._sinks_for([k for keys in wanted for k in keys], sinks, last_step), roots)

        def holder_of(keys: list[int]) -> dict | None:
            found = [named[key] for key in keys if named.get(key) is not None]
            return holder_json(_most_common(found), self.is_user)

        sites = []
        for (slope, counts, (path, line, function)), keys in zip(growing, wanted):
            sites.append({"path": path, "line": line, "function": function, "bytes_per_step": slope,
                          "count_per_step": counts, "holder": holder_of(keys)})
        graph_holder = None
        if graph is not None:
            held = holder_of(graph_keys)
            site, slope = graph
            graph_holder = {**(held or {"name": None, "function": None, "path": None, "line": None}),
                            "nodes_per_step": slope, "site": list(site) if site else None}
        return sites, graph_holder

    def _sinks_for(self, keys: list[int], sinks: list[int], last_step: int) -> list[int]:
        """The kept graphs to name: one made in the step of each storage in ``keys`` (the graph
        likeliest to have saved it), then a few spread over the steps."""
        def born(key: int) -> int | None:
            survivor = self.tracker.survivor(key)
            return survivor.step if survivor is not None else None

        by_step: dict[int, int] = {}
        for key in sinks:
            by_step.setdefault(born(key), key)
        chosen = [by_step[step] for step in dict.fromkeys(born(key) for key in keys) if step in by_step]
        return list(dict.fromkeys(chosen + _spread(sinks, self.tracker, last_step, MAX_SINKS)))

    def _name_storages(self, keys: list[int], sinks: list[int], roots) -> dict[int, HeapHolder]:
        """Storage key -> holder, for the storages in ``keys`` (and the kept graphs ``sinks``) that
        can be named: by a path to one of their tensors, else by a named kept graph that saved them."""
        keys = list(dict.fromkeys(keys + sinks))
        targets: list = []  # the only containers of ours that hold tensors while the heap is searched
        owners: list[int] = []
        for key in keys:
            for tensor in self.tracker.tensors(key):  # the creator, and the latest view
                owners.append(key)
                targets.append(tensor)
        search = HolderSearch(roots, self.is_user)
        named: dict[int, HeapHolder] = {}

        def name(owners: list[int], found: list) -> None:
            for key, holder in zip(owners, found):
                if holder is not None and (key not in named or holder.rank < named[key].rank):
                    named[key] = holder

        name(owners, search.find(targets))
        orphans = {key for key in keys if key not in named}
        if orphans:  # held through another tensor on the same storage: a view, a base
            view_owners, views = tensors_sharing(orphans, {id(t) for t in targets})
            name(view_owners, search.find(views))
            owners += view_owners
            targets += views
            views.clear()
            orphans = {key for key in keys if key not in named}
        for key, tensor in zip(owners, targets):
            if not orphans:
                break
            if key in named and key in sinks and tensor.grad_fn is not None:
                for saved in saved_storages(tensor, orphans):
                    named[saved] = _through_graph(named[key])
                    orphans.discard(saved)
        targets.clear()
        return named


def _records_size(*records: dict) -> int:
    """Bytes of one step's records: the containers and their values (the site keys are shared)."""
    total = 0
    for record in records:
        total += sys.getsizeof(record)
        for value in record.values():
            total += sys.getsizeof(value)
            if isinstance(value, tuple):
                total += sum(sys.getsizeof(item) for item in value)
    return total


def _spread(keys: list[int], tracker: GraphTracker, last_step: int, count: int = 0) -> list[int]:
    """Up to ``count`` (REPRESENTATIVES) storage keys spread over the steps, the current step's
    only when there is nothing older (what the current step made is also held by its locals)."""
    count = count or REPRESENTATIVES
    older = [k for k in keys if (s := tracker.survivor(k)) is not None and s.step < last_step]
    pool = older or keys
    if len(pool) <= count:
        return pool
    step = (len(pool) - 1) / (count - 1)
    return [pool[round(i * step)] for i in range(count)]


def _most_common(names: list[HeapHolder]) -> HeapHolder | None:
    """The name most representatives share; a direct holder over a graph that saved the storage."""
    if not names:
        return None
    counts = Counter(h.name for h in names)
    return min(names, key=lambda h: (-counts[h.name], h.kind == "graph", h.rank))


def _through_graph(holder: HeapHolder) -> HeapHolder:
    return HeapHolder(holder.name, "graph", holder.function, holder.path, holder.first_line, holder.container,
                      holder.items, holder.owner_file, holder.rank)


def holder_json(holder: HeapHolder | None, is_user: UserFiles) -> dict | None:
    """A holder with the line (and function) of the user's code where it is appended to, stored
    in or rebound; no line in library code (``state["func_evals"] += 1`` in LBFGS stores no tensor)."""
    if holder is None:
        return None
    found = None
    if holder.path and is_user(holder.path):
        found = binding(holder.path, holder.function, holder.first_line, holder.name, holder.kind)
    path = holder.path
    if found is None and holder.owner_file and holder.owner_file != holder.path and is_user(holder.owner_file):
        found = binding(holder.owner_file, "<module>", 1, holder.name, holder.kind)
        path = holder.owner_file if found else holder.path
    line, function, action = found if found else (None, holder.function, None)
    return {"name": holder.name, "function": function, "path": path, "line": line, "kind": holder.kind,
            "container": holder.container, "items": holder.items, "action": action}
