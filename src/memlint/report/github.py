"""``--format github``: GitHub Actions workflow commands, one per finding
(``::error file=...,line=...,col=...,endLine=...,endColumn=...,title=CODE name::CODE message``;
``warning``, and ``notice`` for info), the finding's help on a second line of the annotation.
Data is %-escaped, and properties also escape ``:`` and ``,``, as the runner expects."""

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
        title = _escape_property(f.code + " " + f.name)
        if f.cell is not None:
            # A notebook's line numbers are those of a cell, not of the .ipynb file: annotate
            # the file and say where in the message.
            props = f"file={_escape_property(f.path)},title={title}"
            text = f"{f.code} cell {f.cell}, line {f.line}, column {f.column}: {f.message}"
        else:
            props = (f"file={_escape_property(f.path)},line={f.line},col={f.column},"
                     f"endLine={f.end_line},endColumn={f.end_column},title={title}")
            text = f"{f.code} {f.message}"
        if f.help:
            text += f"\nhelp: {f.help}"
        lines.append(f"::{level} {props}::{_escape_data(text)}")
    return "\n".join(lines) + ("\n" if lines else "")
