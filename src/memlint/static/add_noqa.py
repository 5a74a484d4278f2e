"""``memlint check --add-noqa``: write a ``# noqa: CODE`` for every finding of a run into the
files (notebook cells too), so that a team adopts memlint on an existing code base in one
commit and only new code is held to the rules.

Where each comment goes and how it merges with an existing one is :mod:`memlint.static.noqa`.
Each changed file is checked again before it is written: what is still reported (a finding
no comment could reach, memlint's own ML9xx diagnostics) is returned to be shown as usual.
A notebook is written back only when its JSON layout round-trips exactly, as ``--fix`` does.
"""

from __future__ import annotations

import tokenize
from dataclasses import dataclass, field, replace
from typing import Sequence

from memlint.catalogue import RUNNER_CODES, all_codes, default_codes
from memlint.config import Configs
from memlint.findings import CheckResult, Finding, Fix
from memlint.static.discovery import NOTEBOOK_SUFFIX
from memlint.static.noqa import added_codes, noqa_edits
from memlint.static.cells import cells_of, load_document, source_text
from memlint.static.notebook import blank_magics, fix_notebook
from memlint.static.source import UncheckableFile, read_bytes
from memlint.static.source_check import check_source
from memlint.static.text_edits import apply_edits


def _wanted(finding: Finding) -> bool:
    """memlint's own diagnostics are not suppressed: a file that cannot be checked (ML901,
    ML902) needs fixing, and an unused suppression (ML903) needs removing, not another one."""
    return not finding.code.startswith("ML9")


@dataclass
class AddNoqaResult:
    result: CheckResult  # what is still reported after the comments were written
    added: int = 0  # codes written into comments
    files: int = 0  # files changed
    problems: list[str] = field(default_factory=list)  # files left alone, and why


def add_noqa(result: CheckResult, configs: Configs, write: bool = True) -> AddNoqaResult:
    """Add a ``# noqa`` for every finding of ``result`` to its file (``write``: else only
    count). Returns what is still reported afterwards."""
    by_path: dict[str, list[Finding]] = {}
    for finding in result.findings:
        by_path.setdefault(finding.path, []).append(finding)
    out = AddNoqaResult(CheckResult(files_checked=result.files_checked))
    remaining = out.result.findings
    for path, findings in by_path.items():
        if not any(_wanted(f) for f in findings):
            remaining.extend(findings)
            continue
        config = configs.for_path(path)
        codes = sorted(config.enabled_codes(all_codes(), default_codes()))
        ignored = tuple(config.ignored_for(path)) if config.per_file_ignores else ()
        if path.endswith(NOTEBOOK_SUFFIX):
            added, left, problem = _notebook(path, findings, codes, ignored, write)
        else:
            added, left, problem = _python_file(path, findings, codes, ignored, write)
        if problem is not None:
            out.problems.append(f"{path}: {problem}")
        if added:
            out.added += added
            out.files += 1
        remaining.extend(f for f in left if f.code in codes or f.code in RUNNER_CODES)
    remaining.sort(key=lambda f: f.sort_key)
    return out


def _python_file(path: str, findings: list[Finding], codes: Sequence[str], ignored: Sequence[str],
                 write: bool) -> tuple[int, list[Finding], str | None]:
    try:
        data = read_bytes(path)
        encoding, _ = tokenize.detect_encoding(iter(data.splitlines(keepends=True)).__next__)
        text = data.decode(encoding)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return 0, findings, f"cannot read it again: {exc}"
    edits, _ = noqa_edits(text, [f for f in findings if _wanted(f)])
    if not edits:
        return 0, findings, None
    new_text, _ = apply_edits(text, [Fix(True, (edit,)) for edit in edits])
    try:
        rechecked = check_source(new_text.lstrip("\ufeff"), path, codes, ignored)
    except UncheckableFile as exc:  # a comment cannot break a file; if it ever does, say so
        return 0, findings, f"adding the comments would break it ({exc.message}); left it alone (please report it)"
    if write:
        with open(path, "w", encoding=encoding, newline="") as fh:
            fh.write(new_text)
    return sum(added_codes(edit) for edit in edits), rechecked, None


def _notebook(path: str, findings: list[Finding], codes: Sequence[str], ignored: Sequence[str],
              write: bool) -> tuple[int, list[Finding], str | None]:
    try:
        data = read_bytes(path)
        sources = {number: source_text(cell.get("source", cell.get("input")))
                   for number, cell in enumerate(cells_of(load_document(data)), start=1)}
    except (OSError, UncheckableFile) as exc:
        return 0, findings, f"cannot read it again: {exc}"
    by_cell: dict[int, list[Finding]] = {}
    for finding in findings:
        if _wanted(finding) and finding.cell is not None:
            by_cell.setdefault(finding.cell, []).append(finding)
    # One finding per commented line, its fix being the comment: fix_notebook writes it back.
    commenting: list[Finding] = []
    added = 0
    for cell, cell_findings in sorted(by_cell.items()):
        source = sources.get(cell)
        if source is None or "\r" in source:  # positions were computed on \n-only text
            continue
        edits, _ = noqa_edits(source, cell_findings, code=blank_magics(source))
        for edit in edits:
            commenting.append(replace(cell_findings[0], line=edit.line, fix=Fix(True, (edit,))))
            added += added_codes(edit)
    if not commenting:
        return 0, findings, None
    fixed = fix_notebook(data, path, codes, ignored, commenting, _has_fix, max_passes=1)
    if fixed.problem is not None or fixed.data is None:
        return 0, findings, fixed.problem
    if write:
        with open(path, "wb") as fh:
            fh.write(fixed.data)
    return added, fixed.remaining, None


def _has_fix(finding: Finding) -> bool:
    return finding.fix is not None
