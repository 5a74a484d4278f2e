"""``--format github``: GitHub Actions workflow commands, one per finding."""

from __future__ import annotations

from memlint.findings import CheckResult

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: CheckResult) -> str:
    lines = []
    for f in result.findings:
        level = LEVELS.get(f.severity, "warning")
        props = (f"file={_escape_property(f.path)},line={f.line},col={f.column},"
                 f"endLine={f.end_line},endColumn={f.end_column},title={_escape_property(f.code + ' ' + f.name)}")
        lines.append(f"::{level} {props}::{_escape_data(f.code + ' ' + f.message)}")
    return "\n".join(lines) + ("\n" if lines else "")
