"""Human output: ``path:line:col: CODE message`` and a summary line, like ruff and flake8."""

from __future__ import annotations

import json
from collections import Counter

from memlint.findings import CheckResult, Finding


def location(finding: Finding) -> str:
    if finding.cell is not None:
        return f"{finding.path}:cell {finding.cell}:{finding.line}:{finding.column}"
    return f"{finding.path}:{finding.line}:{finding.column}"


def render_text(result: CheckResult) -> str:
    lines = []
    for finding in result.findings:
        marker = " [*]" if finding.fix is not None else ""
        lines.append(f"{location(finding)}: {finding.code}{marker} {finding.message}")
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


def summary(result: CheckResult) -> str:
    files = f"{result.files_checked} file{'s' if result.files_checked != 1 else ''} checked"
    if not result.findings:
        return f"All checks passed ({files})."
    by_severity = Counter(f.severity for f in result.findings)
    parts = [f"{n} {sev}{'s' if n != 1 else ''}" for sev in ("error", "warning", "info") if (n := by_severity.get(sev))]
    total = len(result.findings)
    text = f"Found {total} problem{'s' if total != 1 else ''} ({', '.join(parts)}) in {files}."
    fixable = sum(1 for f in result.findings if f.fix is not None)
    if fixable:
        safe = sum(1 for f in result.findings if f.fix is not None and f.fix.safe)
        text += f"\n[*] {fixable} fixable ({safe} with --fix, the rest with --fix --unsafe-fixes)."
    return text


def render_statistics(result: CheckResult, output_format: str) -> str:
    counts = Counter(f.code for f in result.findings)
    names = {f.code: f.name for f in result.findings}
    fixable = Counter(f.code for f in result.findings if f.fix is not None)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if output_format == "json":
        data = [{"code": code, "name": names[code], "count": n, "fixable": fixable.get(code, 0) > 0} for code, n in rows]
        return json.dumps(data, indent=2) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    lines = [f"{n:>{width}}\t{code}\t{'[*] ' if fixable.get(code) else ''}{names[code]}" for code, n in rows]
    return "\n".join(lines) + ("\n" if lines else "")
