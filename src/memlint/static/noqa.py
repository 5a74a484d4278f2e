"""Writing ``# noqa`` comments: where a finding's comment goes, and the edit that adds it
(``memlint check --add-noqa``, the editor's "suppress on this line" action).

A comment is appended to a line (never anything else changed): to the line the finding is
reported on, unless a comment cannot stand there — the line ends inside a multi-line string
or with a backslash continuation — in which case it goes to the last line of the statement,
a line suppression also reads (:mod:`memlint.static.suppress`). A line that already has a
``# noqa: CODES`` list gets the new codes added to that list, keeping other tools' codes and
any text around it; otherwise ``  # noqa: CODES`` goes at the end of the line, after its code
and comment (its trailing spaces counting towards the two).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Iterable, Sequence

from memlint.findings import Edit, Finding
from memlint.static.text_edits import split_lines

# A "# noqa: CODES" list as flake8 and ruff read it; codes are letters then digits.
_NOQA_LIST = re.compile(
    r"#\s*noqa:\s*(?P<codes>[A-Za-z]+[0-9]+(?:(?:\s*,\s*|\s+)[A-Za-z]+[0-9]+)*)", re.IGNORECASE)
_BARE_NOQA = re.compile(r"#\s*noqa(?!:\s*[A-Za-z]+[0-9]+)", re.IGNORECASE)
_STRING_START = ("FSTRING_START", "TSTRING_START")
_STRING_END = ("FSTRING_END", "TSTRING_END")


@dataclass(frozen=True)
class _Line:
    commentable: bool  # a comment may be appended (not inside a string, no backslash at the end)
    logical_end: int  # the last line of the logical line (statement) this line belongs to
    comment: str | None  # the line's comment, if any
    comment_column: int  # 0-based column where the comment starts (when there is one)


class SourceLines:
    """What ``# noqa`` placement needs to know about each line of a source text, from one
    pass of Python's tokenizer. ``code`` (same lines and columns) is what is tokenized when
    the text itself is not Python (a notebook cell with IPython magics blanked)."""

    def __init__(self, source: str, code: str | None = None) -> None:
        self.lines = split_lines(source)
        self._info: dict[int, _Line] = {}
        self.ok = self._scan(code if code is not None else source)

    def _scan(self, code: str) -> bool:
        inside_string: set[int] = set()  # lines that end inside a string
        comments: dict[int, tuple[int, str]] = {}
        logical_end: dict[int, int] = {}
        statement_start: int | None = None
        open_strings: list[int] = []
        try:
            for token in tokenize.generate_tokens(io.StringIO(code).readline):
                kind = tokenize.tok_name.get(token.type, "")
                (first, column), (last, _) = token.start, token.end
                if kind == "COMMENT":
                    comments[first] = (column, token.string)
                    continue
                if kind == "NEWLINE":
                    if statement_start is not None:
                        for line in range(statement_start, first + 1):
                            logical_end[line] = first
                    statement_start = None
                    continue
                if kind in ("NL", "INDENT", "DEDENT", "ENDMARKER"):
                    continue
                if statement_start is None:
                    statement_start = first
                if kind in _STRING_START:
                    open_strings.append(first)
                elif kind in _STRING_END and open_strings:
                    inside_string.update(range(open_strings.pop(), last))
                elif last > first:
                    inside_string.update(range(first, last))  # a string over several lines
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return False
        for number, text in enumerate(split_lines(code), start=1):
            continued = text.rstrip("\r\n").endswith("\\") and number not in comments
            comment_column, comment = comments.get(number, (0, None))
            self._info[number] = _Line(
                commentable=number not in inside_string and not continued,
                logical_end=logical_end.get(number, number),
                comment=comment,
                comment_column=comment_column,
            )
        return True

    def target(self, finding_line: int, end_line: int) -> int | None:
        """The line a ``# noqa`` for a finding reported at ``finding_line`` (ending at
        ``end_line``) goes on, or None when none can."""
        for line in (finding_line, self._logical_end(finding_line), end_line, self._logical_end(end_line)):
            info = self._info.get(line)
            if info is not None and info.commentable:
                return line
        return None

    def _logical_end(self, line: int) -> int:
        info = self._info.get(line)
        return info.logical_end if info is not None else line

    def edit(self, line: int, codes: Iterable[str]) -> Edit | None:
        """The edit that makes ``line`` suppress ``codes`` (None when it already does, or a
        comment cannot go there)."""
        info = self._info.get(line)
        if info is None or not info.commentable or line > len(self.lines):
            return None
        text = self.lines[line - 1].rstrip("\r\n")
        comment = info.comment
        if comment is not None:
            if _BARE_NOQA.search(comment) and not _NOQA_LIST.search(comment):
                return None  # a bare "# noqa" suppresses everything already
            listed = _NOQA_LIST.search(comment)
            if listed is not None:
                present = {c.upper() for c in re.split(r"[\s,]+", listed.group("codes"))}
                new = [c for c in dict.fromkeys(codes) if not any(c.startswith(p) for p in present)]
                if not new:
                    return None
                existing = listed.group("codes")
                separator = ", " if ", " in existing else "," if "," in existing else " " if " " in existing else ", "
                column = info.comment_column + listed.end("codes") + 1
                return Edit(line, column, line, column, separator + separator.join(new))
        new = list(dict.fromkeys(codes))
        if not new:
            return None
        # At the very end of the line, two spaces from the code: the line's own trailing
        # spaces count towards them, so nothing is left trailing after the comment.
        trailing = len(text) - len(text.rstrip(" "))
        column = len(text) + 1
        return Edit(line, column, line, column, " " * max(0, 2 - trailing) + "# noqa: " + ", ".join(new))


def noqa_edits(source: str, findings: Sequence[Finding], code: str | None = None) -> tuple[list[Edit], list[Finding]]:
    """Edits adding a ``# noqa`` for each finding (one edit per line, codes in the order
    found), and the findings no comment could be placed for. ``code``: the text to tokenize
    when ``source`` is not plain Python (see :class:`SourceLines`)."""
    lines = SourceLines(source, code)
    if not lines.ok:
        return [], list(findings)
    by_line: dict[int, list[str]] = {}
    placed_nowhere: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (f.line, f.column, f.code)):
        target = lines.target(finding.line, finding.end_line)
        if target is None:
            placed_nowhere.append(finding)
            continue
        by_line.setdefault(target, []).append(finding.code)
    edits = []
    for line, codes in sorted(by_line.items()):
        edit = lines.edit(line, codes)
        if edit is not None:
            edits.append(edit)
    return edits, placed_nowhere


def added_codes(edit: Edit) -> int:
    """How many codes an edit from :func:`noqa_edits` adds."""
    return len(_CODE.findall(edit.content))


_CODE = re.compile(r"[A-Za-z]+[0-9]+")
