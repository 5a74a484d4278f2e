"""Turn what the child left behind into verdicts: one per rank, then the worst.

Every way a run can end maps to a report here; failures are ``inconclusive``
with a plain reason (and the user's traceback or output tail in ``details``).
"""

from __future__ import annotations

import re
import signal

from memlint.dynamic.boundaries import STEP_ON, nothing_stepped
from memlint.dynamic.launcher import ChildOutcome
from memlint.dynamic.options import VerifyOptions
from memlint.dynamic.report import Holder, RankReport, Sample, Site
from memlint.dynamic.verdict import steps_until_exhausted, trend

OUTPUT_TAIL_LINES = 15
# Terminal escapes (colours, bold) that a script or a library writes into its messages.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")
# growth is a proven leak and wins; a rank that could not be measured beats a stable one.
_SEVERITY = {"growth": 2, "inconclusive": 1, "stable": 0}


def worst(ranks: list[RankReport]) -> RankReport:
    return max(ranks, key=lambda r: (_SEVERITY[r.verdict], -r.rank))


def assess(outcome: ChildOutcome, options: VerifyOptions) -> list[RankReport]:
    """One report per rank that left a result or progress; at least one."""
    total = options.steps + options.warmup
    ranks = sorted(set(outcome.results) | set(outcome.progress)) or [0]
    return [_assess_rank(rank, outcome, options, total) for rank in ranks]


def _assess_rank(rank: int, outcome: ChildOutcome, options: VerifyOptions, total: int) -> RankReport:
    result = outcome.results.get(rank)
    step = result["step"] if result else outcome.progress.get(rank, 0)
    where = (f"after {step} of {total} steps" if step else f"before the first of {total} steps") + (
        f" ({options.warmup} warmup + {options.steps} measured)")
    tail = _tail(outcome.output)
    if outcome.interrupted:
        return RankReport(rank, "inconclusive", f"interrupted {where}; the script and its processes were stopped")
    if outcome.timed_out:
        return RankReport(rank, "inconclusive",
                          f"timed out after {options.timeout:g} s, {where}; the script and every process "
                          "it started were killed (raise --timeout if it is just slow)", details=tail)
    if result is None:
        return RankReport(rank, "inconclusive", _vanished(outcome.returncode, where), details=tail)
    status = result["status"]
    if status == "raised":
        trace = plain_text(result["traceback"])
        headline = plain_text(result.get("headline") or trace.strip().splitlines()[-1])
        who = "memlint could not start the script" if result.get("stage") == "start" else "the script raised"
        return RankReport(rank, "inconclusive", f"{who} {where}: {headline}", details=trace)
    if status == "exited":
        return RankReport(rank, "inconclusive",
                          f"the script called sys.exit({result['exit_code']}) {where}", details=tail)
    if status == "finished":
        if step == 0:
            forced = STEP_ON.get(options.step_on) if options.step_on else None
            return RankReport(rank, "inconclusive",
                              f"the script finished without a single step: {nothing_stepped(forced)}",
                              details=tail)
        return RankReport(rank, "inconclusive",
                          f"the script finished {where}: run it longer or lower --steps/--warmup")
    return judge(rank, result, options)


def _vanished(returncode: int | None, where: str) -> str:
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the script crashed with {name} {where}"
    return (f"the script's process ended with exit code {returncode} {where} without going through "
            "Python's exit (os._exit, or a crash in native code)")


def judge(rank: int, result: dict, options: VerifyOptions) -> RankReport:
    """The verdict on a completed measurement (the child's result file, or the fixture's)."""
    samples = [Sample(**s) for s in result["samples"]]
    window = [s for s in samples if s.step >= max(options.warmup, 1)]
    tensor = trend([s.tensor_bytes for s in window], options.threshold)
    nodes = trend([s.graph_nodes for s in window], options.node_threshold)
    # The profiler's own buffers grow RSS every step: under --trace-dir RSS cannot testify.
    rss_threshold = float("inf") if options.trace_dir else options.rss_threshold
    rss = trend([s.rss_bytes for s in window], rss_threshold)
    report = RankReport(rank, "stable", "", tensor.slope, nodes.slope, rss.slope, samples,
                        [_site(s) for s in result["sites"]])
    graph_holder = result.get("graph_holder")
    if nodes.grows and graph_holder:
        graph_site = _graph_site(graph_holder)
        if graph_site is not None:
            report.sites.append(graph_site)
    if result.get("profiler_conflict"):
        report.verdict = "inconclusive"
        report.reason = ("another torch.profiler was active during the measured steps; memlint cannot "
                         "measure under it: run without the script's own profiler")
        return report
    bounded = result.get("bounded_state")
    if bounded:
        report.notes.append(bounded_note(bounded))
    growing = []
    if tensor.grows:
        growing.append(f"live tensor memory grows {human_bytes(tensor.slope)}/step")
    if nodes.grows:
        held = f" (held by {graph_holder['name']})" if graph_holder and graph_holder.get("name") else ""
        growing.append(f"the autograd graph grows {human_count(nodes.slope)} nodes/step{held}")
    if rss.grows:
        growing.append(f"RSS grows {human_bytes(rss.slope)}/step")
    if not growing:
        report.reason = (f"no signal grows over {options.steps} steps: tensors {human_bytes(tensor.slope)}/step "
                         f"(threshold {human_bytes(options.threshold)}), graph {human_count(nodes.slope)} nodes/step "
                         f"(threshold {human_count(options.node_threshold)}), RSS {human_bytes(rss.slope)}/step")
        return report
    report.verdict = "growth"
    report.reason = "; ".join(growing)
    byte_slope = max(tensor.slope if tensor.grows else 0, rss.slope if rss.grows else 0)
    left = steps_until_exhausted(byte_slope, result.get("headroom_bytes"))
    if left is not None:
        report.exhausted_at_step = samples[-1].step + left
        report.reason += (f"; at this rate the {human_bytes(result['headroom_bytes'])} still free on "
                          f"{result['device']} run out at step ~{report.exhausted_at_step:,}")
    return report


def _site(data: dict) -> Site:
    holder = data.get("holder")
    return Site(data["path"], data["line"], data["function"], data["bytes_per_step"], data["count_per_step"],
                Holder.from_json(holder) if holder else None)


def _graph_site(graph_holder: dict) -> Site | None:
    """The site of a growing graph: the line where its holder grows, else where its tensors were made."""
    holder = Holder.from_json(graph_holder) if graph_holder.get("name") else None
    if holder is not None and holder.line is not None:
        return Site(holder.path, holder.line, holder.function, 0, graph_holder["nodes_per_step"], holder)
    made = graph_holder.get("site")
    if made:
        return Site(made[0], made[1], made[2], 0, graph_holder["nodes_per_step"], holder)
    return None


def bounded_note(bounded: dict) -> str:
    """What the measured steps left out: an optimizer's history that fills up to a bound."""
    parts = []
    for history in bounded["histories"]:
        entries = ", ".join(history["entries"])
        parts.append(f"{history['optimizer']}'s history ({entries}) holds {history['length']} of at most "
                     f"{history['hyperparameter']}={history['bound']} entries")
    return (f"{'; '.join(parts)}: it grew {human_bytes(bounded['bytes_per_step'])}/step while filling, and is "
            "bounded, so it is left out of the live tensor bytes")


def plain_text(text: str) -> str:
    """``text`` without terminal escapes (torch.load's message is bold on a terminal)."""
    return _ANSI.sub("", text)


def _tail(output: str) -> str:
    """The end of the script's output, without memlint's and runpy's frames in a crash dump."""
    output = plain_text(output)
    lines = [line for line in output.rstrip().splitlines()
             if "memlint/dynamic/" not in line and "<frozen runpy>" not in line
             and not line.startswith("Extension modules:")]
    return "\n".join(lines[-OUTPUT_TAIL_LINES:])


def human_count(value: float) -> str:
    """A count per step as people read it: 312.96 -> '313', 5.14706 -> '5.1', 6.0 -> '6', -0.04 -> '0'."""
    if abs(value) >= 10:
        return f"{_half_up(value):,}"
    text = f"{_half_up(value * 10) / 10:.1f}".removesuffix(".0")
    return "0" if text == "-0" else text


def _half_up(value: float) -> int:
    """Rounded half away from zero (Python's round() takes 312.5 to 312)."""
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)


def human_bytes(value: float) -> str:
    """1536 -> '1.5 KiB'; signed values keep their sign; halves round up, as in :func:`human_count`."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        shown = _half_up(value) if unit == "B" else _half_up(value * 10) / 10
        if shown < 1024 or unit == "GiB":
            return f"{sign}{shown:,} {unit}" if unit == "B" else f"{sign}{shown:,.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
