"""Text and JSON output of a verify report."""

from __future__ import annotations

import json
import os

from memlint.dynamic.assess import human_bytes
from memlint.dynamic.report import RankReport, Site, VerifyReport


def render_json(report: VerifyReport) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"


def _where(path: str, line: int | None) -> str:
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    if rel.startswith(".." + os.sep):
        rel = path
    return f"{rel}:{line}" if line is not None else rel


def _site_line(site: Site) -> str:
    if site.is_graph:
        return (f"  {_where(site.path, site.line)} in {site.function}: autograd graph +{site.count_per_step:g} "
                f"nodes/step kept alive by '{site.holder.name}'")
    text = (f"  {_where(site.path, site.line)} in {site.function}: +{human_bytes(site.bytes_per_step)}/step "
            f"({site.count_per_step:g} allocations/step)")
    if site.holder is not None:
        text += f", held by '{site.holder.name}'"
        if site.holder.line is not None:
            text += f" ({_where(site.holder.path, site.holder.line)})"
    return text


def _signals(r: RankReport | VerifyReport) -> str:
    return (f"tensors {human_bytes(r.tensor_bytes_per_step)}/step, graph {r.graph_nodes_per_step:g} nodes/step, "
            f"RSS {human_bytes(r.rss_bytes_per_step)}/step")


def render_text(report: VerifyReport) -> str:
    lines = [f"memlint verify {report.script} ({report.device}, {report.warmup} warmup + {report.steps} "
             f"measured steps)"]
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
        lines.extend(_site_line(site) for site in report.sites)
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
