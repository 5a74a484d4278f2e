"""Jupyter notebooks (``.ipynb``): the code cells are checked as one module, as the kernel
runs them, and findings point at a cell (1-based, counting every cell as Jupyter shows
them) and a line within it.

IPython syntax that is not Python is blanked without moving anything else: a line magic
or shell escape (``%time f()``, ``!pip install x``, ``files = !ls``, ``model?``) becomes
``pass`` at the same indentation, and a cell magic (``%%bash``) blanks its whole cell,
except for magics whose body is Python (``%%time``, ``%%capture``...), where only the
``%%`` line is blanked.

Fixes: a finding's fix is kept when its edits stay inside the finding's cell and off any
blanked magic line, with positions relative to that cell; ``--fix`` rewrites the cells'
sources and the notebook's JSON, and only when the JSON can be written back byte for byte
as it was (same indentation and escaping), so a fix never reformats a notebook.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Sequence

from memlint.findings import Finding, Fix, unchecked_file
from memlint.static.cells import cell_source, cells_of, load_document, source_text
from memlint.static.source import UncheckableFile
from memlint.static.source_check import check_source
from memlint.static.text_edits import apply_edits

# Cell magics whose body is Python code.
PYTHON_CELL_MAGICS = frozenset({
    "time", "timeit", "capture", "prun", "debug", "memit", "mprun", "py", "python", "python3",
    "autoreload", "skip",
})
_LINE_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:[%!]|\?)")
_ASSIGNED_MAGIC = re.compile(r"^(?P<indent>[ \t]*)[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
_HELP = re.compile(r"^(?P<indent>[ \t]*)[A-Za-z_][\w.]*\?{1,2}\s*$")
_NON_PYTHON_LANGUAGES = ("r", "julia", "scala", "javascript", "typescript", "sql", "bash", "sh", "c++", "rust", "go")


@dataclass(frozen=True)
class CellSpan:
    cell: int  # 1-based index among all cells
    first_line: int  # 1-based line of the cell's first line in the joined module
    line_count: int
    magic_lines: frozenset[int] = frozenset()  # lines of the cell (1-based) blanked as IPython syntax


def _language(data: dict[str, Any]) -> str:
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    for key in ("language_info", "kernelspec"):
        info = metadata.get(key)
        if isinstance(info, dict):
            name = info.get("name") if key == "language_info" else info.get("language")
            if isinstance(name, str) and name:
                return name.lower()
    return "python"


def blank_magics(source: str) -> str:
    """``source`` with IPython-only lines made valid Python, line and column positions kept.

    Only lines that start a statement are candidates: a ``%`` or ``!=`` that begins a line
    inside brackets (``a\n    % b``), a string or after a backslash is Python."""
    lines = source.split("\n")
    first = lines[0].lstrip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if magic not in PYTHON_CELL_MAGICS:
            return "\n".join("" for _ in lines)
        lines[0] = ""
    out = []
    scanner = _Scanner()
    magic_continues = False
    for line in lines:
        if magic_continues:  # the continuation of a magic line ending with a backslash
            magic_continues = line.rstrip().endswith("\\")
            out.append("")
            continue
        if scanner.at_statement_start:
            match = _LINE_MAGIC.match(line) or _ASSIGNED_MAGIC.match(line) or _HELP.match(line)
            if match is not None and not line.lstrip().startswith("#"):
                out.append(match.group("indent") + "pass")
                magic_continues = line.rstrip().endswith("\\")
                continue
        scanner.feed(line)
        out.append(line)
    return "\n".join(out)


class _Scanner:
    """Just enough of Python's tokenizer to know whether a line starts a statement:
    bracket depth, open strings, backslash continuations."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: str | None = None  # the open string's quote
        self.continued = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.string is None and not self.continued

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        comment = False
        while i < n:
            c = line[i]
            if self.string is not None:
                if c == "\\":
                    i += 2
                    continue
                if line.startswith(self.string, i):
                    i += len(self.string)
                    self.string = None
                    continue
                i += 1
                continue
            if c == "#":
                comment = True
                break
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c in "\"'":
                self.string = c * 3 if line.startswith(c * 3, i) else c
                i += len(self.string)
                continue
            i += 1
        ends_with_backslash = not comment and line.endswith("\\")
        if self.string is not None and len(self.string) == 1 and not ends_with_backslash:
            self.string = None  # an unterminated one-line string: Python reports it
        self.continued = ends_with_backslash and self.string is None


def notebook_module(data: bytes) -> tuple[str, list[CellSpan]] | None:
    """The joined code cells of a notebook and where each cell starts; None for a
    notebook of another language. Raises UncheckableFile for a broken notebook."""

    document = load_document(data)
    cells = cells_of(document)
    if _language(document) in _NON_PYTHON_LANGUAGES:
        return None
    parts: list[str] = []
    spans: list[CellSpan] = []
    line = 1
    for index, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        original = cell_source(cell)
        text = blank_magics(original)
        magic_lines = frozenset(
            number for number, (before, after) in enumerate(zip(original.split("\n"), text.split("\n")), start=1)
            if before != after
        )
        if not text.endswith("\n"):
            text += "\n"
        count = text.count("\n")
        spans.append(CellSpan(index, line, count, magic_lines))
        parts.append(text)
        line += count
    return "".join(parts), spans


def locate(spans: Sequence[CellSpan], line: int) -> tuple[int, int] | None:
    """(cell, line in cell) for a line of the joined module."""
    for span in reversed(spans):
        if span.first_line <= line:
            return span.cell, line - span.first_line + 1
    return None


def _in_cell(finding: Finding, spans: Sequence[CellSpan]) -> Finding:
    where = locate(spans, finding.line)
    if where is None:
        return finding
    cell, line = where
    span = next(s for s in spans if s.cell == cell)
    end_line = finding.end_line - span.first_line + 1
    end_column = finding.end_column
    if end_line > span.line_count:  # the node runs past the cell: stop at its end
        end_line, end_column = line, finding.column
    return replace(finding, line=line, end_line=max(line, end_line), end_column=end_column, cell=cell,
                   fix=_fix_in_cell(finding.fix, span))


def _fix_in_cell(fix: Fix | None, span: CellSpan) -> Fix | None:
    """``fix`` with positions relative to the cell, or None if it reaches outside the cell
    or onto a blanked magic line."""
    if fix is None:
        return None
    shift = span.first_line - 1
    edits = []
    for edit in fix.edits:
        first, last = edit.line - shift, edit.end_line - shift
        if first < 1 or last > span.line_count or any(n in span.magic_lines for n in range(first, last + 1)):
            return None
        edits.append(replace(edit, line=first, end_line=last))
    return replace(fix, edits=tuple(edits))


def check_notebook(
    data: bytes, path: str, codes: Sequence[str], ignored: Sequence[str] = (), parser=None,
) -> list[Finding]:
    """Findings in the code cells of a notebook (raises UncheckableFile when the file is
    not a readable notebook). ``parser``: as for :func:`check_source`."""

    joined = notebook_module(data)
    if joined is None:
        return []
    source, spans = joined
    if not spans:
        return []
    try:
        findings = check_source(source, path, codes, ignored, parser)
    except UncheckableFile as exc:
        finding = unchecked_file(path, exc.message, exc.line, exc.column, help=exc.help)
        return [_in_cell(finding, spans)]
    return sorted((_in_cell(f, spans) for f in findings), key=lambda f: f.sort_key)


# ----- fixing ---------------------------------------------------------------------------------------
@dataclass
class NotebookFixResult:
    data: bytes | None  # the new notebook, or None when nothing changed or it could not be written
    remaining: list[Finding]
    changed_cells: list[tuple[int, str, str]]  # (cell, old source, new source), for --diff
    problem: str | None = None  # why the notebook was left unfixed


def _json_layout(text: str, document: Any) -> tuple[int | None, bool] | None:
    """The ``json.dumps`` settings that reproduce ``text`` exactly (nbformat writes indent=1,
    no ASCII escaping), or None."""
    tail = "\n" if text.endswith("\n") else ""
    for indent in (1, 2, 4, None):
        for ensure_ascii in (False, True):
            if json.dumps(document, indent=indent, ensure_ascii=ensure_ascii) + tail == text:
                return indent, ensure_ascii
    return None


def fix_notebook(
    data: bytes, path: str, codes: Sequence[str], ignored: Sequence[str],
    findings: Sequence[Finding], eligible, max_passes: int,
) -> NotebookFixResult:
    """Apply the eligible fixes of ``findings`` (from :func:`check_notebook`) to the cells,
    re-checking after each pass as for a Python file."""

    bom = data.startswith(b"\xef\xbb\xbf")
    text = data.decode("utf-8-sig")
    document = json.loads(text)
    layout = _json_layout(text, document)
    if layout is None:
        return NotebookFixResult(None, list(findings), [], "its JSON is not laid out as json.dumps writes it, and "
                                 "rewriting it would reformat the whole file")
    cells = cells_of(document)
    originals: dict[int, str] = {}
    current = list(findings)
    new_data = data
    for _ in range(max_passes):
        fixes_by_cell: dict[int, list[Fix]] = {}
        for finding in current:
            if finding.cell is not None and eligible(finding):
                fixes_by_cell.setdefault(finding.cell, []).append(finding.fix)
        changed = False
        for number, fixes in sorted(fixes_by_cell.items()):
            cell = cells[number - 1]
            key = "source" if "source" in cell else "input"  # nbformat 3 calls it input
            raw = cell.get(key, "")
            source = source_text(raw)
            if "\r" in source:
                continue  # positions were computed on \n-only text
            fixed, applied = apply_edits(source, fixes)
            if not applied or fixed == source:
                continue
            originals.setdefault(number, source)
            cell[key] = fixed.splitlines(keepends=True) if isinstance(raw, list) else fixed
            changed = True
        if not changed:
            break
        indent, ensure_ascii = layout
        candidate = json.dumps(document, indent=indent, ensure_ascii=ensure_ascii) + ("\n" if text.endswith("\n") else "")
        candidate_data = (b"\xef\xbb\xbf" if bom else b"") + candidate.encode("utf-8")
        rechecked = check_notebook(candidate_data, path, codes, ignored)
        if any(f.code == "ML901" for f in rechecked):
            return NotebookFixResult(None, list(findings), [], "a fix would break it")
        new_data, current = candidate_data, rechecked
    if new_data == data:
        return NotebookFixResult(None, current, [])
    changed_cells = [(number, old, source_text(cells[number - 1].get("source", cells[number - 1].get("input"))))
                     for number, old in sorted(originals.items())]
    return NotebookFixResult(new_data, current, changed_cells)
