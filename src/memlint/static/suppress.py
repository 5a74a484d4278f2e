"""``# noqa`` and ``# memlint: disable=...`` comments, and ML903 for those that suppress
nothing.

Suppressions are read from comment tokens only (never from strings), and only when the
text mentions them at all, so files without any pay nothing.

- ``# noqa`` / ``# noqa: ML101,ML2`` and ``# memlint: disable=ML101`` on a line that a
  finding's node or statement starts or ends on;
- ``# memlint: disable-file`` / ``# memlint: disable-file=ML101`` anywhere in the file.

ML903 (off by default) reports a memlint code in such a comment that suppressed nothing in
this run, and a bare ``# memlint: disable``/``disable-file`` that suppressed nothing.
Codes of other tools (``# noqa: E501``) and a bare ``# noqa`` (flake8's blanket form) are
not memlint's to judge; codes that are not enabled in this run are not reported either.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Iterable

from memlint.catalogue import UNUSED_SUPPRESSION, all_codes
from memlint.findings import Finding

ALL = "*"
UNUSED_CODE = UNUSED_SUPPRESSION
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9]+(?:[\s,]+[A-Za-z0-9]+)*))?", re.IGNORECASE)
_DISABLE = re.compile(r"#\s*memlint:\s*disable(?P<file>-file)?(?:=(?P<codes>[A-Za-z0-9]+(?:\s*,\s*[A-Za-z0-9]+)*))?")
_OUR_CODE = re.compile(r"^ML\d*$")


@dataclass
class Suppression:
    """One suppression comment (or one of several on a line)."""

    line: int
    column: int  # 1-based, where the comment's directive starts
    end_column: int
    kind: str  # "noqa" | "disable" | "disable-file"
    codes: set[str]  # code prefixes, or {ALL}
    used: set[str] = field(default_factory=set)

    def match(self, code: str) -> str | None:
        if ALL in self.codes:
            return ALL
        for prefix in self.codes:
            if code.startswith(prefix):
                return prefix
        return None


@dataclass
class Suppressions:
    by_line: dict[int, list[Suppression]] = field(default_factory=dict)
    file_wide: list[Suppression] = field(default_factory=list)

    def suppresses(self, code: str, lines: tuple[int, ...]) -> bool:
        """Is ``code`` suppressed on any of ``lines``? Marks the suppression used."""
        for suppression in self.file_wide:
            matched = suppression.match(code)
            if matched is not None:
                suppression.used.add(matched)
                return True
        for line in lines:
            for suppression in self.by_line.get(line, ()):
                matched = suppression.match(code)
                if matched is not None:
                    suppression.used.add(matched)
                    return True
        return False

    def all(self) -> list[Suppression]:
        out = list(self.file_wide)
        for entries in self.by_line.values():
            out.extend(entries)
        return sorted(out, key=lambda s: (s.line, s.column))

    def __bool__(self) -> bool:
        return bool(self.by_line or self.file_wide)


def _codes(text: str | None) -> set[str]:
    if not text:
        return {ALL}
    return {c.upper() for c in re.split(r"[\s,]+", text.strip()) if c}


def mentions_suppression(source: str) -> bool:
    """Cheap text test: could ``source`` hold a suppression comment?"""
    return "memlint:" in source or "noqa" in source.lower()


def parse_suppressions(source: str) -> Suppressions:
    result = Suppressions()
    if not mentions_suppression(source):
        return result
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        tokens = []
    for token in tokens:
        comment, (line, column) = token.string, token.start
        for match in _NOQA.finditer(comment):
            result.by_line.setdefault(line, []).append(Suppression(
                line, column + match.start() + 1, column + match.end() + 1, "noqa", _codes(match.group("codes"))))
        for match in _DISABLE.finditer(comment):
            codes = _codes(match.group("codes"))
            entry = Suppression(line, column + match.start() + 1, column + match.end() + 1,
                                "disable-file" if match.group("file") else "disable", codes)
            if match.group("file"):
                result.file_wide.append(entry)
            else:
                result.by_line.setdefault(line, []).append(entry)
    return result


def apply_suppressions(located, source: str, suppressions: Suppressions | None = None):
    """Drop suppressed findings. ``located`` holds ``(rule, report, position, lines)``
    tuples, ``lines`` being the lines a suppression comment may stand on (the node's and
    its statement's first and last). Yields ``(rule, report, position)`` for the rest.
    Pass ``suppressions`` to learn afterwards which ones were used."""
    if suppressions is None:
        suppressions = parse_suppressions(source)
    for rule, report, where, lines in located:
        if not suppressions.suppresses(rule.code, lines):
            yield rule, report, where


def unused_suppressions(suppressions: Suppressions | None, path: str, enabled: Iterable[str]) -> list[Finding]:
    """ML903 findings: memlint codes in suppression comments that suppressed nothing.
    ``enabled``: the codes checked in this file (a code not checked is not judged)."""
    if not suppressions:
        return []
    enabled = set(enabled)
    if UNUSED_CODE not in enabled:
        return []
    if any(s.match(UNUSED_CODE) for s in suppressions.file_wide):
        return []
    findings = []
    for s in suppressions.all():
        if any(other.match(UNUSED_CODE) is not None and ALL not in other.codes
               for other in suppressions.by_line.get(s.line, ())):
            continue  # "# noqa: ML903" keeps its own line quiet
        if ALL in s.codes:
            if s.kind == "noqa" or s.used:
                continue  # a bare "# noqa" may be there for another linter
            message = f"unused suppression: '# memlint: {s.kind}' suppresses nothing here"
            help = "remove the comment"
        else:
            unused = sorted(
                code for code in s.codes
                if _OUR_CODE.match(code) and code not in s.used and code != UNUSED_CODE
                and _judged(code, enabled)
            )
            if not unused:
                continue
            where = "in this file" if s.kind == "disable-file" else "on this line"
            message = (f"unused suppression: {', '.join(unused)} {'is' if len(unused) == 1 else 'are'} not "
                       f"reported {where}")
            help = f"remove {'it' if len(unused) == 1 else 'them'} from the comment"
        findings.append(Finding(path, s.line, s.column, s.line, s.end_column, UNUSED_CODE,
                                "unused-suppression", "info", message, help=help))
    return findings


def _judged(prefix: str, enabled: set[str]) -> bool:
    """Is a suppressed code (or prefix) one that this run checked? Unknown ML codes are
    reported too: they can never suppress anything."""
    matching = [code for code in all_codes() if code.startswith(prefix)]
    if not matching:
        return True
    if any(code in ("ML901", "ML902") for code in matching):
        return False
    return any(code in enabled for code in matching)
