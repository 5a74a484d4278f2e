"""``# noqa`` and ``# memlint: disable=...`` comments.

Suppressions are read from comment tokens only (never from strings), and only when the
text mentions them at all, so files without any pay nothing.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

ALL = "*"
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9]+(?:[\s,]+[A-Za-z0-9]+)*))?", re.IGNORECASE)
_DISABLE = re.compile(r"#\s*memlint:\s*disable(?P<file>-file)?(?:=(?P<codes>[A-Za-z0-9]+(?:\s*,\s*[A-Za-z0-9]+)*))?")


@dataclass
class Suppressions:
    by_line: dict[int, set[str]] = field(default_factory=dict)  # line -> codes (or ALL)
    file_wide: set[str] = field(default_factory=set)

    def suppresses(self, code: str, lines: tuple[int, ...]) -> bool:
        if _matches(self.file_wide, code):
            return True
        return any(_matches(self.by_line.get(line, ()), code) for line in lines)


def _matches(codes, code: str) -> bool:
    return ALL in codes or any(code.startswith(c) for c in codes)


def _codes(text: str | None) -> set[str]:
    if not text:
        return {ALL}
    return {c.upper() for c in re.split(r"[\s,]+", text.strip()) if c}


def parse_suppressions(source: str) -> Suppressions:
    result = Suppressions()
    if "noqa" not in source.lower() and "memlint:" not in source:
        return result
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        tokens = []
    for token in tokens:
        comment, line = token.string, token.start[0]
        for match in _NOQA.finditer(comment):
            result.by_line.setdefault(line, set()).update(_codes(match.group("codes")))
        for match in _DISABLE.finditer(comment):
            codes = _codes(match.group("codes"))
            if match.group("file"):
                result.file_wide.update(codes)
            else:
                result.by_line.setdefault(line, set()).update(codes)
    return result


def apply_suppressions(located, source: str):
    """Drop suppressed findings. ``located`` holds ``(rule, report, position, lines)``
    tuples, ``lines`` being the lines a suppression comment may stand on (the node's and
    its statement's first and last). Yields ``(rule, report, position)`` for the rest."""
    suppressions = parse_suppressions(source)
    for rule, report, where, lines in located:
        if not suppressions.suppresses(rule.code, lines):
            yield rule, report, where
