"""Formatters shared by ``memlint check`` and ``memlint verify``: text, json, sarif, github."""

from __future__ import annotations

from memlint.findings import CheckResult


def render(result: CheckResult, output_format: str, statistics: bool = False) -> str:
    if statistics:
        from memlint.report.text import render_statistics

        return render_statistics(result, output_format)
    if output_format == "json":
        from memlint.report.json_format import render_json

        return render_json(result)
    if output_format == "sarif":
        from memlint.report.sarif import render_sarif

        return render_sarif(result)
    if output_format == "github":
        from memlint.report.github import render_github

        return render_github(result)
    from memlint.report.text import render_text

    return render_text(result)
