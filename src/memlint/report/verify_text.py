"""The text report of ``memlint verify``, in the shape of ``memlint check``'s.

The verdict comes first, on one line (coloured as an error, an all-clear or a warning), with
the run's facts under it; then one block per growing site, drawn like a finding: its
``path:line:col``, what grows and what holds it, the source line that allocated it (and the
line that grows its holder) underlined, and the static findings it confirms; then the
peak-memory table, the fit and the levers; then the static findings on the script as
``memlint check`` prints them. A failed run shows the script's traceback or last output.

Source lines are read from the files on disk when the report is drawn (or from ``sources``,
for tests); a line that cannot be read is left out, never an error.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from dataclasses import replace
from typing import TYPE_CHECKING, Sequence

from memlint.dynamic.assess import human_bytes, human_count
from memlint.dynamic.boundaries import describe
from memlint.dynamic.report import Holder, RankReport, Site, VerifiedFinding, VerifyReport
from memlint.findings import Finding
from memlint.report.style import BLUE, BOLD, CYAN, GREEN, RED, YELLOW, Style
from memlint.report.text import ELLIPSIS, MAX_LINE_WIDTH, Sources, display, full_finding, one_line, rule_hint

if TYPE_CHECKING:
    from memlint.dynamic.memory import MemoryReport

VERDICT_COLOURS = {"growth": RED, "stable": GREEN, "inconclusive": YELLOW}
# a growing site is drawn as an error; survivors below the thresholds (a stable run) as info
_SITE_SEVERITY = {"growth": "error"}
_LABELS = {"parameters": "parameters", "gradients": "gradients", "optimizer_state": "optimizer state",
           "activations": "activations", "other": "other"}


def render_text(report: VerifyReport, colour: bool = False, sources: dict[str, str] | None = None) -> str:
    """The whole report; ANSI-coloured with ``colour``; ``sources`` maps a path to its text
    when it is not to be read from disk."""
    style = Style(colour)
    files = Sources(sources or {})
    out = headline_lines(report, style)
    rank = _of_rank(report)
    if report.details:
        out.append("")
        out.extend(_details(report.details, rank, style))
    if report.sites:
        out.append("")
        heading = ("where the surviving memory comes from" if report.verdict == "growth"
                   else "steady survivors, below the thresholds")
        out.append(style.paint(heading + rank + ":", BOLD))
        for site in report.sites:
            out.append("")
            out.extend(site_block(site, report.findings, report.verdict, files, style, report.static_checked))
    if report.memory is not None:
        out.append("")
        out.extend(memory_lines(report.memory, report.findings, ranks=report.ranks,
                                growing=report.verdict == "growth", style=style))
    if report.findings:
        out.append("")
        out.append(style.paint("static findings on this script (memlint check):", BOLD))
        for verified in report.findings:
            out.append("")
            out.extend(_static_finding(verified, files, style))
        hint = rule_hint(vf.finding for vf in report.findings)
        if hint:
            out.append("")
            out.append(hint)
    return "\n".join(out) + "\n"


# ----- the verdict and the run ----------------------------------------------------------------
def headline_lines(report: VerifyReport, style: Style) -> list[str]:
    """``growth: <reason>``, then how the run was measured, the slopes and each rank."""
    word = style.paint(report.verdict, BOLD, VERDICT_COLOURS.get(report.verdict, YELLOW))
    lines = [f"{word}: {style.paint(one_line(report.reason), BOLD)}"]
    run = f"{report.device}, {report.warmup} warmup + {report.steps} measured steps"
    if report.step_boundary:
        run += f"; {describe(report.step_boundary, report.step_owner)}"
    lines.append(f"  {style.paint(one_line(where(report.script)), BOLD)} ({run})")
    if report.tensor_bytes_per_step is not None and report.verdict != "stable":  # a stable reason gives them
        lines.append(f"  per step{_of_rank(report)}: {signals(report)}")
    lines.extend(f"  note: {one_line(note)}" for note in report.notes)
    for rank in report.ranks:
        rank_word = style.paint(rank.verdict, BOLD, VERDICT_COLOURS.get(rank.verdict, YELLOW))
        lines.append(f"  rank {rank.rank}: {rank_word}: {one_line(rank.reason)}")
    return lines


def signals(r: RankReport | VerifyReport) -> str:
    """``tensors +10.0 KiB, graph +6 nodes, RSS +34.2 KiB``: the slope of each signal."""
    tensors, nodes, rss = r.tensor_bytes_per_step, r.graph_nodes_per_step, r.rss_bytes_per_step
    return (f"tensors {'+' if tensors > 0 else ''}{human_bytes(tensors)}, graph {'+' if nodes > 0 else ''}"
            f"{human_count(nodes)} nodes, RSS {'+' if rss > 0 else ''}{human_bytes(rss)}")


def _of_rank(report: VerifyReport) -> str:
    """`` (rank 1)`` when the figures, sites and output shown are one rank's of several."""
    for rank in report.ranks:
        if rank.samples is report.samples or (rank.sites and rank.sites is report.sites):
            return f" (rank {rank.rank})"
    return ""


def _details(details: str, rank: str, style: Style) -> list[str]:
    """The script's traceback, or the last lines it printed, indented under a heading."""
    text = details.strip("\n")
    heading = "the script's traceback" if text.lstrip().startswith("Traceback") else "the script's last output"
    return ([style.paint(heading + rank + ":", BOLD)]
            + [f"  {one_line(_FRAME.sub(_relative_frame, line))}".rstrip() for line in text.splitlines()])


# a frame of a traceback: its file is shown as the report's other paths are, relative to here
_FRAME = re.compile(r'^(\s*File ")([^"]+)(", line \d+)')


def _relative_frame(match: re.Match) -> str:
    path = match.group(2)
    return match.group(1) + (where(path) if os.path.isabs(path) else path) + match.group(3)


def where(path: str, line: int | None = None, column: int | None = None) -> str:
    """``path[:line[:column]]`` with the path relative to the current folder when under it."""
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    if rel.startswith(".." + os.sep):
        rel = path
    if line is None:
        return rel
    return f"{rel}:{line}" + (f":{column}" if column is not None else "")


# ----- a growing site -------------------------------------------------------------------------
def holder_text(holder: Holder) -> str:
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
        at = where(holder.path, holder.line)
        details.append(f"{holder.action} at {at}" if holder.action else at)
    return text + (f" ({', '.join(details)})" if details else "")


def _what_grows(site: Site, function: str) -> str:
    """``+10.0 KiB/step in forward() (1 allocation/step), held by ...``."""
    if site.is_graph:
        made = site.holder is None or site.holder.line is None
        text = f"autograd graph +{human_count(site.count_per_step)} nodes/step" + (" made" if made else "") + function
        return text + (f", kept alive by {holder_text(site.holder)}" if site.holder else "")
    text = f"+{human_bytes(site.bytes_per_step)}/step{function} ({allocations(site.count_per_step)})"
    return text + (f", held by {holder_text(site.holder)}" if site.holder else "")


def allocations(per_step: float) -> str:
    """``1 allocation/step``, ``3 allocations/step``, ``1 allocation every 6 steps`` (not 0.166667/step)."""
    if 0 < per_step < 0.95:
        return f"1 allocation every {human_count(1 / per_step)} steps"
    count = human_count(per_step)
    return f"{count} allocation{'' if count == '1' else 's'}/step"


_ACTIONS = {"appended": "appended to {} here", "extended": "{} extended here", "added": "added to {} here",
            "stored": "stored in {} here", "accumulated": "accumulated into {} here", "rebound": "{} rebound here",
            "assigned": "{} assigned here"}


def _holder_label(holder: Holder) -> str:
    name = f"'{holder.name}'"
    return _ACTIONS.get(holder.action or "", "{} grows here").format(name)


def confirmed_by(site: Site, findings: Sequence[VerifiedFinding]) -> list[Finding]:
    return [vf.finding for vf in findings if any(s is site for s in vf.sites)]


def site_block(site: Site, findings: Sequence[VerifiedFinding], verdict: str, sources: Sources,
               style: Style, static_checked: bool = False) -> list[str]:
    """One growing site, drawn like a finding of ``memlint check``; with ``static_checked``, a
    growing site that no static finding explains says so (what the rules should learn next)."""
    severity = _SITE_SEVERITY.get(verdict, "info")
    text = sources.lines(_at(site.path, site.line))
    code = _code_span(text, site.line)
    column = code[0] + 1 if code else None
    location = _location(site.path, site.line, column, style)
    lines = [f"{location} {style.paint(_what_grows(site, f' in {site.function}()'), BOLD)}"]

    marks: list[tuple[int, str | None, str, str]] = []  # (line, its file when another, label, marker)
    holder = site.holder
    holder_line = holder.line if holder is not None and holder.kind != "graph" else None
    same_line = holder_line == site.line and holder is not None and holder.path == site.path
    if site.is_graph:
        label = _holder_label(holder) if holder is not None and same_line else "the graph is made here"
        marks.append((site.line, None, label, "^"))
    else:
        marks.append((site.line, None, "allocated here" + (f", {_holder_label(holder)}" if same_line else ""), "^"))
    if holder_line is not None and not same_line:
        if holder.path != site.path:
            marks.append((holder_line, holder.path, _holder_label(holder), "-"))
        else:  # in the order of the file
            marks.append((holder_line, None, _holder_label(holder), "-"))
            marks.sort(key=lambda mark: mark[0])
    drawn = _draw(site.path, marks, sources, style, severity)
    lines.extend(drawn)
    confirmed = confirmed_by(site, findings)
    width = _gutter_width(marks)
    pad = " " * width
    if confirmed or (static_checked and verdict == "growth"):
        if drawn:
            lines.append(f"{pad} {style.gutter('|')}")
        for finding in confirmed:
            what = f"confirms {finding.code} at {where(finding.path, finding.line)}"
            lines.append(f"{pad} {style.gutter('=')} {style.paint(what, BOLD)} ({finding.name})")
        if not confirmed:
            lines.append(f"{pad} {style.gutter('=')} no static rule covers this line (memlint check finds nothing "
                         "that explains this growth)")
    return lines


def _location(path: str, line: int, column: int | None, style: Style) -> str:
    colon = style.paint(":", CYAN)
    text = style.paint(one_line(where(path)), BOLD) + colon + str(line)
    if column is not None:
        text += colon + str(column)
    return text + colon


def _at(path: str, line: int) -> Finding:
    """A place to look up source lines by (``Sources`` reads them for findings)."""
    return Finding(path, line, 1, line, 1, "", "", "info", "")


def _code_span(text: list[str] | None, line: int) -> tuple[int, int] | None:
    """The 0-based start and end of the code on ``line``: its indentation and a trailing
    comment left out."""
    if text is None or not 1 <= line <= len(text):
        return None
    source = text[line - 1]
    start = len(source) - len(source.lstrip())
    end = len(source.rstrip())
    if start >= end:
        return None
    try:
        for token in tokenize.generate_tokens(io.StringIO(source.strip() + "\n").readline):
            if token.type == tokenize.COMMENT:
                end = start + len(source.strip()[:token.start[1]].rstrip())
                break
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # a line of a longer statement: underline all of it
    return (start, end) if end > start else (start, len(source.rstrip()))


def _gutter_width(marks: Sequence[tuple[int, str | None, str, str]]) -> int:
    return max(len(str(line)) for line, *_ in marks)


def _draw(path: str, marks: list[tuple[int, str | None, str, str]], sources: Sources, style: Style,
          severity: str) -> list[str]:
    """The marked lines with a gutter, rustc's way: ``...`` between lines apart, ``::: path``
    before a line of another file; the span underlined with the marker and its label."""
    width = _gutter_width(marks)
    pad = " " * width
    out: list[str] = []
    previous: tuple[str, int] | None = None
    for line, other_file, label, marker in marks:
        file = other_file or path
        text = sources.lines(_at(file, line))
        span = _code_span(text, line)
        if span is None:
            continue
        if other_file is not None:
            out.append(f"{pad}{style.gutter(':::')} {one_line(where(file, line))}")
        if previous is None or other_file is not None:
            out.append(f"{pad} {style.gutter('|')}")
        elif previous == (file, line - 1):
            pass
        else:
            out.append(style.gutter("..."))
        shown, starts = display(text[line - 1])
        left, right = starts[span[0]], starts[span[1]]
        suffix = ""
        if starts[-1] > MAX_LINE_WIDTH:  # a very long line: its start, and the marks inside it
            shown = shown[:MAX_LINE_WIDTH]
            suffix = ELLIPSIS
            right = min(right, MAX_LINE_WIDTH)
            left = min(left, right - 1)
        paint = ((lambda s: style.severity(s, severity)) if marker == "^"
                 else (lambda s: style.paint(s, BOLD, BLUE)))
        out.append(f"{style.gutter(f'{line:>{width}} |')} {shown}{suffix}".rstrip())
        out.append(f"{pad} {style.gutter('|')} {' ' * left}{paint(marker * max(1, right - left) + ' ' + label)}")
        previous = (file, line)
    return out


# ----- the static findings --------------------------------------------------------------------
def _static_finding(verified: VerifiedFinding, sources: Sources, style: Style) -> list[str]:
    finding = verified.finding
    shown = replace(finding, path=where(finding.path))
    lines = full_finding(shown, sources, style)
    if verified.confirmed:
        lines[0] += "  " + style.paint("[confirmed by this run]", BOLD, RED)
    return lines


# ----- peak memory ----------------------------------------------------------------------------
def memory_lines(memory: MemoryReport, findings=(), ranks=(), growing: bool = False,
                 style: Style | None = None) -> list[str]:
    """The peak, its composition and high-water marks as a short table; the fit; the levers."""
    style = style or Style(False)
    if memory.warmup_only:
        ran = len(memory.steps)
        counted = ((f"the highest of the {ran} warm-up steps that ran" if ran > 1 else "the one warm-up step that ran")
                   + ": no measured step ran, and a peak is otherwise taken over the measured steps only")
    else:
        counted = (f"the highest of {memory.measured_steps} measured steps" if memory.measured_steps > 1
                   else "the only measured step")
    if growing and memory.rises_per_step:
        counted += f" (it rises {human_bytes(memory.rises_per_step)}/step with the growth above)"
    step = f"step {memory.peak_step}" + (", unfinished when the script raised" if memory.unfinished_step else "")
    peak = f"peak memory: {human_bytes(memory.peak_bytes)} in {step} ({memory.peak_phase})"
    lines = [f"{style.paint(peak, BOLD)}, {counted}"]
    measured_ranks = [r for r in ranks if r.memory is not None]
    if len(measured_ranks) > 1:
        top = next((r.rank for r in measured_ranks if r.memory is memory), None)
        lines[0] += f", on rank {top} (the highest)"
    at_peak, high = memory.peak_by_category.to_json(), memory.high_water_by_category.to_json()
    lines.append(f"  {'':<17}{'at the peak':>13}{'high-water':>13}")
    # Inference (no backward pass, no optimizer) has neither: rows of zeros would only suggest otherwise.
    absent = [key for key in ("gradients", "optimizer_state") if not at_peak[key] and not high[key]]
    for key, label in _LABELS.items():
        if key in absent and len(absent) == 2:
            continue
        share = f"{100 * at_peak[key] / memory.peak_bytes:>4.0f}%" if memory.peak_bytes else ""
        lines.append(f"  {label:<17}{human_bytes(at_peak[key]):>13}{human_bytes(high[key]):>13}  {share}")
    if len(absent) == 2:
        lines.append("  (no gradients and no optimizer state: no backward pass or optimizer step ran)")
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
        verdict = (style.paint("fits", BOLD, GREEN) + f", {human_bytes(fit.headroom_bytes)} headroom" if fit.fits
                   else style.paint("does not fit", BOLD, RED) + f", {human_bytes(-fit.headroom_bytes)} over")
        lines.append(f"{style.paint(f'fit on {fit.capacity_label}', BOLD)}, a projection: "
                     f"{human_bytes(fit.projected_bytes)} with the allowance ({allowance}): {verdict}")
        if fit.max_batch is not None:
            lines.append(f"  largest batch that would fit: ~{fit.max_batch:,} (measured at {fit.batch:,}; "
                         "activations and other scale with the batch)")
    if not memory.levers_matter:
        lines.append(f"levers on the peak: none shown; the peak is under 1% of {memory.too_small_for}: "
                     "the model is too small for any lever to matter")
    elif memory.levers:
        lines.append(style.paint("levers on the peak (estimated from this measurement):", BOLD))
        width = max(len(human_bytes(lever.saves_bytes)) for lever in memory.levers) + 1
        lines.extend(f"  {'-' + human_bytes(lever.saves_bytes):>{width}}  {lever.what}" for lever in memory.levers)
    waste = [vf for vf in findings if vf.finding.code.startswith("ML2")]
    for reached, heading in ((True, "static findings that raise the peak: "),
                             (False, "static findings on code this run never reached (not measured): ")):
        listed = [vf.finding for vf in waste if vf.reached == reached]
        if listed:
            lines.append(heading + ", ".join(f"{f.code} ({where(f.path, f.line)})" for f in listed))
    return lines
