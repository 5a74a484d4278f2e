"""Text and JSON output of a verify report."""

from __future__ import annotations

import json
import os

from typing import TYPE_CHECKING

from memlint.dynamic.assess import human_bytes
from memlint.dynamic.boundaries import describe
from memlint.dynamic.report import RankReport, Site, VerifyReport

if TYPE_CHECKING:
    from memlint.dynamic.memory import MemoryReport

_LABELS = {"parameters": "parameters", "gradients": "gradients", "optimizer_state": "optimizer state",
           "activations": "activations", "other": "other"}


def render_json(report: VerifyReport) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"


def _where(path: str, line: int | None) -> str:
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    if rel.startswith(".." + os.sep):
        rel = path
    return f"{rel}:{line}" if line is not None else rel


def _holder_text(holder) -> str:
    """``'Model.step_losses' (list, 23 items, appended at leak.py:17)``."""
    if holder.kind == "closure":
        text = f"'{holder.name}' in a closure cell of {holder.function}()"
    elif holder.kind == "graph":
        text = f"the autograd graph of '{holder.name}'"
    else:
        text = f"'{holder.name}'"
    details = []
    if holder.container and holder.kind != "graph":
        details.append(holder.container + (f", {holder.items:,} items" if holder.items is not None else ""))
    if holder.line is not None:
        where = _where(holder.path, holder.line)
        details.append(f"{holder.action} at {where}" if holder.action else where)
    return text + (f" ({', '.join(details)})" if details else "")


def _site_line(site: Site, findings: list) -> str:
    if site.is_graph:
        made = site.holder is None or site.holder.line is None
        text = (f"  {_where(site.path, site.line)} in {site.function}: autograd graph +{site.count_per_step:g} "
                f"nodes/step")
        text += (" made here" if made else "") + (f", kept alive by {_holder_text(site.holder)}" if site.holder else "")
    else:
        text = (f"  {_where(site.path, site.line)} in {site.function}: +{human_bytes(site.bytes_per_step)}/step "
                f"({site.count_per_step:g} allocations/step)")
        if site.holder is not None:
            text += f", held by {_holder_text(site.holder)}"
    confirmed = [vf.finding for vf in findings if any(s is site for s in vf.sites)]
    if confirmed:
        text += "; confirms " + ", ".join(f"{f.code} at {_where(f.path, f.line)}" for f in confirmed)
    return text


def _signals(r: RankReport | VerifyReport) -> str:
    return (f"tensors {human_bytes(r.tensor_bytes_per_step)}/step, graph {r.graph_nodes_per_step:g} nodes/step, "
            f"RSS {human_bytes(r.rss_bytes_per_step)}/step")


def render_text(report: VerifyReport) -> str:
    header = f"{report.device}, {report.warmup} warmup + {report.steps} measured steps"
    if report.step_boundary:
        header += f"; {describe(report.step_boundary, report.step_owner)}"
    lines = [f"memlint verify {report.script} ({header})"]
    lines.append(f"verdict: {report.verdict}: {report.reason}")
    if report.tensor_bytes_per_step is not None:
        lines.append(f"  per step: {_signals(report)}")
    if report.details:
        lines.append("")
        lines.extend("  " + line for line in report.details.splitlines())
    for rank in report.ranks:
        lines.append(f"  rank {rank.rank}: {rank.verdict}: {rank.reason}")
    if report.sites:
        lines.append("")
        lines.append("where the surviving memory comes from:" if report.verdict == "growth"
                     else "steady survivors, below the thresholds:")
        lines.extend(_site_line(site, report.findings) for site in report.sites)
    if report.memory is not None:
        lines.append("")
        lines.extend(memory_lines(report.memory, report.findings, ranks=report.ranks,
                                  growing=report.verdict == "growth"))
    if report.findings:
        lines.append("")
        lines.append("static findings on this script (memlint check):")
        for vf in report.findings:
            f = vf.finding
            mark = "  [confirmed by this run]" if vf.confirmed else ""
            lines.append(f"  {_where(f.path, f.line)}:{f.column}: {f.code} {f.message}{mark}")
            if f.help:  # the remedy, now apart from the message (issue 17)
                lines.append(f"      help: {f.help}")
    return "\n".join(lines) + "\n"


def memory_lines(memory: MemoryReport, findings=(), ranks=(), growing: bool = False) -> list[str]:
    """The peak, its composition and high-water marks as a short table; the fit; the levers."""
    counted = (f"the highest of {memory.measured_steps} measured steps" if memory.measured_steps > 1
               else "the only measured step")
    if growing:
        counted += " (it rises with the growth above)"
    lines = [f"peak memory: {human_bytes(memory.peak_bytes)} in step {memory.peak_step} ({memory.peak_phase}), "
             f"{counted}"]
    measured_ranks = [r for r in ranks if r.memory is not None]
    if len(measured_ranks) > 1:
        top = next((r.rank for r in measured_ranks if r.memory is memory), None)
        lines[0] += f", on rank {top} (the highest)"
    at_peak, high = memory.peak_by_category.to_json(), memory.high_water_by_category.to_json()
    lines.append(f"  {'':<17}{'at the peak':>13}{'high-water':>13}")
    for key, label in _LABELS.items():
        share = f"{100 * at_peak[key] / memory.peak_bytes:>4.0f}%" if memory.peak_bytes else ""
        lines.append(f"  {label:<17}{human_bytes(at_peak[key]):>13}{human_bytes(high[key]):>13}  {share}")
    step = next((s for s in memory.steps if s.step == memory.peak_step), None)
    if step is not None and len(step.phase_peaks) > 1:
        lines.append("  peak by phase: " + ", ".join(f"{phase} {human_bytes(value)}"
                                                      for phase, value in step.phase_peaks.items()))
    if len(measured_ranks) > 1:
        lines.append("  peak by rank: " + ", ".join(f"rank {r.rank} {human_bytes(r.memory.peak_bytes)}"
                                                     for r in measured_ranks))
    if memory.allocator:
        lines.append(f"  CUDA allocator since the start: max allocated "
                     f"{human_bytes(memory.allocator['max_allocated'])}, max reserved "
                     f"{human_bytes(memory.allocator['max_reserved'])}")
    fit = memory.fit
    if fit is not None:
        allowance = (f"CUDA context {human_bytes(fit.context_bytes)}, allocator "
                     + (f"x{fit.allocator_factor:.2f} as measured" if fit.allocator_measured
                        else f"+{fit.allocator_factor - 1:.0%}"))
        if fit.foreach_bytes:
            allowance += f", optimizer step +{human_bytes(fit.foreach_bytes)} for CUDA's foreach"
        verdict = (f"fits, {human_bytes(fit.headroom_bytes)} headroom" if fit.fits
                   else f"does not fit, {human_bytes(-fit.headroom_bytes)} over")
        lines.append(f"fit on {fit.capacity_label}, a projection: {human_bytes(fit.projected_bytes)} with the "
                     f"allowance ({allowance}): {verdict}")
        if fit.max_batch is not None:
            lines.append(f"  largest batch that would fit: ~{fit.max_batch:,} (measured at {fit.batch:,}; "
                         "activations and other scale with the batch)")
    if memory.levers:
        lines.append("levers on the peak (estimated from this measurement):")
        width = max(len(human_bytes(lever.saves_bytes)) for lever in memory.levers) + 1
        lines.extend(f"  {'-' + human_bytes(lever.saves_bytes):>{width}}  {lever.what}" for lever in memory.levers)
    waste = [vf.finding for vf in findings if vf.finding.code.startswith("ML2")]
    if waste:
        lines.append("static findings that raise the peak: "
                     + ", ".join(f"{f.code} ({_where(f.path, f.line)})" for f in waste))
    return lines
