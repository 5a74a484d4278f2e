"""Verify a step *function* in the current process (what the pytest fixture uses).

Faster than a child process and good for a test suite: call ``fn`` for
``warmup + steps`` steps under the storage tracker and sample after each call.
The graph signal counts every autograd graph a tracked tensor keeps alive; holders
are named from what outlives a call of ``fn`` first (its closure cells, the globals it
names, ``self`` of a bound method and a partial's arguments), then anywhere on the heap.
"""

from __future__ import annotations

import functools

import torch

from memlint.dynamic import heap
from memlint.dynamic.assess import judge
from memlint.dynamic.budget import build_memory
from memlint.dynamic.graph import GraphTracker
from memlint.dynamic.options import build_options
from memlint.dynamic.peak import PeakAccountant
from memlint.dynamic.recorder import Recorder
from memlint.dynamic.report import VerifyReport
from memlint.dynamic.system import available_ram
from memlint.dynamic.usercode import UserFiles


def function_roots(fn) -> list[tuple[heap.Root, object]]:
    """The variables a step function can reach that outlive one call."""
    roots: list[tuple[heap.Root, object]] = []
    if isinstance(fn, functools.partial):
        inner = function_roots(fn.func)
        key = inner[0][0] if inner else heap.Root("", "variable", "<partial>", "", 1)
        roots.extend((heap.Root(f"partial argument {i}", "variable", key.function, key.path, key.first_line), arg)
                     for i, arg in enumerate([*fn.args, *fn.keywords.values()]))
        return roots + inner
    self = getattr(fn, "__self__", None)
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:  # a callable object: its attributes are the state
        return [(heap.Root(type(fn).__name__, "variable", "__call__", "", 1), fn)]
    key = functools.partial(heap.Root, kind="variable", function=fn.__name__, path=code.co_filename,
                            first_line=code.co_firstlineno)
    if self is not None:
        roots.append((key("self"), self))
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            roots.append((key(name), cell.cell_contents))
        except ValueError:  # an empty cell
            continue
    names = {name: fn.__globals__[name] for name in _global_names(code) if name in fn.__globals__}
    module_file = fn.__globals__.get("__file__") or code.co_filename
    roots.extend(heap.namespace_roots(names, "global", "<module>", module_file, 1))
    return roots


def _global_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _global_names(const)
    return names


def verify_function(fn, *, steps: int = 20, warmup: int = 3, device: str = "auto", **thresholds) -> VerifyReport:
    """Call ``fn()`` ``warmup + steps`` times here; report growth like ``memlint verify``.

    ``thresholds``: ``threshold``, ``node_threshold``, ``rss_threshold`` (see the README).
    """
    options = build_options(None, script="<function>", steps=steps, warmup=warmup, device=device, **thresholds)
    device = "cuda" if device in ("auto", "cuda") and torch.cuda.is_available() else "cpu"
    is_user = UserFiles()
    tracker = GraphTracker(device, is_user)
    recorder = Recorder(tracker, is_user, warmup, steps)
    peaks = PeakAccountant(tracker, warmup)
    peaks.install()
    try:
        with tracker:
            for step in range(1, steps + warmup + 1):
                fn()
                live = torch.cuda.memory_allocated() if device == "cuda" else tracker.live_bytes
                recorder.sample(step, live)
            sites, graph_holder = recorder.attribute(function_roots(fn))
    finally:
        peaks.uninstall()
    headroom = (torch.cuda.mem_get_info()[0] if device == "cuda" else available_ram())
    result = {"samples": recorder.samples, "sites": sites, "graph_holder": graph_holder,
              "headroom_bytes": headroom, "device": device, "profiler_conflict": False,
              "bounded_state": recorder.bounded_summary()}
    rank = judge(0, result, options)
    name = getattr(fn, "__qualname__", None) or repr(fn)
    return VerifyReport(name, device, steps, warmup, rank.verdict, rank.reason, rank.tensor_bytes_per_step,
                        rank.graph_nodes_per_step, rank.rss_bytes_per_step, rank.samples, rank.sites,
                        exhausted_at_step=rank.exhausted_at_step,
                        memory=build_memory(peaks.to_json(device), warmup=warmup, device=device))
