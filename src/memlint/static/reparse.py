"""Re-parse a text after an edit by parsing only the statements the edit touched, reusing
the rest of the previous libcst tree (the language server checks on every keystroke, and
libcst's parse of a 1,500-line file is most of a check).

The edit is found by comparing lines. It is located in the tree by line counts of the
statements and bodies: the innermost indented body (of a class, a function, a loop, an
``if``/``elif``/``else``, a ``with``, a ``try`` clause) holding all changed lines, else the
module's statements. The touched statements of that body are parsed again, alone (inside a
stand-in ``if 1:`` for each enclosing body, indented as in the file), and put in place of the
old ones; libcst nodes are immutable, so the untouched ones are shared.

This is the same tree a full parse gives, statement for statement, because a statement
boundary in an unchanged prefix is one in the new text too, and the re-parsed text must
parse alone, ending at such a boundary. Anything unusual — a parse error, an edit at the
top of the file, lines changed outside any statement, different indentation — falls back to
a full parse (:func:`memlint.static.source.parse`), which also gives the error for ML901;
except that when the re-parsed statements do not parse and Python's own parser finds an
error in the text, that error is raised at once, as the full parse would raise it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import libcst as cst
from libcst._nodes.internal import CodegenState

from memlint.static.source import has_long_line, parse, parse_module, python_syntax_error, too_deeply_bracketed
from memlint.static.text_edits import split_lines

_STATEMENT = (cst.SimpleStatementLine, cst.BaseCompoundStatement)
# Nodes whose line counts locate an indented body inside a compound statement.
_COUNTED = (*_STATEMENT, cst.IndentedBlock, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)
_LONE_CR = re.compile(r"\r(?!\n)")


@dataclass
class _LineCounter(CodegenState):
    """libcst's code generation, counting the lines each statement spans (leading comment
    and blank lines, decorators and body included), and each indented body and clause
    (``else:``, ``except:``, ``finally:``)."""

    counts: dict = field(default_factory=dict)
    _starts: list = field(default_factory=list)
    _counted_tokens: int = 0
    _newlines: int = 0

    def _lines_so_far(self) -> int:
        tokens = self.tokens
        for token in tokens[self._counted_tokens:]:
            self._newlines += token.count("\n")
        self._counted_tokens = len(tokens)
        return self._newlines

    def before_codegen(self, node: cst.CSTNode) -> None:
        if isinstance(node, _COUNTED):
            self._starts.append(self._lines_so_far())

    def after_codegen(self, node: cst.CSTNode) -> None:
        if isinstance(node, _COUNTED):
            self.counts[node] = self._lines_so_far() - self._starts.pop()


def _count_lines(module: cst.Module, into: dict) -> None:
    state = _LineCounter(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    into.update(state.counts)


Rebuild = Callable[[cst.IndentedBlock], list]  # new body -> [(old node, new node), ...], the statement last


def _bodies(statement: cst.CSTNode, counts: dict) -> list[tuple[cst.IndentedBlock, int, Rebuild]]:
    """Each indented body of a compound statement: the block, how many lines of the
    statement follow it (``else:``, ``except:`` and ``finally:`` clauses), and how to rebuild
    the statement around a new block. Raises KeyError for a clause that was not counted."""
    out: list[tuple[cst.IndentedBlock, int, Rebuild]] = []

    def own(attribute: str) -> Rebuild:
        return lambda block: [(statement, statement.with_changes(**{attribute: block}))]

    def clause(attribute: str, node: cst.CSTNode, index: int | None = None) -> Rebuild:
        def rebuild(block: cst.IndentedBlock) -> list:
            new = node.with_changes(body=block)
            if index is None:
                value: Any = new
            else:
                value = tuple(getattr(statement, attribute)[:index]) + (new,) + tuple(getattr(statement, attribute)[index + 1:])
            return [(node, new), (statement, statement.with_changes(**{attribute: value}))]
        return rebuild

    if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.With)):
        out.append((statement.body, 0, own("body")))
    elif isinstance(statement, (cst.For, cst.While)):
        orelse = statement.orelse
        out.append((statement.body, counts[orelse] if orelse is not None else 0, own("body")))
        if orelse is not None:
            out.append((orelse.body, 0, clause("orelse", orelse)))
    elif isinstance(statement, cst.If):
        orelse = statement.orelse
        out.append((statement.body, counts[orelse] if orelse is not None else 0, own("body")))
        if isinstance(orelse, cst.Else):
            out.append((orelse.body, 0, clause("orelse", orelse)))
        elif isinstance(orelse, cst.If):  # elif: its bodies, rebuilt inside this statement
            for block, tail, rebuild in _bodies(orelse, counts):
                out.append((block, tail, _inside(statement, "orelse", rebuild)))
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        clauses: list[tuple[str, cst.CSTNode, int | None]] = [
            ("handlers", handler, i) for i, handler in enumerate(statement.handlers)]
        if statement.orelse is not None:
            clauses.append(("orelse", statement.orelse, None))
        if statement.finalbody is not None:
            clauses.append(("finalbody", statement.finalbody, None))
        after = [counts[node] for _, node, _ in clauses]
        out.append((statement.body, sum(after), own("body")))
        for k, (attribute, node, index) in enumerate(clauses):
            out.append((node.body, sum(after[k + 1:]), clause(attribute, node, index)))
    return [entry for entry in out if isinstance(entry[0], cst.IndentedBlock)]


def _inside(statement: cst.CSTNode, attribute: str, rebuild: Rebuild) -> Rebuild:
    def outer(block: cst.IndentedBlock) -> list:
        pairs = rebuild(block)
        return pairs + [(statement, statement.with_changes(**{attribute: pairs[-1][1]}))]
    return outer


class _Fallback(Exception):
    """Parse the whole text instead."""


class _ChunkSyntaxError(_Fallback):
    """The re-parsed statements do not parse: the file likely has a syntax error."""


class IncrementalParser:
    """Parses successive versions of one text (see the module's docstring). Call it with
    each new version; it raises :class:`~memlint.static.source.UncheckableFile` as
    :func:`~memlint.static.source.parse` does. ``reparsed`` says how the last call went."""

    def __init__(self) -> None:
        self._source: str | None = None
        self._lines: list[str] = []
        self._module: cst.Module | None = None
        self._counts: dict | None = None  # statement node -> lines it spans
        self._counted_live = 0
        self.reparsed: str = "none"  # "full" | "partial" | "same" | "error" (a syntax error, found quickly)
        # memlint.static.positions.Positions keeps what it computed for statements here: the
        # statements an edit did not touch are the same objects in the next tree.
        self.positions_memo: dict = {}

    def __call__(self, source: str) -> cst.Module:
        if self._module is not None and source == self._source:
            self.reparsed = "same"
            return self._module
        if self._module is not None and not _LONE_CR.search(source) and not _LONE_CR.search(self._source or ""):
            try:
                module, lines = self._splice(source)
            except _ChunkSyntaxError:
                # Typing passes through many broken texts: when Python's parser, which is
                # quicker, finds an error, parse() would report that one too.
                error = python_syntax_error(source)
                if error is not None:
                    self.reparsed = "error"
                    raise error from None
            except Exception:  # _Fallback, or a case the splice does not know: parse it all
                pass
            else:
                self._source, self._lines, self._module = source, lines, module
                self.reparsed = "partial"
                return module
        self.reparsed = "error"
        module = parse(source)  # a failure keeps the last good tree: the next edit is compared with it
        self._source, self._lines, self._module, self._counts = source, split_lines(source), module, None
        self.reparsed = "full"
        return module

    def prepare(self) -> None:
        """Count the lines of the statements now (about a code generation of the file), so
        that the next edit does not wait for it."""
        if self._module is not None and self._counts is None:
            self._counts = {}
            _count_lines(self._module, self._counts)
            self._counted_live = len(self._counts)

    # ----- the splice --------------------------------------------------------------------------
    def _splice(self, source: str) -> tuple[cst.Module, list[str]]:
        old_lines, new_lines = self._lines, split_lines(source)
        first = 0  # lines [0, first) are unchanged
        limit = min(len(old_lines), len(new_lines))
        while first < limit and old_lines[first] == new_lines[first]:
            first += 1
        same_tail = 0
        while (same_tail < limit - first
               and old_lines[len(old_lines) - 1 - same_tail] == new_lines[len(new_lines) - 1 - same_tail]):
            same_tail += 1
        # 1-based old lines [changed_from, changed_to] were replaced (none: an insertion)
        changed_from, changed_to = first + 1, len(old_lines) - same_tail
        delta = len(new_lines) - len(old_lines)
        if changed_to < changed_from:  # lines inserted before changed_from: look at both neighbours
            low, high = changed_from - 1, changed_from
        else:
            low, high = changed_from, changed_to
        if self._counts is None or len(self._counts) > 3 * self._counted_live + 1000:
            self._counts = None
            self.prepare()
        counts = self._counts
        assert counts is not None
        module = self._module
        assert module is not None

        # Walk down to the innermost indented body holding every changed line.
        path: list[tuple[int, cst.IndentedBlock, Rebuild]] = []  # (index in the parent body, body, rebuild)
        statements = module.body
        start = 1 + len(module.header)
        while True:
            spans = []
            line = start
            for statement in statements:
                count = counts.get(statement)
                if count is None:
                    raise _Fallback
                spans.append((line, line + count - 1))
                line += count
            touched = [k for k, (a, b) in enumerate(spans) if a <= high and low <= b]
            inside = bool(spans) and spans[0][0] <= low and high <= spans[-1][1]
            if len(touched) != 1 or not inside:
                break
            index = touched[0]
            try:
                bodies = _bodies(statements[index], counts)
            except KeyError:
                raise _Fallback from None
            for block, tail, rebuild in bodies:
                block_end = spans[index][1] - tail
                first_line = block_end - counts.get(block, 0) + 2  # the block's first line ends the header
                if block.body and first_line <= low and high <= block_end - len(block.footer):
                    path.append((index, block, rebuild))
                    statements, start = block.body, first_line
                    break
            else:
                break

        at_end = not path and bool(spans) and high > spans[-1][1]  # into the module's footer
        if at_end and not touched:
            touched = [len(statements) - 1]
        if not path and (not touched or low < spans[0][0] or touched[0] == 0):
            raise _Fallback  # the top of the file: its header, docstring and first statement
        first_index, last_index = touched[0], (len(statements) - 1 if at_end else touched[-1])
        chunk_from = spans[first_index][0]
        chunk_to = (len(old_lines) if at_end else spans[last_index][1]) + delta
        if chunk_to < chunk_from - 1:
            raise _Fallback
        chunk = "".join(new_lines[chunk_from - 1:chunk_to])
        if too_deeply_bracketed(chunk) or has_long_line(chunk):
            raise _Fallback  # only parse() may look at such text safely

        kept = tuple(statements[:first_index]), tuple(statements[last_index + 1:])
        if chunk:
            try:
                replacement, footer = self._parse_chunk(chunk, path, module, at_end)
            except _Fallback:
                if not kept[1] or at_end:
                    raise
                # Comment lines left at the end (a statement deleted from under its comment)
                # belong to the next statement: parse it too.
                last_index += 1
                chunk_to = spans[last_index][1] + delta
                chunk = "".join(new_lines[chunk_from - 1:chunk_to])
                kept = kept[0], kept[1][1:]
                replacement, footer = self._parse_chunk(chunk, path, module, at_end)
        elif path and (kept[0] or kept[1]):  # whole statements deleted
            replacement, footer = (), ()
        else:
            raise _Fallback
        # Put the new statements in place, rebuilding the enclosing bodies.
        new_body = kept[0] + replacement + kept[1]
        for depth in range(len(path) - 1, -1, -1):
            index, block, rebuild = path[depth]
            new_block = block.with_changes(body=new_body)
            counts[new_block] = counts[block] + delta
            pairs = rebuild(new_block)
            for old, new in pairs:
                counts[new] = counts[old] + delta
            parent = path[depth - 1][1].body if depth else module.body
            new_body = tuple(parent[:index]) + (pairs[-1][1],) + tuple(parent[index + 1:])
        changes: dict = {"body": new_body}
        if at_end:
            changes["footer"] = footer
        if chunk_to == len(new_lines) and new_lines:  # the edit reaches the end of the file
            changes["has_trailing_newline"] = new_lines[-1].endswith(("\n", "\r"))
        new_module = module.with_changes(**changes)
        total = len(new_module.header) + sum(counts[s] for s in new_module.body) + len(new_module.footer)
        if total != len(new_lines):
            raise _Fallback
        return new_module, new_lines

    def _parse_chunk(self, chunk: str, path: list, module: cst.Module, at_end: bool) -> tuple[tuple, tuple]:
        """The statements of ``chunk`` as they would be in the file at ``path``, and the
        module footer (when the chunk runs to the end of the file). Counts their lines."""
        indents = [""]
        for _, block, _ in path:
            indents.append(indents[-1] + (block.indent if block.indent is not None else module.default_indent))
        stand_ins = "".join(indent + "if 1:" + module.default_newline for indent in indents[:-1])
        try:
            parsed = parse_module(stand_ins + chunk)
        except cst.ParserSyntaxError:
            raise _ChunkSyntaxError from None
        except (RecursionError, MemoryError):
            raise _Fallback from None
        indented = any(line[:1] in (" ", "\t") for line in split_lines(chunk))
        if (parsed.default_indent != module.default_indent and (indented or path)) \
                or parsed.default_newline != module.default_newline:
            raise _Fallback
        statements: tuple = tuple(parsed.body)
        if path:
            if parsed.header or parsed.footer:
                raise _Fallback
            for depth in range(len(path)):
                if len(statements) != 1:
                    raise _Fallback
                stand_in = statements[0]
                if (not isinstance(stand_in, cst.If) or stand_in.orelse is not None or stand_in.leading_lines
                        or not isinstance(stand_in.body, cst.IndentedBlock) or stand_in.body.footer
                        or (stand_in.body.indent or parsed.default_indent) != indents[depth + 1][len(indents[depth]):]):
                    raise _Fallback  # not indented as that body is in the file
                statements = tuple(stand_in.body.body)
            footer: tuple = ()
        else:
            if parsed.header:  # comment lines above the first statement belong to it
                if not statements:
                    raise _Fallback
                first = statements[0]
                statements = (first.with_changes(leading_lines=(*parsed.header, *first.leading_lines)),
                              *statements[1:])
            footer = tuple(parsed.footer)
            if footer and not at_end:
                raise _Fallback
        counts = self._counts
        assert counts is not None
        _count_lines(parsed, counts)
        if not path and parsed.header:
            counts[statements[0]] = counts[parsed.body[0]] + len(parsed.header)
        return statements, footer
