"""``--plot FILE.svg|.html``: memory per step with the fitted growth line, no plotting library.

Two panels (live tensor bytes, autograd graph nodes), each titled with what the verdict
read in it ("growing 10.0 KiB/step", "flat"). Axes are honest (:mod:`memlint.dynamic.axes`):
a flat series plots flat, ticks are round and no two read the same. The warmup steps are
shaded and labelled, and the dashed line is the Theil–Sen fit over the measured steps, the
slope the verdict was based on. The HTML file is one page with the SVG inline: it opens in
a browser with no network access.

A panel is drawn in a :class:`Frame` (title, axes, grid, warmup band), which other panels
reuse for their own marks. When the report has the steps' peaks, a third panel stacks what
each step's peak is made of (parameters, gradients, optimizer state, activations, other).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from statistics import median
from typing import Callable, Sequence

from memlint.dynamic.assess import human_bytes, human_count
from memlint.dynamic.axes import Axis, byte_axis, count_axis, step_ticks
from memlint.dynamic.report import VerifyReport
from memlint.dynamic.verdict import DEFAULT_NODE_THRESHOLD, DEFAULT_THRESHOLD, theil_sen, trend

PANEL_W, PANEL_H, PAD_L, PAD_R, PAD_T, PAD_B = 640, 220, 90, 20, 30, 40
LINE_COLOUR, FIT_COLOUR, WARMUP_FILL, GRID_COLOUR = "#1f77b4", "#d62728", "#ececec", "#e4e4e4"
COMPOSITION_COLOURS = {"parameters": "#1f77b4", "gradients": "#ff7f0e", "optimizer_state": "#2ca02c",
                       "activations": "#d62728", "other": "#9e9e9e"}


@dataclass
class Frame:
    """One panel's box at ``top``: maps steps and values to pixels and draws the axes."""

    top: float
    steps: tuple[int, int]  # first and last step shown
    y: Axis

    @property
    def width(self) -> float:
        return PANEL_W - PAD_L - PAD_R

    @property
    def height(self) -> float:
        return PANEL_H - PAD_T - PAD_B

    def px(self, step: float) -> float:
        first, last = self.steps
        return PAD_L + (step - first) / max(last - first, 1) * self.width

    def py(self, value: float) -> float:
        return self.top + PAD_T + (1 - self.y.fraction(value)) * self.height

    def draw(self, title: str, warmup: int) -> list[str]:
        """Title, grid and y labels, x labels, the warmup band and the box."""
        top, bottom = self.top + PAD_T, self.top + PAD_T + self.height
        parts = [f'<text x="{PAD_L}" y="{self.top + 20}" font-size="14" font-weight="bold">{html.escape(title)}</text>']
        first, last = self.steps
        if warmup >= first and last > first:
            edge = self.px(min(warmup, last))
            parts.append(f'<rect x="{PAD_L}" y="{top}" width="{edge - PAD_L:.1f}" height="{self.height}" '
                         f'fill="{WARMUP_FILL}"><title>warmup: steps {first}–{min(warmup, last)}, not judged</title></rect>')
            parts.append(f'<line x1="{edge:.1f}" y1="{top}" x2="{edge:.1f}" y2="{bottom}" stroke="#999" '
                         f'stroke-dasharray="3 3"/>')
            parts.append(f'<text x="{PAD_L + 4}" y="{top + 13}" font-size="11" fill="#666">warmup</text>')
        for tick, label in zip(self.y.ticks, self.y.labels):
            y = self.py(tick)
            parts.append(f'<line x1="{PAD_L}" y1="{y:.1f}" x2="{PAD_L + self.width}" y2="{y:.1f}" '
                         f'stroke="{GRID_COLOUR}"/>')
            parts.append(f'<text x="{PAD_L - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
                         f'{html.escape(label)}</text>')
        for step in step_ticks(first, last):
            x = self.px(step)
            parts.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" stroke="#999"/>')
            parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" font-size="11" text-anchor="middle">{step}</text>')
        parts.append(f'<text x="{PAD_L + self.width}" y="{self.top + PANEL_H - 6}" font-size="11" '
                     f'text-anchor="end" fill="#666">step</text>')
        parts.append(f'<rect x="{PAD_L}" y="{top}" width="{self.width}" height="{self.height}" fill="none" '
                     f'stroke="#999"/>')
        return parts


@dataclass
class Signal:
    """One measured signal: its name, values per step, unit and the verdict's threshold."""

    name: str
    values: list[float]
    threshold: float
    is_bytes: bool

    def format(self, value: float) -> str:
        return human_bytes(value) if self.is_bytes else f"{value:,.0f}"

    def rate(self, slope: float) -> str:
        if self.is_bytes:
            return f"{human_bytes(slope)}/step"
        return f"{human_count(slope)} nodes/step"


def signal_reading(signal: Signal, steps: Sequence[int], warmup: int) -> str:
    """What the verdict reads in a signal over the measured steps (those from the end of
    warmup on, as :func:`memlint.dynamic.assess.judge` takes them)."""
    window = [v for s, v in zip(steps, signal.values) if s >= max(warmup, 1)]
    if len(window) < 2:
        return "too few steps to tell"
    measured = trend(window, signal.threshold)
    if measured.grows:
        return f"growing {signal.rate(measured.slope)}"
    if measured.slope <= -signal.threshold:
        return f"falling {signal.rate(-measured.slope)}"
    if measured.slope >= signal.threshold:
        return f"{signal.rate(measured.slope)} but not rising steadily"
    return "flat"


def _panel(report: VerifyReport, signal: Signal, top: float, measured_steps: int) -> str:
    steps = [s.step for s in report.samples]
    values = signal.values
    # The axis is at least as tall as the growth the threshold would add over the measured
    # steps: a line that climbs across the panel is growth the verdict would call one.
    min_span = signal.threshold * max(measured_steps, 1)
    y = byte_axis(values, min_span) if signal.is_bytes else count_axis(values, min_span)
    frame = Frame(top, (min(steps), max(steps)), y)
    parts = frame.draw(f"{signal.name} — {signal_reading(signal, steps, report.warmup)}", report.warmup)
    points = " ".join(f"{frame.px(s):.1f},{frame.py(v):.1f}" for s, v in zip(steps, values))
    parts.append(f'<polyline points="{points}" fill="none" stroke="{LINE_COLOUR}" stroke-width="2"/>')
    for s, v in zip(steps, values):
        phase = " (warmup)" if s <= report.warmup else ""
        parts.append(f'<circle cx="{frame.px(s):.1f}" cy="{frame.py(v):.1f}" r="2.5" fill="{LINE_COLOUR}">'
                     f'<title>step {s}{phase}: {html.escape(signal.format(v))}</title></circle>')
    window = [(s, v) for s, v in zip(steps, values) if s >= max(report.warmup, 1)]
    if len(window) >= 2:
        slope = theil_sen([v for _, v in window])
        first = window[0][0]
        intercept = median(v - slope * (s - first) for s, v in window)
        a, b = window[0][0], window[-1][0]
        parts.append(f'<line x1="{frame.px(a):.1f}" y1="{frame.py(intercept):.1f}" x2="{frame.px(b):.1f}" '
                     f'y2="{frame.py(intercept + slope * (b - first)):.1f}" stroke="{FIT_COLOUR}" '
                     f'stroke-width="1.5" stroke-dasharray="6 4"><title>fit: {html.escape(signal.rate(slope))}'
                     f'</title></line>')
    return "\n".join(parts)


def signals(report: VerifyReport, tensor_threshold: float, node_threshold: float) -> list[Signal]:
    samples = report.samples
    return [
        Signal("live tensor bytes", [s.tensor_bytes for s in samples], tensor_threshold, True),
        Signal("autograd graph nodes", [s.graph_nodes for s in samples], node_threshold, False),
    ]


class _BarFrame(Frame):
    """A frame whose steps sit in the middle of equal slots, one bar each, not on the box's edges."""

    @property
    def slot(self) -> float:
        first, last = self.steps
        return self.width / (last - first + 1)

    def px(self, step: float) -> float:
        return PAD_L + (step - self.steps[0] + 0.5) * self.slot


def _composition_panel(report: VerifyReport, top: float) -> str:
    """Each step's peak as a stacked bar of its classes."""
    steps = report.memory.steps
    frame = _BarFrame(top, (steps[0].step, steps[-1].step), byte_axis([0, max(s.peak_bytes for s in steps)], 1.0))
    parts = frame.draw("peak by class", 0)
    warmup = sum(1 for s in steps if s.step <= report.warmup)
    if warmup:  # the band of the other panels, on whole slots
        parts.insert(1, f'<rect x="{PAD_L}" y="{top + PAD_T}" width="{warmup * frame.slot:.1f}" '
                        f'height="{frame.height}" fill="{WARMUP_FILL}"><title>warmup</title></rect>')
    x = PAD_L + 115
    for category, colour in COMPOSITION_COLOURS.items():
        label = category.replace("_", " ")
        parts.append(f'<rect x="{x}" y="{top + 11}" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{x + 14}" y="{top + 20}" font-size="11">{label}</text>')
        x += 14 + 6 * len(label) + 10  # about 6 px a character at 11 px
    bar = max(1.0, frame.slot * 0.7)
    for step in steps:
        left, base = frame.px(step.step) - bar / 2, frame.py(0)
        for (category, colour), value in zip(COMPOSITION_COLOURS.items(), step.at_peak.as_tuple()):
            height = frame.py(0) - frame.py(value)
            base -= height
            parts.append(f'<rect x="{left:.1f}" y="{base:.1f}" width="{bar:.1f}" height="{height:.1f}" '
                         f'fill="{colour}"><title>step {step.step} ({step.phase}): '
                         f'{category.replace("_", " ")} {html.escape(human_bytes(value))}</title></rect>')
    return "\n".join(parts)


def render_svg(report: VerifyReport, tensor_threshold: float = DEFAULT_THRESHOLD,
               node_threshold: float = DEFAULT_NODE_THRESHOLD) -> str:
    panels = [_panel(report, signal, index * PANEL_H, report.steps)
              for index, signal in enumerate(signals(report, tensor_threshold, node_threshold))]
    if report.memory is not None and report.memory.steps:
        panels.append(_composition_panel(report, len(panels) * PANEL_H))
    total = len(panels) * PANEL_H
    label = f"memlint verify {report.script}: {report.verdict}"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{PANEL_W}" height="{total}" '
            f'viewBox="0 0 {PANEL_W} {total}" font-family="sans-serif" role="img" '
            f'aria-label="{html.escape(label)}">\n'
            f'<title>{html.escape(label)}</title>\n'
            + "\n".join(panels) + "\n</svg>\n")


def render_html(report: VerifyReport, tensor_threshold: float = DEFAULT_THRESHOLD,
                node_threshold: float = DEFAULT_NODE_THRESHOLD) -> str:
    """One self-contained page: no script, no stylesheet or font to fetch."""
    rows = "\n".join(
        f"<tr><td>{s.step}{' (warmup)' if s.step <= report.warmup else ''}</td><td>{html.escape(human_bytes(s.tensor_bytes))}"
        f"</td><td>{s.graph_nodes:,}</td><td>{html.escape(human_bytes(s.rss_bytes))}</td></tr>"
        for s in report.samples)
    title = f"memlint verify {html.escape(report.script)}"
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{title}</title>\n"
            "<style>body{font-family:sans-serif;margin:2em;max-width:680px}"
            "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}"
            "tr:nth-child(even){background:#f4f4f4}</style></head>\n<body>\n"
            f"<h1>{title}</h1>\n"
            f"<p><b>{html.escape(report.verdict)}</b>: {html.escape(report.reason)}</p>\n"
            f"<p>{report.steps} measured steps after {report.warmup} warmup steps on {html.escape(report.device)}.</p>\n"
            f"{render_svg(report, tensor_threshold, node_threshold)}"
            f"<details><summary>Samples</summary>\n<table>\n<tr><th>step</th><th>live tensors</th>"
            f"<th>graph nodes</th><th>RSS</th></tr>\n{rows}\n</table></details>\n</body></html>\n")


def write_plot(report: VerifyReport, path: str, tensor_threshold: float = DEFAULT_THRESHOLD,
               node_threshold: float = DEFAULT_NODE_THRESHOLD) -> None:
    render: Callable[..., str] = render_svg if path.lower().endswith(".svg") else render_html
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(render(report, tensor_threshold, node_threshold))
