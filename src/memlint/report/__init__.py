"""The output formats of ``memlint check``: full and concise text, json, sarif, github (and
``--statistics``)."""

from __future__ import annotations

from memlint.findings import CheckResult
from memlint.report.github import render_github
from memlint.report.json_format import render_json
from memlint.report.sarif import render_sarif
from memlint.report.text import render_statistics, render_text

# --format values; "text" is the default "full" under its older name.
TEXT_FORMATS = ("full", "concise", "text")
FORMATS = ("full", "concise", "text", "json", "sarif", "github")


def render(result: CheckResult, output_format: str, statistics: bool = False, colour: bool = False) -> str:
    if statistics:
        return render_statistics(result, output_format)
    if output_format == "json":
        return render_json(result)
    if output_format == "sarif":
        return render_sarif(result)
    if output_format == "github":
        return render_github(result)
    return render_text(result, "concise" if output_format == "concise" else "full", colour=colour)
