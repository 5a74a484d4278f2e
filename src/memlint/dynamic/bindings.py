"""Find the line where a holder variable is rebound or grown, by reading the source.

The runtime knows *which* variable holds the growth (``total_loss`` in
``train``) but not on which line it grows; the user wants the line to fix.
We pick, in this order, inside the holder's function (then the whole file):

1. an augmented assignment ``total_loss += loss``;
2. an assignment in a loop whose value reads the name (``running = 0.9 * running + loss``);
3. a growing call or item store: ``outputs.append(out)``, ``self.cache[k] = y``;
4. an assignment in a loop; 5. any assignment.
"""

from __future__ import annotations

import ast
from functools import lru_cache

_GROWING_METHODS = {"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "__setitem__"}
_APPENDING = {"append", "extend", "insert", "add", "appendleft"}
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@lru_cache(maxsize=64)
def _parse(path: str) -> ast.Module | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def _matches(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name
    if isinstance(node, ast.Attribute):
        return node.attr == name
    if isinstance(node, ast.Subscript):
        return _matches(node.value, name)
    return False


def _reads(node: ast.AST, name: str) -> bool:
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


def _candidates(scope: ast.AST, name: str, function: str):
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


def _priorities(child: ast.AST, name: str, in_loop: bool):
    if isinstance(child, ast.AugAssign) and _matches(child.target, name):
        yield 1, "accumulated"
    elif isinstance(child, (ast.Assign, ast.AnnAssign)):
        targets = child.targets if isinstance(child, ast.Assign) else [child.target]
        for target in targets:
            if isinstance(target, ast.Subscript) and _matches(target.value, name):
                yield 3, "stored"
            elif _matches(target, name):
                if in_loop and child.value is not None and _reads(child.value, name):
                    yield 2, "rebound"
                else:
                    yield (4 if in_loop else 5), "assigned"
    elif (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
          and child.func.attr in _GROWING_METHODS and _matches(child.func.value, name)):
        yield 3, "appended" if child.func.attr in _APPENDING else "stored"


def binding(path: str, function: str, first_line: int, holder: str) -> tuple[int, str, str] | None:
    """(line, function there, action) most telling for ``holder`` (a name or a path such as
    ``model.cache``); the action says what the line does to it: appended, stored, accumulated,
    rebound or assigned."""
    tree = _parse(path)
    if tree is None:
        return None
    name = last_name(holder)
    scope = _function(tree, function, first_line)
    for scope, scope_name in ((scope, function), (tree, "<module>")):
        found = sorted(_candidates(scope, name, scope_name))
        if found:
            return found[0][1], found[0][2], found[0][3]
    return None


def grows(path: str, line: int, holder: str) -> bool:
    """Whether the statement at ``line`` appends to, stores in, accumulates into or rebinds ``holder``."""
    tree = _parse(path)
    if tree is None:
        return False
    name = last_name(holder)
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, *_LOOPS, ast.If, ast.With,
                                 ast.AsyncWith, ast.Try)):
                continue
            inner = [node, *(n for n in ast.walk(node) if isinstance(n, ast.Call))]
            if any(priority <= 3 for candidate in inner for priority, _ in _priorities(candidate, name, True)):
                return True
    return False


def last_name(holder: str) -> str:
    """``trainer.callbacks[1].buffer`` -> ``buffer``; ``metrics['loss']`` -> ``metrics``."""
    return holder.split("[", 1)[0].rsplit(".", 1)[-1] if holder.endswith("]") else holder.rsplit(".", 1)[-1]


def binding_line(path: str, function: str, first_line: int, holder: str) -> tuple[int, str] | None:
    """(line, function there) most telling for ``holder`` (a name or a path such as ``model.cache``)."""
    found = binding(path, function, first_line, holder)
    return (found[0], found[1]) if found else None
