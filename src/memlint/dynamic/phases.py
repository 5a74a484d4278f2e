"""What a verify run never reached: the code after the loop whose steps it measured.

A run stops after ``warmup + steps`` steps, usually in the first epoch: the evaluation
after the epoch, the checkpoint after training never ran, and a ``stable`` verdict says
nothing about them. The child marks the user's frames running at the first step and
reports, at the end, each user frame with its line and whether it has run since the
first step (:meth:`memlint.dynamic.runtime.Session._mark_stack`). From that and the
source (parent side, ``ast`` only):

- a frame outside the innermost marked one (the *driver*, which runs the loop) has been
  blocked in one call since the first step: nothing after its line ran since;
- in the driver, what comes after the outermost loop around its line never ran; what
  comes after an inner loop, inside an outer one (an evaluation after each epoch), never
  ran when no DataLoader reached its end since the first step;
- a function of the file called only from code that never ran did not run either.

What is named is what a user would call a phase: calls of the file's own functions and
methods, ``torch.save``, ``save_checkpoint``, ``model.eval()``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from memlint.dynamic.bindings import parse_source

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
MAX_NAMED = 3


@dataclass
class Unreached:
    """Code that never ran since the first step: line ranges per file, and the phases called there."""

    ranges: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # path -> (first, last) lines
    calls: list[tuple[str, str, int]] = field(default_factory=list)  # (shown name, path, line)

    def covers(self, path: str, line: int) -> bool:
        return any(first <= line <= last for first, last in self.ranges.get(path, ()))

    def add(self, path: str, first: int, last: int) -> None:
        self.ranges.setdefault(path, []).append((first, last))


def unreached(stack: list[dict] | None, loaders_ended: int | None) -> Unreached:
    """What never ran since the first step, from the child's ``stack`` (outermost frame first)."""
    found = Unreached()
    if not stack:
        return found
    marked = [i for i, frame in enumerate(stack) if frame.get("since_first_step")]
    if not marked:
        return found
    driver = marked[-1]
    for index, frame in enumerate(stack[:driver + 1]):
        if not frame.get("since_first_step"):
            continue
        tree = parse_source(frame["path"])
        if tree is None:
            continue
        body = _body_of(tree, frame["function"], frame["first_line"])
        if body is None:
            continue
        chain = _chain(body, frame["line"])
        if not chain:
            continue
        blocked = index < driver or not any(isinstance(b[i], _LOOPS) for _, b, i in chain)
        for statements in _after(chain, blocked, loaders_ended == 0):
            for statement in statements:
                found.add(frame["path"], statement.lineno, statement.end_lineno or statement.lineno)
                found.calls.extend((name, frame["path"], line) for name, line in _phase_calls(statement, tree))
    found.calls.sort(key=lambda call: (call[1], call[2]))
    _add_functions_called_only_there(found)
    return found


def note(found: Unreached, total_steps: int, training: bool) -> str | None:
    """``the 23 steps ran training only; `evaluate()` was never reached — ...``, or None."""
    names = list(dict.fromkeys(f"`{name}`" for name, _, _ in found.calls))
    if not names:
        return None
    shown = names[:MAX_NAMED] + ([f"{len(names) - MAX_NAMED} more"] if len(names) > MAX_NAMED else [])
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    what = "training only" if training else "the loop that ends them only"
    verb = "was" if len(names) == 1 else "were"
    return (f"the {total_steps} steps ran {what}; {listed} {verb} never reached — "
            "run with more steps or --step-on")


# ----- the source ---------------------------------------------------------------------------

def _body_of(tree: ast.Module, function: str, first_line: int) -> list[ast.stmt] | None:
    if function == "<module>":
        return tree.body
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            if first_line in (node.lineno, min([node.lineno] + [d.lineno for d in node.decorator_list])):
                return node.body
    return None


def _chain(body: list[ast.stmt], line: int) -> list[tuple[ast.AST | None, list[ast.stmt], int]]:
    """(statement owning the block, the block, index in it) from the function's body down to the
    innermost statement on ``line``."""
    chain: list[tuple[ast.AST | None, list[ast.stmt], int]] = []
    owner: ast.AST | None = None
    block = body
    while True:
        index = next((i for i, s in enumerate(block) if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if index is None:
            return chain
        chain.append((owner, block, index))
        statement = block[index]
        if isinstance(statement, _SCOPES):
            return chain
        inner = [b for b in _blocks(statement) if b and b[0].lineno <= line <= (b[-1].end_lineno or b[-1].lineno)]
        if not inner:
            return chain
        owner, block = statement, inner[0]


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [getattr(statement, name, None) for name in ("body", "orelse", "finalbody")]
    blocks += [handler.body for handler in getattr(statement, "handlers", [])]
    blocks += [case.body for case in getattr(statement, "cases", [])]
    return [b for b in blocks if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def _after(chain, blocked: bool, no_loader_ended: bool):
    """The statements after the current one that cannot have run since the first step, level by level.

    ``chain[i]`` is (the statement owning the block, the block, the index in it). At a level
    with no loop below it, what follows is inside the innermost loop and ran in every pass;
    at a level outside every loop it never ran (the loop below is still running); between
    loops it ran only once an inner loop ended, which a DataLoader that never reached its end
    rules out."""
    for level, (_, block, index) in enumerate(chain):
        loops_below = sum(isinstance(b[i], _LOOPS) for _, b, i in chain[level:])
        loops_above = sum(isinstance(owner, _LOOPS) for owner, _, _ in chain[:level + 1])
        if blocked or (loops_below and (not loops_above or no_loader_ended)):
            yield block[index + 1:]


def _phase_calls(statement: ast.stmt, tree: ast.Module):
    """(shown name, line) of the calls in ``statement`` that are a phase of the script."""
    own_functions = _own_functions(tree)
    for node in _walk_code(statement):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in own_functions:
            yield f"{func.id}()", node.lineno
        elif isinstance(func, ast.Attribute):
            base = func.value.id if isinstance(func.value, ast.Name) else None
            if func.attr in own_functions:
                yield f"{func.attr}()", node.lineno
            elif func.attr == "save" and base == "torch":
                yield "torch.save()", node.lineno
            elif func.attr == "save_checkpoint":
                yield "save_checkpoint()", node.lineno
            elif func.attr == "eval" and not node.args and not node.keywords and base is not None:
                yield f"{base}.eval()", node.lineno


def _walk_code(node: ast.AST):
    """``ast.walk`` that does not enter nested functions and classes (defining one runs nothing)."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        todo.extend(child for child in ast.iter_child_nodes(current) if not isinstance(child, _SCOPES))


def _own_functions(tree: ast.Module) -> dict[str, ast.AST]:
    """The file's functions and methods by name."""
    return {node.name: node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _add_functions_called_only_there(found: Unreached) -> None:
    """A function of the file whose every call is in code that never ran did not run either."""
    for path in list(found.ranges):
        tree = parse_source(path)
        if tree is None:
            continue
        functions = _own_functions(tree)
        calls: dict[str, list[int]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else (
                    node.func.attr if isinstance(node.func, ast.Attribute) else None)
                if name in functions:
                    calls.setdefault(name, []).append(node.lineno)
        changed = True
        while changed:
            changed = False
            for name, lines in calls.items():
                node = functions[name]
                if found.covers(path, node.lineno):
                    continue
                if all(found.covers(path, line) for line in lines):
                    found.add(path, node.lineno, node.end_lineno or node.lineno)
                    changed = True
