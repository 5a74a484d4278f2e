"""Human output of ``memlint check``, shaped like ruff's.

``concise``: one line per finding, ``path:line:col: CODE [*] message`` (what pre-commit,
grep and editors' problem matchers read). ``full`` (the default): that line, then the
source it points at with the span underlined, then ``= help:`` with the remedy and whether
a fix is available. Both end with a summary. A notebook finding names its cell and shows
the cell's lines.

Source lines are read only for findings that have a place (never on a clean run), from
the file on disk or from :attr:`CheckResult.sources` (``--diff``: text that was not written).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from typing import Iterable

from memlint.catalogue import BY_CODE
from memlint.findings import CheckResult, Finding, has_position
from memlint.report.style import BOLD, CYAN, GREEN, Style
from memlint.static.cells import code_cell_sources
from memlint.static.source import UncheckableFile, decode_source, read_bytes

# A span over more lines than this shows its first HEAD_LINES and last TAIL_LINES lines.
MAX_SPAN_LINES = 6
HEAD_LINES, TAIL_LINES = 3, 2
# A line wider than this (generated code, a long literal) shows a window around the span.
MAX_LINE_WIDTH = 160
WINDOW_BEFORE = 40
TAB_WIDTH = 4
ELLIPSIS = "…"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def render_text(result: CheckResult, shape: str = "full", colour: bool = False) -> str:
    """The report in ``shape`` ``"full"`` or ``"concise"``, ANSI-coloured with ``colour``."""
    style = Style(colour)
    out: list[str] = []
    if shape == "concise":
        out.extend(headline(f, style) for f in result.findings)
    else:
        sources = Sources(result.sources)
        for finding in result.findings:
            out.extend(full_finding(finding, sources, style))
            out.append("")
    out.append(summary(result, style))
    if shape != "concise":
        hint = rule_hint(result.findings)
        if hint:
            out.append(hint)
    return "\n".join(out) + "\n"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_line(text: str) -> str:
    """``text`` on one line, with no control characters (a file name or an exception's text
    must not break a line for grep, nor send escape codes to a terminal)."""
    return _CONTROL.sub(lambda m: " " if m.group() in "\n\r\t" else "\ufffd", text)


def headline(finding: Finding, style: Style, bold: bool = False) -> str:
    """``path:line:col: CODE [*] message``, the concise line and the first line of the full form."""
    colon = style.paint(":", CYAN)
    path = style.paint(one_line(finding.path), BOLD)
    if finding.cell is not None:
        where = path + colon + f"cell {finding.cell}" + colon + f"{finding.line}{colon}{finding.column}{colon}"
    else:
        where = path + colon + f"{finding.line}{colon}{finding.column}{colon}"
    marker = " [" + style.paint("*", CYAN) + "]" if finding.fix is not None else ""
    message = style.paint(one_line(finding.message), BOLD) if bold else one_line(finding.message)
    return f"{where} {style.severity(finding.code, finding.severity)}{marker} {message}"


def full_finding(finding: Finding, sources: "Sources", style: Style) -> list[str]:
    """The headline, the source with the span underlined and labelled with the finding's
    severity, then the notes: help, why the severity differs from the rule's, the fix."""
    lines = [headline(finding, style, bold=True)]
    snippet = None
    if has_position(finding):
        text = sources.lines(finding)
        if text is not None:
            snippet = Snippet.of(finding, text)
    width = snippet.gutter_width if snippet else 1
    pad = " " * width
    notes = []
    if snippet is not None:
        lines.extend(snippet.render(style, finding.severity, label=finding.severity))
    else:
        notes.append(f"severity: {style.severity(finding.severity, finding.severity)}")
    if finding.help:
        notes.append(style.paint("help", BOLD, CYAN) + ": " + one_line(finding.help))
    rule = BY_CODE.get(finding.code)
    if rule is not None and finding.severity != rule.severity:
        why = rule.why_severity(finding.severity)
        notes.append(f"{style.severity(finding.severity, finding.severity)} here, not the usual {rule.severity}"
                     + (f": {why}" if why else ""))
    if finding.fix is not None:
        notes.append("fix available with --fix" if finding.fix.safe
                      else "unsafe fix available with --fix --unsafe-fixes")
    if notes and snippet is not None:
        lines.append(f"{pad} {style.gutter('|')}")
    lines.extend(f"{pad} {style.gutter('=')} {note}" for note in notes)
    return lines


# ----- the source a finding points at ---------------------------------------------------------
class Sources:
    """The lines of each file (or notebook cell) that findings point at, read once."""

    def __init__(self, given: dict[str, str]) -> None:
        self._given = given
        self._files: dict[str, list[str] | None] = {}
        self._cells: dict[str, dict[int, list[str]]] = {}

    def lines(self, finding: Finding) -> list[str] | None:
        if finding.cell is not None:
            cells = self._cells.get(finding.path)
            if cells is None:
                data = self._bytes(finding.path)
                cells = self._cells[finding.path] = {
                    number: split_lines(text) for number, text in code_cell_sources(data or b"").items()}
            return cells.get(finding.cell)
        if finding.path not in self._files:
            self._files[finding.path] = self._read(finding.path)
        return self._files[finding.path]

    def _bytes(self, path: str) -> bytes | None:
        if path in self._given:
            return self._given[path].encode("utf-8")
        try:
            return read_bytes(path)
        except (OSError, MemoryError):
            return None

    def _read(self, path: str) -> list[str] | None:
        if path in self._given:
            return split_lines(self._given[path])
        data = self._bytes(path)
        if data is None:
            return None
        if path.endswith(".ipynb"):  # a finding on the notebook's JSON itself (invalid JSON)
            return split_lines(data.decode("utf-8", "replace"))
        try:
            return split_lines(decode_source(data))
        except UncheckableFile:
            return None


def split_lines(text: str) -> list[str]:
    """Lines as Python counts them (``\\n``, ``\\r\\n`` or ``\\r``; not form feeds)."""
    return _LINE_BREAK.split(text)


def char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display(line: str) -> tuple[str, list[int]]:
    """``line`` as shown (tabs as spaces, control characters as U+FFFD, so that the source
    cannot send escape codes to the terminal), and the display column at which each
    character starts, plus one entry for the end of the line."""
    shown: list[str] = []
    starts: list[int] = []
    column = 0
    for ch in line:
        starts.append(column)
        if ch == "\t":
            shown.append(" " * TAB_WIDTH)
            column += TAB_WIDTH
        elif unicodedata.category(ch) == "Cc":
            shown.append("\ufffd")
            column += 1
        else:
            shown.append(ch)
            column += char_width(ch)
    starts.append(column)
    return "".join(shown), starts


class Snippet:
    """The source lines of a finding's span, ready to draw."""

    def __init__(self, first: int, last: int, lines: list[str], start: int, end: int) -> None:
        self.first, self.last = first, last  # 1-based line numbers of the span
        self.lines = lines  # the span's lines, first to last
        self.start = start  # 0-based character index of the span in its first line
        self.end = end  # 0-based character index just past the span in its last line
        self.gutter_width = len(str(last))

    @classmethod
    def of(cls, finding: Finding, text: list[str]) -> "Snippet | None":
        first, last = finding.line, max(finding.line, finding.end_line)
        if not 1 <= first <= len(text):
            return None  # the file changed since it was checked
        end_column = finding.end_column
        if last > first and end_column <= 1:  # a span that ends just after a line break
            last -= 1
            end_column = len(text[last - 1]) + 1 if last <= len(text) else 1
        last = min(last, len(text))
        if last == first:
            end_column = max(end_column, finding.column)
        lines = text[first - 1:last]
        start = min(max(finding.column - 1, 0), len(lines[0]))
        end = min(max(end_column - 1, 0), len(lines[-1]))
        return cls(first, last, lines, start, end)

    def render(self, style: Style, severity: str, label: str = "") -> list[str]:
        """The lines, the span marked in ``severity``'s colour, ``label`` after the mark."""
        pad = " " * self.gutter_width
        out = [f"{pad} {style.gutter('|')}"]
        if self.first == self.last:
            out.extend(self._single(style, severity))
        else:
            out.extend(self._multi(style, severity))
        if label:
            out[-1] += " " + style.severity(label, severity)
        return out

    def _number(self, number: int | str, style: Style) -> str:
        return style.gutter(f"{number:>{self.gutter_width}} |")

    def _single(self, style: Style, severity: str) -> list[str]:
        shown, starts = display(self.lines[0])
        left, right = starts[self.start], starts[self.end]
        carets = max(1, right - left)
        prefix = suffix = ""
        if starts[-1] > MAX_LINE_WIDTH:  # show a window of a very long line
            begin = max(0, min(left - WINDOW_BEFORE, starts[-1] - MAX_LINE_WIDTH))
            stop = begin + MAX_LINE_WIDTH
            shown = _slice_columns(shown, begin, stop)
            prefix = ELLIPSIS if begin > 0 else ""
            suffix = ELLIPSIS if stop < starts[-1] else ""
            left = left - begin + len(prefix)
            carets = min(carets, stop - begin + len(prefix) - left)
        pad = " " * self.gutter_width
        return [
            f"{self._number(self.first, style)} {prefix}{shown}{suffix}".rstrip(),
            f"{pad} {style.gutter('|')} {' ' * left}{style.severity('^' * carets, severity)}",
        ]

    def _multi(self, style: Style, severity: str) -> list[str]:
        """Draw the span as rustc does: a bar in a margin column from its start to its end."""
        pad = " " * self.gutter_width
        bar = style.severity("|", severity)
        out = []
        first_shown, first_starts = display(self.lines[0])
        body_begins = len(self.lines[0]) - len(self.lines[0].lstrip())
        numbers = list(range(self.first, self.last + 1))
        shown_lines = list(zip(numbers, self.lines))
        folded = len(shown_lines) > MAX_SPAN_LINES
        if folded:
            shown_lines = shown_lines[:HEAD_LINES] + [None] + shown_lines[-TAIL_LINES:]
        if self.start <= body_begins:  # the span starts the line: mark it with "/"
            out.append(f"{self._number(self.first, style)} {style.severity('/', severity)} {first_shown}".rstrip())
        else:
            out.append(f"{self._number(self.first, style)}   {first_shown}".rstrip())
            marker = "_" * (first_starts[self.start] + 1) + "^"
            out.append(f"{pad} {style.gutter('|')}  {style.severity(marker, severity)}")
        for entry in shown_lines[1:]:
            if entry is None:  # folded lines: "..." in the gutter, the bar in its column
                out.append(style.gutter("...") + " " * self.gutter_width + bar)
                continue
            number, line = entry
            shown, _ = display(line)
            out.append(f"{self._number(number, style)} {bar} {shown}".rstrip())
        _, last_starts = display(self.lines[-1])
        last_char = max(0, last_starts[max(self.end - 1, 0)] if self.end > 0 else 0)
        marker = "|" + "_" * (last_char + 1) + "^"
        out.append(f"{pad} {style.gutter('|')} {style.severity(marker, severity)}")
        return out


def _slice_columns(shown: str, begin: int, stop: int) -> str:
    """The characters of ``shown`` between two display columns."""
    out = []
    column = 0
    for ch in shown:
        width = char_width(ch)
        if column >= begin and column + width <= stop:
            out.append(ch)
        column += width
        if column >= stop:
            break
    return "".join(out)


# ----- the summary ------------------------------------------------------------------------------
def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 and word != 'info' else ''}"


def summary(result: CheckResult, style: Style | None = None) -> str:
    """``Found N problems (E errors, W warnings, I info) in F files checked.`` and what
    ``--fix`` would do, or ``All checks passed!``."""
    style = style or Style(False)
    files = f"{_plural(result.files_checked, 'file')} checked"
    if not result.findings:
        if not result.files_checked:
            return "Nothing was checked: no Python files or notebooks found."
        return f"{style.paint('All checks passed!', BOLD, GREEN)} ({files})"
    by_severity = Counter(f.severity for f in result.findings)
    parts = [_plural(n, severity) for severity in ("error", "warning", "info") if (n := by_severity.get(severity))]
    text = f"Found {_plural(len(result.findings), 'problem')} ({', '.join(parts)}) in {files}."
    safe = sum(1 for f in result.findings if f.fix is not None and f.fix.safe)
    unsafe = sum(1 for f in result.findings if f.fix is not None and not f.fix.safe)
    star = "[" + style.paint("*", CYAN) + "]"
    if safe and unsafe:
        text += f"\n{star} {safe} fixable with --fix ({unsafe} more with --fix --unsafe-fixes)."
    elif safe:
        text += f"\n{star} {safe} fixable with --fix."
    elif unsafe:
        text += f"\n{star} {unsafe} fixable with --fix --unsafe-fixes."
    return text


def rule_hint(findings: Iterable[Finding]) -> str | None:
    """Where the why is: ``memlint rule CODE`` for the rules found (as rustc's ``--explain``)."""
    # ML9xx are memlint's own diagnostics: their message and help say it all
    codes = sorted({f.code for f in findings if f.code in BY_CODE and not f.code.startswith("ML9")})
    if not codes:
        return None
    if len(codes) == 1:
        return f"Why it matters: memlint rule {codes[0]}"
    return f"Why they matter: memlint rule {codes[0]} (and {', '.join(codes[1:])})"


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
