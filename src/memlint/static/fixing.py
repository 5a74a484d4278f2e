"""``memlint check --fix`` / ``--diff``: apply the fixes of a run's findings to the files,
check each fixed file again, and write it back (or print a diff).

A fixed file must still parse, else it is left untouched. Fixing runs a few passes, since
two fixes of the same statement cannot be applied at once.
"""

from __future__ import annotations

import difflib
import os
import sys
import tokenize
from typing import Any, Callable, Sequence

from memlint.catalogue import RUNNER_CODES, all_codes, default_codes
from memlint.config import Config, Configs
from memlint.findings import CheckResult, Finding
from memlint.static.notebook import NotebookFixResult, fix_notebook
from memlint.static.source import UncheckableFile, parse
from memlint.static.source_check import check_source
from memlint.static.text_edits import apply_edits, split_lines

MAX_PASSES = 8


def _eligible(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and bool(finding.fix.edits) and (finding.fix.safe or unsafe)


def _read(path: str) -> tuple[str, str] | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        encoding, _ = tokenize.detect_encoding(iter(data.splitlines(keepends=True)).__next__)
        text = data.decode(encoding)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None
    return text, encoding


def apply_fixes(
    result: CheckResult,
    config: Any = None,
    unsafe: bool = False,
    write: bool = True,
    echo: Callable[..., None] | None = None,
    configs: Any = None,
) -> CheckResult:
    """Apply the fixes of ``result`` (safe ones; unsafe ones too with ``unsafe``). With
    ``write`` the files are rewritten, else a unified diff is echoed. Returns the findings
    that remain after fixing."""
    echo = echo or _print
    if configs is None:
        configs = Configs.single(config or Config())
    by_path: dict[str, list[Finding]] = {}
    for finding in result.findings:
        by_path.setdefault(finding.path, []).append(finding)

    remaining: list[Finding] = []
    unwritten: dict[str, str] = {}  # with --diff: the fixed text that the remaining findings refer to
    # "Fixed N" counts the findings whose own fix was applied, as "[*] N fixable" counted them;
    # findings that went away with another's fix (a second finding on the fixed line) apart.
    fixed_total, cleared_too, files_fixed, skipped_unsafe = 0, 0, 0, 0
    for path, findings in by_path.items():
        skipped_unsafe += sum(1 for f in findings if f.fix is not None and not f.fix.safe and not unsafe)
        if not any(_eligible(f, unsafe) for f in findings):
            remaining.extend(findings)
            continue
        config = configs.for_path(path)
        codes = config.enabled_codes(all_codes(), default_codes())
        ignored = tuple(config.ignored_for(path)) if config.per_file_ignores else ()
        if path.endswith(".ipynb"):
            notebook = _fix_notebook(path, findings, codes, ignored, unsafe, write, echo)
            remaining.extend(notebook.remaining)
            if notebook.data is not None:
                files_fixed += 1
                fixed, cleared = _fixed_counts(findings, notebook.remaining, unsafe)
                fixed_total, cleared_too = fixed_total + fixed, cleared_too + cleared
                if not write:
                    unwritten[path] = notebook.data.decode("utf-8-sig")
            continue
        read = _read(path)
        if read is None:
            remaining.extend(findings)
            continue
        original, encoding = read
        text, current, broke = fix_text(original, findings, path, codes, ignored, unsafe)
        if broke:
            echo(f"memlint: a fix would break {path}; left it unfixed (please report it)", err=True)
        remaining.extend(current)
        if text == original:
            continue
        files_fixed += 1
        fixed, cleared = _fixed_counts(findings, current, unsafe)
        fixed_total, cleared_too = fixed_total + fixed, cleared_too + cleared
        if write:
            with open(path, "w", encoding=encoding, newline="") as fh:
                fh.write(text)
        else:
            unwritten[path] = text
            diff = difflib.unified_diff(
                split_lines(original), split_lines(text),
                fromfile=f"a/{_display(path)}", tofile=f"b/{_display(path)}",
            )
            echo("".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff),
                 nl=False)
    verb = "Fixed" if write else "Would fix"
    if files_fixed:
        also = f" ({cleared_too} more went away with {'them' if fixed_total != 1 else 'it'})" if cleared_too else ""
        echo(f"{verb} {fixed_total} problem{'s' if fixed_total != 1 else ''} in "
             f"{files_fixed} file{'s' if files_fixed != 1 else ''}{also}.", err=True)
    elif not unsafe and skipped_unsafe:
        echo(f"No safe fixes; {skipped_unsafe} unsafe fix{'es' if skipped_unsafe != 1 else ''} "
             f"available with --unsafe-fixes.", err=True)
    remaining.sort(key=lambda f: f.sort_key)
    return CheckResult(findings=remaining, files_checked=result.files_checked, sources={**result.sources, **unwritten})


def _fixed_counts(before: Sequence[Finding], after: Sequence[Finding], unsafe: bool) -> tuple[int, int]:
    """Of a file's findings, how many were fixed (had a fix that was applied: they are gone)
    and how many others went away with those fixes. A fix that could not be applied leaves
    its finding, with its fix, among ``after``."""
    fixable_before = sum(1 for f in before if _eligible(f, unsafe))
    fixable_after = sum(1 for f in after if _eligible(f, unsafe))
    fixed = max(0, fixable_before - fixable_after)
    return fixed, max(0, len(before) - len(after) - fixed)


def fix_text(text: str, findings: Sequence[Finding], path: str, codes: Sequence[str], ignored: Sequence[str],
             unsafe: bool) -> tuple[str, list[Finding], bool]:
    """Apply the fixes of ``findings`` (safe ones; unsafe ones too with ``unsafe``) to the
    text of ``path``, checking it again after each pass. Returns the fixed text, the findings
    left in it, and whether a fix had to be left out because it would break the file."""
    current = list(findings)
    for _ in range(MAX_PASSES):
        fixes = [f.fix for f in current if _eligible(f, unsafe)]
        if not fixes:
            break
        candidate, applied = apply_edits(text, fixes)
        if not applied or candidate == text:
            break
        try:
            parse(candidate)
            rechecked = check_source(candidate, path, codes, ignored)
        except UncheckableFile:
            return text, current, True
        text, current = candidate, [f for f in rechecked if f.code in codes or f.code in RUNNER_CODES]
    return text, current, False


def _fix_notebook(path: str, findings: list[Finding], codes: Sequence[str], ignored: Sequence[str], unsafe: bool,
                  write: bool, echo: Callable[..., None]):
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        result = fix_notebook(data, path, codes, ignored, findings, lambda f: _eligible(f, unsafe), MAX_PASSES)
    except (OSError, ValueError, UncheckableFile, RecursionError):
        return NotebookFixResult(None, findings, [])
    if result.problem is not None:
        echo(f"memlint: left {path} unfixed: {result.problem}", err=True)
        return result
    if result.data is None:
        return result
    if write:
        with open(path, "wb") as fh:
            fh.write(result.data)
    else:
        for cell, old, new in result.changed_cells:
            diff = difflib.unified_diff(split_lines(old), split_lines(new), fromfile=f"a/{_display(path)}:cell {cell}",
                                        tofile=f"b/{_display(path)}:cell {cell}")
            echo("".join(line if line.endswith("\n") else line + "\n\\ No newline at end of cell\n" for line in diff),
                 nl=False)
    return result


def _display(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/").lstrip("/")


def _print(message: str = "", nl: bool = True, err: bool = False) -> None:
    print(message, end="\n" if nl else "", file=sys.stderr if err else sys.stdout)
