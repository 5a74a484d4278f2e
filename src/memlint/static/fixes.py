"""Autofixes as rules propose them: a :class:`FixSpec` naming libcst nodes, the helpers that
build common ones, and :func:`build_fix`, which turns a spec into text edits once positions
are known (``--fix`` / ``--diff`` themselves are :mod:`memlint.static.fixing`).

A rule proposes a fix by reporting with ``fix=spec``; the spec names libcst nodes of the
module being checked, so the engine can place the edit once positions are known. The
replacement is rendered by libcst from the original nodes, so formatting and comments
inside them are kept; everything outside the replaced range is left byte for byte.

A fix is *safe* when it cannot change what the program computes; every fix memlint offers
today changes a type or a behaviour somewhere (``.item()`` returns a float, ``.detach()``
cuts a graph someone may want), so they are unsafe and need ``--unsafe-fixes``.

"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import libcst as cst

from memlint.findings import Edit, Fix
from memlint.static.facts import child_fields, value_kind
from memlint.static.text_edits import split_lines


@dataclass(frozen=True)
class FixSpec:
    """A proposed fix.

    ``kind``:
      - ``"replace"``: replace ``node`` with ``replacement`` (a libcst node or code text);
      - ``"wrap_no_grad"``: run the simple statement that contains ``node`` under
        ``with <no_grad>:`` (``no_grad`` is the expression text, e.g. ``torch.no_grad()``;
        ``import_line`` is added at the top of the file when torch is not imported by name).
    """

    node: cst.CSTNode
    replacement: cst.CSTNode | str | None = None
    safe: bool = False
    kind: str = "replace"
    no_grad: str = "torch.no_grad()"
    import_line: str | None = None
    description: str = ""


# ----- spec helpers for rules --------------------------------------------------------------------
_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def _method_call(value: cst.BaseExpression, method: str) -> cst.Call:
    """``value.method()``, parenthesizing ``value`` when it is not atomic."""
    if not isinstance(value, _ATOMIC) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=value, attr=cst.Name(method)))


def call_method(node: cst.BaseExpression, method: str, safe: bool = False) -> FixSpec:
    """Replace ``expr`` with ``expr.method()`` (``loss`` → ``loss.detach()``)."""
    return FixSpec(node, _method_call(node, method), safe=safe, description=f"call .{method}()")


# Conversions a value is detached before, not after: out.detach().cpu(), not out.cpu().detach().
_CONVERSIONS = frozenset({"cpu", "cuda", "to", "float", "double", "half", "bfloat16", "contiguous", "clone"})


def _detached(node: cst.BaseExpression) -> cst.BaseExpression:
    """``out`` -> ``out.detach()``; ``out.cpu()`` -> ``out.detach().cpu()`` (the conversions after
    the value it converts, so no copy of the graph's tensor is made first)."""
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _CONVERSIONS
            and not node.lpar):
        inner = _detached(node.func.value)
        return node.with_changes(func=node.func.with_changes(value=inner))
    return _method_call(node, "detach")


def _one_line(node: cst.CSTNode, limit: int) -> str:
    text = " ".join(cst.Module(body=()).code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def detached_text(node: cst.BaseExpression, limit: int = 40) -> str:
    """The text of ``node`` detached (see :func:`detach_fix`), on one line, for a message: a
    long value is shortened, the ``.detach()`` and the conversions after it are kept."""
    conversions = []
    inner = node
    while (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
           and inner.func.attr.value in _CONVERSIONS and not inner.lpar):
        conversions.append(f"{inner.func.attr.value}({', '.join(_one_line(arg, 20) for arg in inner.args)})")
        inner = inner.func.value
    head = _one_line(inner, limit)
    if not (isinstance(inner, _ATOMIC) or inner.lpar):
        head = f"({head})"
    return head + ".detach()" + "".join("." + conversion for conversion in reversed(conversions))


def item_text(node: cst.BaseExpression, limit: int = 40) -> str:
    """``loss.item()``, ``(ce * 1000).item()``: the text of ``node.item()`` for a message (a long
    value shortened, the ``.item()`` kept)."""
    head = _one_line(node, limit)
    return (head if isinstance(node, _ATOMIC) or node.lpar else f"({head})") + ".item()"


def detach_fix(node: cst.BaseExpression) -> FixSpec:
    """Replace ``expr`` with ``expr.detach()``, detaching before a trailing ``.cpu()`` / ``.to()``."""
    return FixSpec(node, _detached(node), description="call .detach()")


def graph_accumulation_fix(node: cst.CSTNode, values: Sequence[cst.BaseExpression] | cst.BaseExpression) -> FixSpec | None:
    """ML101: ``total += loss`` → ``total += loss.item()``; ``total = total + loss`` →
    ``total = total + loss.item()``; ``losses.append(loss)`` (``insert``, ``appendleft``,
    ``add_``) → ``losses.append(loss.detach())``; ``d[step] = out`` → ``d[step] = out.detach()``;
    ``d[k] = d.get(k, 0) + loss`` → ``... + loss.item()``; ``outs = torch.cat([outs, out])`` →
    ``torch.cat([outs, out.detach()])``.
    None when there is no single value to change (``extend`` of a list, several operands)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) != 1:
        return None
    value = values[0]
    if isinstance(node, cst.AugAssign):
        return call_method(value, "item")
    if isinstance(node, cst.Assign):
        target = node.targets[0].target if node.targets else None
        if isinstance(target, cst.Subscript) and not isinstance(node.value, cst.BinaryOperation):
            return detach_fix(value)
        if isinstance(node.value, cst.Call):  # outs = torch.cat([outs, out]): keep a tensor
            return detach_fix(value)
        return call_method(value, "item")
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value == "extend" or isinstance(value, (cst.List, cst.Tuple, cst.Dict)):
            return None  # the value is a sequence: .detach() would not apply
        return detach_fix(value)
    return None


def no_grad_fix(node: cst.CSTNode, facts: Any = None, safe: bool = False) -> FixSpec:
    """ML201: run the statement holding ``node`` under ``with torch.no_grad():``, spelling
    torch as the module imports it."""
    aliases: Mapping[str, str] = getattr(getattr(facts, "imports", None), "aliases", {}) or {}
    expression, import_line = None, None
    for local, qualified in sorted(aliases.items()):
        if qualified == "torch" and "." not in local:
            expression = f"{local}.no_grad()"
            break
    if expression is None:
        for local, qualified in sorted(aliases.items()):
            if qualified == "torch.no_grad" and "." not in local:
                expression = f"{local}()"
                break
    if expression is None:
        expression, import_line = "torch.no_grad()", "import torch"
    return FixSpec(node, kind="wrap_no_grad", safe=safe, no_grad=expression, import_line=import_line,
                   description="run under no_grad")


def add_keyword_fix(call: cst.Call, keyword: str, value_code: str, safe: bool = False) -> FixSpec:
    """Add ``keyword=value`` to a call (ML203: ``map_location="cpu"``)."""
    args = list(call.args)
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:
        # keep an existing trailing comma after the new argument
        last = args[-1]
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        new_arg = cst.Arg(keyword=cst.Name(keyword), value=cst.parse_expression(value_code),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                          comma=last.comma)
    else:
        new_arg = cst.Arg(keyword=cst.Name(keyword), value=cst.parse_expression(value_code),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    return FixSpec(call, call.with_changes(args=[*args, new_arg]), safe=safe,
                   description=f"add {keyword}={value_code}")


def remove_keyword_fix(call: cst.Call, keyword: str, safe: bool = False) -> FixSpec | None:
    """Drop ``keyword=...`` from a call (ML103: ``retain_graph=True``)."""
    args = list(call.args)
    index = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == keyword), None)
    if index is None:
        return None
    removed = args.pop(index)
    if index == len(args) and args:  # removed the last argument: the new last takes its comma
        args[-1] = args[-1].with_changes(comma=removed.comma)
    return FixSpec(call, call.with_changes(args=args), safe=safe, description=f"remove {keyword}=")


# ----- from spec to edits --------------------------------------------------------------------------
_source_cache: list[Any] = [None, None]  # [module, lines]: the last module's source lines


def _source_lines(module: cst.Module, positions: Any) -> list[str]:
    """The module's lines: from the source the positions were computed on when it is at
    hand (the runner's Positions keeps it), else regenerated by libcst."""
    if _source_cache[0] is not module:
        source = getattr(positions, "source", None)
        if not isinstance(source, str):
            source = module.code
        _source_cache[0], _source_cache[1] = module, split_lines(source)
    return _source_cache[1]


def _containing_statement(module: cst.Module, target: cst.CSTNode,
                          hint: cst.CSTNode | None = None) -> cst.SimpleStatementLine | None:
    """The innermost simple statement line holding ``target`` (None if it is in a compound
    statement's header, or in a one-line suite such as ``for x in y: f(x)``). A plain walk
    over the code-holding fields, stopping at ``target``: no visitor, no metadata; only
    over ``hint`` (the statement being walked when the rule reported) when it holds it."""
    if isinstance(hint, cst.SimpleStatementLine) and _holds(hint, target):
        return hint
    stack: list[tuple[cst.CSTNode, cst.SimpleStatementLine | None]] = [(s, None) for s in reversed(module.body)]
    while stack:
        node, statement = stack.pop()
        if node is target:
            return statement
        if isinstance(node, cst.SimpleStatementLine):
            statement = node
        elif isinstance(node, (cst.BaseCompoundStatement, cst.SimpleStatementSuite)):
            statement = None
        for name in child_fields(type(node)):
            value = getattr(node, name)
            kind = value_kind(type(value))
            if kind == 1:
                stack.append((value, statement))
            elif kind == 2:
                stack.extend((item, statement) for item in value if isinstance(item, cst.CSTNode))
    return None


def _holds(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Is ``target`` in ``root``'s tree (outside any nested one-line suite)?"""
    return _finds(root, lambda node: node is target, cst.SimpleStatementSuite)


def _suspends(statement: cst.CSTNode) -> bool:
    """Does the statement hold a ``yield`` or ``await``? A ``with`` block around one stays
    entered while the generator or coroutine is suspended, so no_grad would leak to the
    caller: no wrap fix then."""
    return _finds(statement, lambda node: isinstance(node, (cst.Yield, cst.Await)), (cst.Lambda, cst.FunctionDef))


def _finds(root: cst.CSTNode, matches: Callable[[cst.CSTNode], bool], not_into: type | tuple[type, ...]) -> bool:
    """Does a node of ``root``'s tree match, not looking inside nodes of the ``not_into`` types?"""
    stack = [root]
    while stack:
        node = stack.pop()
        if matches(node):
            return True
        if isinstance(node, not_into):
            continue
        for name in child_fields(type(node)):
            value = getattr(node, name)
            kind = value_kind(type(value))
            if kind == 1:
                stack.append(value)
            elif kind == 2:
                stack.extend(item for item in value if isinstance(item, cst.CSTNode))
    return False


def _first_import_line(module: cst.Module, positions: Mapping) -> int:
    """Where to add an import: before the first import, or after the docstring."""
    body = list(module.body)
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
        ):
            first = statement.body[0]
            if isinstance(first, cst.ImportFrom) and first.module is not None and \
                    cst.Module(body=()).code_for_node(first.module) == "__future__":
                continue
            return positions[statement].start.line
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) and \
            isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        return positions[body[0]].end.line + 1
    return 1


def build_fix(spec: FixSpec | None, module: cst.Module, positions: Mapping, rule: Any,
              statement: cst.CSTNode | None = None) -> Fix | None:
    """Turn a rule's :class:`FixSpec` into text edits (1-based positions); None when the
    fix cannot be placed. ``statement``: the statement the rule reported from, if known."""
    if spec is None or not isinstance(spec, FixSpec):
        return None
    try:
        if spec.kind == "replace":
            where = positions[spec.node]
            replacement = spec.replacement
            if isinstance(replacement, cst.CSTNode) and getattr(spec.node, "lpar", None) and \
                    getattr(replacement, "lpar", None) == spec.node.lpar:
                # positions exclude a node's own parentheses: render the replacement without them
                replacement = replacement.with_changes(lpar=[], rpar=[])
            content = replacement if isinstance(replacement, str) else module.code_for_node(replacement)
            return Fix(spec.safe, (Edit(where.start.line, where.start.column + 1, where.end.line,
                                        where.end.column + 1, content),))
        if spec.kind == "wrap_no_grad":
            statement = _containing_statement(module, spec.node, statement)
            if statement is None or _suspends(statement):
                return None
            where = positions[statement]
            lines = _source_lines(module, positions)
            first = lines[where.start.line - 1]
            indent = first[:where.start.column]
            if indent.strip():
                return None
            unit = module.default_indent
            text_lines = lines[where.start.line - 1:where.end.line]
            text_lines[-1] = text_lines[-1][:where.end.column]
            text_lines[0] = text_lines[0][where.start.column:]
            body = "".join(text_lines)
            if len(text_lines) > 1 and '"""' not in body and "'''" not in body:
                body = text_lines[0] + "".join(unit + line if line.strip() else line for line in text_lines[1:])
            newline = module.default_newline
            content = f"with {spec.no_grad}:{newline}{indent}{unit}{body}"
            edits = [Edit(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, content)]
            if spec.import_line:
                line = _first_import_line(module, positions)
                edits.insert(0, Edit(line, 1, line, 1, spec.import_line + newline))
            return Fix(spec.safe, tuple(edits))
    except (KeyError, IndexError):
        return None
    return None
