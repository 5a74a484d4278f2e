"""Text edits on source text, without libcst: split lines as Python counts them, and apply
non-overlapping :class:`~memlint.findings.Edit` lists (fixes, ``# noqa`` comments)."""

from __future__ import annotations

import re
from typing import Sequence

from memlint.findings import Fix


def split_lines(text: str) -> list[str]:
    """Lines with their endings, as Python counts them (``\\n``, ``\\r\\n``, ``\\r`` only: a
    form feed or U+2028 inside a line does not end it, unlike ``str.splitlines``)."""
    return _LINE.findall(text)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _offsets(text: str) -> list[int]:
    starts, offset = [0], 0
    for line in split_lines(text):
        offset += len(line)
        starts.append(offset)
    return starts


def _offset(starts: list[int], line: int, column: int) -> int:
    line = max(1, min(line, len(starts)))
    return min(starts[line - 1] + column - 1, starts[-1])


def apply_edits(source: str, fixes: Sequence[Fix]) -> tuple[str, int]:
    """Apply the fixes whose edits do not overlap an earlier one; return the new text and
    how many fixes were applied."""
    starts = _offsets(source)
    chosen: list[tuple[int, int, str]] = []
    applied = 0
    for fix in sorted(fixes, key=lambda f: min((e.line, e.column) for e in f.edits)):
        spans = [(_offset(starts, e.line, e.column), _offset(starts, e.end_line, e.end_column), e.content)
                 for e in fix.edits]
        if any(_overlaps(a, b) for a in spans for b in chosen):
            continue
        chosen.extend(spans)
        applied += 1
    for start, end, content in sorted(chosen, key=lambda s: (s[0], s[1]), reverse=True):
        source = source[:start] + content + source[end:]
    return source, applied


def _overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    if a[0] == b[0]:
        return True  # two edits at one place: order would be ambiguous
    return a[0] < b[1] and b[0] < a[1]
