"""Check one source text with libcst: parse it, walk it once with the rules, then place,
suppress and fix-annotate what they reported.

Only files that some selected rule could match get here (see :mod:`memlint.static.source_check`).
"""

from __future__ import annotations

from typing import Callable, Sequence

import os

from memlint.findings import Finding, internal_error
from memlint.static.cache import note_dependencies
from memlint.static.engine import FileChecker
from memlint.static.fixes import build_fix
from memlint.static.positions import Positions
from memlint.static.project import project_for
from memlint.static.rules import rules_by_code
from memlint.static.source import GENERATED_HELP, UncheckableFile, parse
from memlint.static.suppress import UNUSED_CODE, apply_suppressions, parse_suppressions, unused_suppressions


def check_module(source: str, path: str, codes: Sequence[str], selected: Sequence[str],
                 parser: Callable | None = None) -> list[Finding]:
    """Findings of the rules ``codes`` on ``source`` (raises UncheckableFile). ``selected``
    is every code the run checks this file for: ML903 judges suppressions against it.
    ``parser``: instead of :func:`~memlint.static.source.parse`."""
    module = (parser or parse)(source)
    project = project_for(path)
    checker = FileChecker(path, source, rules_by_code(codes), project)
    try:
        if project is None:
            reports = checker.run(module)
        else:
            with project.recording() as reads, project.looking_from(path):
                reports = checker.run(module)
                if not checker.failures:
                    project.remember_summary(path, source, checker.module_summary(), reads)
            reads.pop(os.path.realpath(path), None)
            note_dependencies(path, reads)
    except RecursionError:
        raise UncheckableFile("file is too deeply nested to check", help=GENERATED_HELP) from None
    failures = [
        internal_error(path, f"internal error in rule {rule.code} ({rule.name}): {type(exc).__name__}: {exc}",
                       help=f"a bug in memlint: please report it with this file; the other rules still checked it, "
                            f"and per-file-ignores (or --ignore {rule.code}) skips this rule meanwhile")
        for rule, exc in checker.failures
    ]
    # ML903 (unused suppressions) is selected and this file has a suppression comment.
    report_unused = UNUSED_CODE in codes
    if not reports:
        if report_unused:
            return failures + unused_suppressions(parse_suppressions(source), path, selected)
        return failures
    # A parser that re-parses successive versions of one text keeps the positions of its
    # unchanged statements from one check to the next (memlint.static.reparse).
    positions = Positions(module, source, getattr(parser, "positions_memo", None))
    located = []
    for rule, report in reports:
        where = positions[report.node]
        lines = {where.start.line, where.end.line}
        if report.statement is not None and report.statement in positions:
            statement = positions[report.statement]
            lines |= {statement.start.line, statement.end.line}
        located.append((rule, report, where, tuple(sorted(lines))))
    findings = []
    suppressions = parse_suppressions(source)
    for rule, report, where in apply_suppressions(located, source, suppressions):
        findings.append(Finding(
            path=path, line=where.start.line, column=where.start.column + 1,
            end_line=where.end.line, end_column=where.end.column + 1,
            code=rule.code, name=rule.name, severity=report.severity or rule.severity,
            message=report.message, help=report.help,
            fix=build_fix(report.fix, module, positions, rule, report.statement),
        ))
    if report_unused:
        findings.extend(unused_suppressions(suppressions, path, selected))
    return sorted(set(findings) | set(failures), key=lambda f: f.sort_key)
