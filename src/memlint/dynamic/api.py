"""``memlint.verify_script``: the Python API, and the one code path the CLI uses too."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import threading

from memlint.config import ConfigError, Configs
from memlint.dynamic.assess import assess, worst
from memlint.dynamic.budget import build_memory, worst_memory
from memlint.dynamic.cards import parse_capacity
from memlint.dynamic.confirm import mark_confirmed, static_findings
from memlint.dynamic.launcher import run_child
from memlint.dynamic.options import VerifyOptions, build_options
from memlint.dynamic.phases import note, unreached
from memlint.dynamic.plot import write_plot
from memlint.dynamic.report import VerifyReport

TORCH_MISSING = "memlint verify needs torch: pip install 'torch-memlint[verify]'"


def verify_script(path: str | None = None, *, module: str | None = None, args=(), **options) -> VerifyReport:
    """Run a training script for ``warmup + steps`` steps in a child process; return the report.

    ``options`` are those of :class:`memlint.dynamic.options.VerifyOptions` (``steps``,
    ``warmup``, ``device``, ``timeout``, ``threshold``, ``node_threshold``,
    ``rss_threshold``, ``trace_dir``, ``plot``, ``nproc_per_node``, ``static_check``,
    ``gpu_memory``);
    unset ones come from ``[tool.memlint.verify]`` in the nearest pyproject.toml.
    Usage errors raise :class:`memlint.config.ConfigError`; everything that goes wrong
    in the script itself is an ``inconclusive`` report with a reason.
    """
    opts = build_options(verify_config(path), script=path, module=module, args=list(args), **options)
    return run_verify(opts)


def verify_config(script: str | None = None) -> dict:
    """The ``[tool.memlint.verify]`` table of the nearest pyproject.toml above the script
    (above the current folder for ``-m``), as ``memlint check`` picks it; {} when none."""
    configs = Configs()
    return (configs.for_path(script) if script else configs.here()).verify


def run_verify(opts: VerifyOptions, on_progress=None) -> VerifyReport:
    name = opts.script if opts.script else f"-m {opts.module}"
    if opts.script and not os.path.isfile(opts.script):
        raise ConfigError(f"no such script: {opts.script}")
    if importlib.util.find_spec("torch") is None:
        return VerifyReport(name, opts.device, opts.steps, opts.warmup, "inconclusive", TORCH_MISSING)

    static = _StaticCheck(_source_file(opts) if opts.static_check else None)
    static.start()  # overlaps libcst's work with the child's run
    with tempfile.TemporaryDirectory(prefix="memlint-verify-") as workdir:
        outcome = run_child(opts, workdir, on_progress)
    ranks = assess(outcome, opts)
    capacity = parse_capacity(opts.gpu_memory)
    for rank in ranks:
        result = outcome.results.get(rank.rank, {})
        rank.memory = build_memory(result.get("memory"), warmup=opts.warmup, capacity=capacity,
                                   device=result.get("device") or opts.device,
                                   unfinished=result.get("status") == "raised")
    top = worst(ranks)
    device = next((r["device"] for r in outcome.results.values() if r.get("device")), None) or next(
        (d for _, d in sorted(outcome.devices.items()) if d), opts.device)
    report = VerifyReport(
        script=name, device=device, steps=opts.steps, warmup=opts.warmup, verdict=top.verdict,
        reason=(f"rank {top.rank}: " if len(ranks) > 1 else "") + top.reason,
        tensor_bytes_per_step=top.tensor_bytes_per_step, graph_nodes_per_step=top.graph_nodes_per_step,
        rss_bytes_per_step=top.rss_bytes_per_step, samples=top.samples, sites=top.sites,
        ranks=ranks if opts.nproc_per_node > 1 else [], exhausted_at_step=top.exhausted_at_step,
        details=top.details, memory=worst_memory(r.memory for r in ranks), notes=list(top.notes),
    )
    first = outcome.results.get(top.rank) or next(iter(outcome.results.values()), {})
    report.step_boundary, report.step_owner = first.get("step_boundary"), first.get("step_owner") or ""
    never_ran = unreached(first.get("stack"), first.get("loaders_ended"))
    phase = note(never_ran, len(report.samples), report.step_boundary == "optimizer")
    if phase and report.verdict != "inconclusive":
        report.notes.append(phase)
    static.join()
    report.static_checked = static.path is not None
    report.findings = mark_confirmed(static.findings, report.sites, report.verdict == "growth", never_ran)
    if opts.plot and report.samples:
        write_plot(report, opts.plot, opts.threshold, opts.node_threshold)
    return report


def _source_file(opts: VerifyOptions) -> str | None:
    """The file the static check reads: the script, or the module's source."""
    if opts.script:
        return opts.script
    sys.path.insert(0, os.getcwd())
    try:
        spec = importlib.util.find_spec(opts.module)
    except (ImportError, ValueError):
        spec = None
    finally:
        sys.path.pop(0)
    return spec.origin if spec is not None and spec.origin and spec.origin.endswith(".py") else None


class _StaticCheck(threading.Thread):
    """``memlint check`` on one file, in the background while the script runs."""

    def __init__(self, path: str | None) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.findings: list = []

    def run(self) -> None:
        if self.path:
            self.findings = static_findings(self.path)
