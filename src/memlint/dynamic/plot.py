"""``--plot FILE.svg|.html``: memory per step with the fitted growth line, no plotting library.

Two panels (live tensor bytes, autograd graph nodes); the warmup steps are shaded
and the dashed line is the Theil–Sen fit over the measured steps, the slope the
verdict was based on.
"""

from __future__ import annotations

import html
from statistics import median

from memlint.dynamic.assess import human_bytes
from memlint.dynamic.report import VerifyReport
from memlint.dynamic.verdict import theil_sen

PANEL_W, PANEL_H, PAD_L, PAD_R, PAD_T, PAD_B = 640, 220, 90, 20, 30, 40


def _panel(report: VerifyReport, title: str, values: list[float], fmt, top: int) -> str:
    steps = [s.step for s in report.samples]
    x0, x1 = min(steps), max(max(steps), min(steps) + 1)
    lo, hi = min(values), max(values)
    if hi == lo:
        lo, hi = lo - 1, hi + 1
    width, height = PANEL_W - PAD_L - PAD_R, PANEL_H - PAD_T - PAD_B

    def px(step: float) -> float:
        return PAD_L + (step - x0) / (x1 - x0) * width

    def py(value: float) -> float:
        return top + PAD_T + (hi - value) / (hi - lo) * height

    parts = [f'<text x="{PAD_L}" y="{top + 20}" font-size="14" font-weight="bold">{html.escape(title)}</text>']
    if report.warmup > 0:
        parts.append(f'<rect x="{px(x0):.1f}" y="{top + PAD_T}" width="{px(min(report.warmup, x1)) - px(x0):.1f}" '
                     f'height="{height}" fill="#eee"><title>warmup</title></rect>')
    parts.append(f'<rect x="{PAD_L}" y="{top + PAD_T}" width="{width}" height="{height}" fill="none" stroke="#999"/>')
    for value in (lo, (lo + hi) / 2, hi):
        parts.append(f'<text x="{PAD_L - 6}" y="{py(value) + 4:.1f}" font-size="11" text-anchor="end">'
                     f'{html.escape(fmt(value))}</text>')
    parts.append(f'<text x="{PAD_L}" y="{top + PANEL_H - 12}" font-size="11">step {x0}</text>')
    parts.append(f'<text x="{PAD_L + width}" y="{top + PANEL_H - 12}" font-size="11" text-anchor="end">'
                 f'step {x1}</text>')
    points = " ".join(f"{px(s):.1f},{py(v):.1f}" for s, v in zip(steps, values))
    parts.append(f'<polyline points="{points}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    for s, v in zip(steps, values):
        parts.append(f'<circle cx="{px(s):.1f}" cy="{py(v):.1f}" r="2.5" fill="#1f77b4">'
                     f'<title>step {s}: {html.escape(fmt(v))}</title></circle>')
    window = [(s, v) for s, v in zip(steps, values) if s >= max(report.warmup, 1)]
    if len(window) >= 2:
        slope = theil_sen([v for _, v in window])
        first = window[0][0]
        intercept = median(v - slope * (s - first) for s, v in window)
        a, b = window[0][0], window[-1][0]
        parts.append(f'<line x1="{px(a):.1f}" y1="{py(intercept):.1f}" x2="{px(b):.1f}" '
                     f'y2="{py(intercept + slope * (b - first)):.1f}" stroke="#d62728" stroke-width="1.5" '
                     f'stroke-dasharray="6 4"><title>fit: {html.escape(fmt(slope))}/step</title></line>')
    return "\n".join(parts)


def render_svg(report: VerifyReport) -> str:
    samples = report.samples
    panels = [
        _panel(report, "live tensor memory", [s.tensor_bytes for s in samples], human_bytes, 0),
        _panel(report, "autograd graph nodes held by the script", [s.graph_nodes for s in samples],
               lambda v: f"{v:,.0f}", PANEL_H),
    ]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{PANEL_W}" height="{2 * PANEL_H}" '
            f'viewBox="0 0 {PANEL_W} {2 * PANEL_H}" font-family="sans-serif">\n'
            f'<title>memlint verify {html.escape(report.script)}: {report.verdict}</title>\n'
            + "\n".join(panels) + "\n</svg>\n")


def render_html(report: VerifyReport) -> str:
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>memlint verify "
            f"{html.escape(report.script)}</title></head>\n<body style=\"font-family: sans-serif\">\n"
            f"<h1>memlint verify {html.escape(report.script)}</h1>\n"
            f"<p><b>{report.verdict}</b>: {html.escape(report.reason)}</p>\n{render_svg(report)}</body></html>\n")


def write_plot(report: VerifyReport, path: str) -> None:
    text = render_svg(report) if path.lower().endswith(".svg") else render_html(report)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
