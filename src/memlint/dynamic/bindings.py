"""Find the line where a holder variable is rebound or grown, by reading the source.

The runtime knows *which* variable holds the growth (``total_loss`` in
``train``) but not on which line it grows; the user wants the line to fix.
We pick, in this order, inside the holder's function (then the whole file):

1. an augmented assignment ``total_loss += loss``;
2. an assignment whose value reads the name (``running = 0.9 * running + loss``);
3. a growing call or item store: ``outputs.append(out)``, ``self.cache[k] = y``;
4. an assignment in a loop; 5. any other assignment.

A line is named only when it can store what grows: never an assignment of an empty
container or a constant (``outputs = []``), never a variable ``cache`` for a holder reached
through an attribute (``model.cache``) nor an attribute for a variable, never an item under
another key than the holder's (``state["func_evals"] += 1`` for ``state['old_dirs']``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache

_GROWING_METHODS = {"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "__setitem__"}
_ACTION_OF_METHOD = {"append": "appended", "appendleft": "appended", "insert": "appended", "extend": "extended",
                     "add": "added"}  # the others store
_TRAILING_ITEM = re.compile(r"\[[^\[\]]*\]$")


@dataclass(frozen=True)
class HolderName:
    """What a holder's path (``model.block.cache``, ``metrics['loss']``) is called in the source."""

    name: str  # the last attribute or the variable: ``cache``, ``metrics``
    attribute: bool  # reached through an attribute: ``self.cache`` matches it, a variable ``cache`` does not
    key: str | None  # the string key right after it: ``'loss'`` of ``metrics['loss']``


def holder_name(holder: str, kind: str = "variable") -> HolderName:
    """``trainer.callbacks[1].buffer`` -> buffer (an attribute); ``metrics['loss']`` -> metrics, key
    'loss'. A global of another module (``run_metrics.HISTORY``) is a variable in its own file."""
    base, items = holder, []
    while (match := _TRAILING_ITEM.search(base)) is not None:
        items.insert(0, match.group()[1:-1])
        base = base[:match.start()]
    key = items[0][1:-1] if items and len(items[0]) >= 2 and items[0][0] == items[0][-1] == "'" else None
    return HolderName(base.rsplit(".", 1)[-1], "." in base and kind != "global", key)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@lru_cache(maxsize=64)
def parse_source(path: str) -> ast.Module | None:
    """The file's syntax tree (cached); None when it cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as fh:
            return ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def _matches(node: ast.AST, name: HolderName) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name.name and not name.attribute
    if isinstance(node, ast.Attribute):
        return node.attr == name.name and name.attribute
    if isinstance(node, ast.Subscript):
        inner = node.value
        if name.key is not None and not isinstance(inner, ast.Subscript):  # the item right after the name
            index = node.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, str) and index.value != name.key:
                return False
        return _matches(inner, name)
    return False


def _empty(value: ast.AST | None) -> bool:
    """An empty container or a constant: ``[]``, ``{}``, ``0.0``, ``None``, ``list()``."""
    if value is None or isinstance(value, ast.Constant):
        return True
    if isinstance(value, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return not (value.elts if not isinstance(value, ast.Dict) else value.keys)
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.args
            and not value.keywords and value.func.id in ("list", "dict", "set", "tuple", "deque"))


def _reads(node: ast.AST, name: HolderName) -> bool:
    return any(_matches(n, name) for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute)))


def _function(tree: ast.Module, function: str, first_line: int) -> ast.AST:
    if function == "<module>":
        return tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            decorated_start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first_line in (node.lineno, decorated_start):
                return node
    return tree


def _candidates(scope: ast.AST, name: HolderName, function: str):
    """(priority, line, enclosing function, action) for every statement that could rebind or grow ``name``."""
    def visit(node: ast.AST, in_loop: bool, function: str):
        for child in ast.iter_child_nodes(node):
            loop = in_loop or isinstance(child, _LOOPS)
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(child, False, child.name)
                continue
            for priority, action in _priorities(child, name, in_loop):
                yield priority, child.lineno, function, action
            yield from visit(child, loop, function)

    yield from visit(scope, False, function)


def _priorities(child: ast.AST, name: HolderName, in_loop: bool):
    if isinstance(child, ast.AugAssign) and _matches(child.target, name):
        yield 1, "accumulated"
    elif isinstance(child, (ast.Assign, ast.AnnAssign)):
        targets = child.targets if isinstance(child, ast.Assign) else [child.target]
        for target in targets:
            if isinstance(target, ast.Subscript) and _matches(target, name):
                yield 3, "stored"
            elif _matches(target, name) and not _empty(child.value):
                if _reads(child.value, name):
                    yield 2, "rebound"
                else:
                    yield (4 if in_loop else 5), "assigned"
    elif (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
          and child.func.attr in _GROWING_METHODS and _matches(child.func.value, name)):
        yield 3, _ACTION_OF_METHOD.get(child.func.attr, "stored")


def binding(path: str, function: str, first_line: int, holder: str,
            kind: str = "variable") -> tuple[int, str, str] | None:
    """(line, function there, action) most telling for ``holder`` (a name or a path such as
    ``model.cache``; ``kind`` as in the report's holder); the action says what the line does to
    it: appended, extended, added, stored, accumulated, rebound or assigned."""
    tree = parse_source(path)
    if tree is None:
        return None
    name = holder_name(holder, kind)
    scope = _function(tree, function, first_line)
    for scope, scope_name in ((scope, function), (tree, "<module>")):
        found = sorted(_candidates(scope, name, scope_name))
        if found:
            return found[0][1], found[0][2], found[0][3]
    return None


def grows(path: str, line: int, holder: str, kind: str = "variable") -> bool:
    """Whether the statement at ``line`` appends to, stores in, accumulates into or rebinds ``holder``."""
    tree = parse_source(path)
    if tree is None:
        return False
    name = holder_name(holder, kind)
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, *_LOOPS, ast.If, ast.With,
                                 ast.AsyncWith, ast.Try)):
                continue
            inner = [node, *(n for n in ast.walk(node) if isinstance(n, ast.Call))]
            if any(priority <= 3 for candidate in inner for priority, _ in _priorities(candidate, name, True)):
                return True
    return False


def feeds(path: str, line: int, holder_line: int) -> bool:
    """Whether the statement at ``line`` binds a name (``scores = self.model(tokens)``) that the
    statement at ``holder_line`` of the same file reads (``self.responses[request_id] = scores``):
    what the first line made is what the holder keeps."""
    if line is None or holder_line is None or line == holder_line:
        return False  # a holder whose line is not known
    tree = parse_source(path)
    if tree is None:
        return False
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.Expr, ast.AugAssign)):
            continue
        if node.lineno <= line <= (node.end_lineno or node.lineno) and isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        if node.lineno <= holder_line <= (node.end_lineno or node.lineno):
            value = node.value if not isinstance(node, ast.AugAssign) else node.value
            if value is not None:
                read |= {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    return bool(bound & read)


def last_name(holder: str) -> str:
    """``trainer.callbacks[1].buffer`` -> ``buffer``; ``metrics['loss']`` -> ``metrics``."""
    return holder_name(holder).name


def binding_line(path: str, function: str, first_line: int, holder: str) -> tuple[int, str] | None:
    """(line, function there) most telling for ``holder`` (a name or a path such as ``model.cache``)."""
    found = binding(path, function, first_line, holder)
    return (found[0], found[1]) if found else None
