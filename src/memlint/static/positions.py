"""Positions (line, column) of reported nodes, computed lazily one statement at a time.

libcst's ``PositionProvider`` over a whole module costs about four parses; a file with one
finding needs the positions of one statement. See :class:`Positions`.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator, Mapping, Sequence

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from memlint.static.source import python_parse


class Positions(Mapping):
    """Positions of nodes (as libcst's ``PositionProvider`` gives them), computed for one
    statement at a time: only the statements that hold a reported node pay.

    Positions for a whole module cost about four parses; a file with one finding needs one
    statement's. A top-level statement is positioned in a module holding just it, and a
    statement in the body of a top-level class or function (a method of a 4,000-line test
    class) in a module holding just it in its class or function; either is then shifted to
    its first line, which Python's own parser gives. Any disagreement between the two
    falls back to positioning the whole module.
    """

    def __init__(self, module: "cst.Module", source: str, memo: dict | None = None) -> None:
        self.module = module
        self.source = source
        # id(node) -> (index of its top-level statement, index in that statement's body or -1)
        self._owner: dict[int, tuple[int, int]] = {}
        self._indexed: list[tuple[tuple[int, int], frozenset[int]]] = []  # each place's node ids
        self._scanned = 0  # top-level statements indexed so far
        self._done: dict[tuple[int, int], tuple[Mapping, int]] = {}  # -> (positions, line shift)
        self._python: list | None = None  # per top-level statement: its ast statements
        self._full: Mapping | None = None
        # Kept by the caller across versions of one text (the language server): a statement
        # node that is the same object is the same code, so its positions relative to its
        # first line are too. id(statement) -> (statement, its nodes' ids, ...).
        self._memo = memo if memo is not None else {}
        if len(self._memo) > 4 * len(module.body) + 2000:
            self._memo.clear()

    # ----- Mapping -----------------------------------------------------------------------------
    def __getitem__(self, node: "cst.CSTNode"):
        if self._full is not None:
            return self._full[node]
        where = self._statement_of(node)
        if where is None:
            return self._whole()[node]
        done = self._done.get(where)
        if done is None:
            done = self._position(*where)
            if done is None and where[1] >= 0:
                where = (where[0], -1)  # the inner statement disagreed: try its top-level one
                done = self._done.get(where) or self._position(*where)
            if done is None:
                return self._whole()[node]
        positions, shift = done
        found = positions[node]
        if not shift:
            return found
        return CodeRange(CodePosition(found.start.line + shift, found.start.column),
                         CodePosition(found.end.line + shift, found.end.column))

    def __contains__(self, node: object) -> bool:
        try:
            self[node]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())

    # ----- helpers -----------------------------------------------------------------------------
    def _whole(self) -> Mapping:
        if self._full is None:
            self._full = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._full

    def _statement_of(self, node: object) -> tuple[int, int] | None:
        """Where ``node`` is (indexing statements in order until it is found), or None (the
        module itself, or not in this module)."""
        key = id(node)
        where = self._owner.get(key)
        if where is not None:
            return where
        for here, ids in self._indexed:
            if key in ids:
                self._owner[key] = here
                return here
        body = self.module.body
        while self._scanned < len(body):
            index = self._scanned
            self._scanned += 1
            statement = body[index]
            inner = _inner_body(statement)
            # inner statements first: the outer statement's own nodes are the rest
            found = None
            for j, child in enumerate(inner or ()):
                ids = self._node_ids(child, ())
                self._indexed.append(((index, j), ids))
                if found is None and key in ids:
                    found = (index, j)
            ids = self._node_ids(statement, inner or ())
            self._indexed.append(((index, -1), ids))
            if found is None and key in ids:
                found = (index, -1)
            if found is not None:
                self._owner[key] = found
                return found
        return None

    def _node_ids(self, root: "cst.CSTNode", skip: tuple) -> frozenset[int]:
        """The ids of ``root``'s nodes, without the subtrees of the statements ``skip``
        (remembered in the memo for a statement whose inner statements are not skipped)."""
        memo_key = ("ids", id(root))
        if not skip:
            known = self._memo.get(memo_key)
            if known is not None and known[0] is root:
                return known[1]
        skipped = {id(s) for s in skip}
        ids: set[int] = set()
        node_base = cst.CSTNode
        stack: list = [root]
        while stack:
            current = stack.pop()
            if id(current) in skipped or id(current) in ids:
                continue
            ids.add(id(current))
            for name in _all_fields(type(current)):
                value = getattr(current, name)
                if isinstance(value, node_base):
                    stack.append(value)
                elif type(value) is tuple or type(value) is list:
                    stack.extend(item for item in value if isinstance(item, node_base))
        frozen = frozenset(ids)
        if not skip:
            self._memo[memo_key] = (root, frozen)
        return frozen

    def _python_statements(self) -> list | None:
        """For each top-level statement, the statements Python's parser sees in it."""
        if self._python is None:
            self._python = _match_statements(self.module.body, self.source) or []
        return self._python or None

    def _position(self, index: int, inner: int) -> tuple[Mapping, int] | None:
        python = self._python_statements()
        if python is None:
            return None
        statement = self.module.body[index]
        mine = python[index]
        block = None
        if inner >= 0:  # a statement in the body of a top-level class or function
            children = _inner_body(statement)
            matched = _match_list(children, mine[0].body) if children is not None and len(mine) == 1 else None
            if matched is None:
                return None
            target, mine = children[inner], matched[inner]
            block = statement.body
        else:
            target = statement
        first, last = mine[0].lineno, mine[-1].end_lineno or 0
        memo_key = ("positions", id(target), block.indent if block is not None else None, self.module.default_indent)
        known = self._memo.get(memo_key)
        if known is not None and known[0] is target:
            _, kept, own_start, own_lines = known
        else:
            if block is not None:
                statement = statement.with_changes(body=block.with_changes(body=(target,)))
            alone = self.module.with_changes(body=(statement,), header=(), footer=())
            positions = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
            own = positions.get(target)
            if own is None:
                return None
            if inner >= 0:  # keep only the nodes of the inner statement (the rebuilt outer ones are new)
                ids = self._node_ids(target, ())
                kept = {n: w for n, w in positions.items() if id(n) in ids}
            else:
                kept = dict(positions)
                kept.pop(alone, None)
            own_start, own_lines = own.start.line, own.end.line - own.start.line
            self._memo[memo_key] = (target, kept, own_start, own_lines)
        if own_lines != last - first:
            return None
        done = (kept, first - own_start)
        self._done[(index, inner)] = done
        return done


def _inner_body(statement: object) -> tuple | None:
    """The statements of a class's or function's indented body, else None."""
    if isinstance(statement, (cst.ClassDef, cst.FunctionDef)) and isinstance(statement.body, cst.IndentedBlock):
        return tuple(statement.body.body)
    return None


def _match_list(statements: Sequence, python: list) -> list | None:
    """libcst statements matched with Python's (``a; b`` is one for libcst, two for ast)."""
    out, i = [], 0
    for statement in statements:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        if count < 1 or i + count > len(python):
            return None
        out.append(python[i:i + count])
        i += count
    return out if i == len(python) else None


def _match_statements(statements: Sequence, source: str) -> list | None:
    try:
        tree = python_parse(source)
    except Exception:  # libcst and CPython disagree about this file: position it whole
        return None
    return _match_list(statements, tree.body)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _all_fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = _FIELDS[node_type] = tuple(f.name for f in dataclasses.fields(node_type))
    return fields
