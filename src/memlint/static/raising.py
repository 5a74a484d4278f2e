"""Code that always raises before it gets anywhere, read from the module alone.

Two things make a statement raise whenever it runs, whatever the data:

- it evaluates a name bound nowhere in the module (not assigned, imported, defined or a
  parameter in any scope, and not a builtin): ``os.listdir(sw_path)`` with ``sw_path``
  defined nowhere raises ``NameError``;
- it calls a function or class of the same module with arguments its signature cannot take
  (``Encoder(num_features, dim)`` when ``__init__`` needs a third; ``super().__init__(x, kitti=True)``
  in a class whose one base, a class of the module, takes no ``kitti``): ``TypeError``;
- it reads a field the module's command line never defines (``args.epoch`` when the one
  ``argparse`` parser adds only ``--dataname`` and ``--gpu``, and nothing else sets it):
  ``AttributeError``.

So does a ``raise`` statement. The rest of the statement's block then never runs. A function whose body raises before it can
return always raises, so its callers raise too, and a class whose ``__init__`` always raises
never has an instance: its methods never run. The engine drops what a rule reports in code that
never runs (``FileChecker._never_run``); it reads this module only for a file with a report.

Only what is certain counts: the operands after the first of ``and`` / ``or``, the branches of
``a if c else b``, a lambda's body and a comprehension's element are not evaluated for sure, and
a module that may bind names without saying so (``from x import *``, ``exec``, ``globals()``,
``builtins``) is left alone. The first pass is Python's own ``symtable`` (cheap); the tree is
read only when a name is bound nowhere or a call of the module's own may not fit.
"""

from __future__ import annotations

import builtins
import re
import symtable
from dataclasses import dataclass, field

import libcst as cst

# Names a module may use without binding them that still resolve when it runs: module
# attributes, and what tools install as builtins (kernprof's ``@profile``, gettext's ``_``,
# IPython's ``display``).
_PROVIDED = frozenset(dir(builtins)) | frozenset({
    "__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__", "__path__",
    "__cached__", "__builtins__", "__annotations__", "__class__", "__module__", "__qualname__",
    "__dict__", "WindowsError", "profile", "_", "display", "get_ipython", "__IPYTHON__", "reveal_type",
})

# Text that means names may be bound in ways ``symtable`` cannot see.
_DYNAMIC_BINDING = ("exec(", "globals()", "locals()", "vars()", "builtins", "sys.modules",
                    "get_ipython", "setattr(")


@dataclass
class RaisingCode:
    """What in one module never runs because something before it always raises."""

    # id() of every statement that never runs: the statements after an always-raising one in
    # its block.
    dead_statements: set[int] = field(default_factory=set)
    # Names of the module's top-level classes whose ``__init__`` always raises and that no
    # class of the module derives from.
    classes_never_made: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.dead_statements or self.classes_never_made)


NOTHING = RaisingCode()


def names_bound_nowhere(source: str, path: str = "<module>",
                        star_imported: frozenset[str] | None = None) -> frozenset[str]:
    """The names the module reads that nothing in it binds, in any scope, and that are no
    builtin. ``star_imported``: what its ``from x import *`` bring in (None: unknown). Empty when
    unknown (a syntax error, a module that binds names dynamically)."""
    if any(word in source for word in _DYNAMIC_BINDING) or ("import *" in source and star_imported is None):
        return frozenset()
    try:
        table = symtable.symtable(source, path, "exec")
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    bound: set[str] = set(star_imported or ())
    read: set[str] = set()
    stack = [table]
    while stack:
        scope = stack.pop()
        stack.extend(scope.get_children())
        is_module = scope.get_type() == "module"
        for symbol in scope.get_symbols():
            name = symbol.get_name()
            if symbol.is_assigned() or symbol.is_imported() or symbol.is_parameter() or symbol.is_namespace():
                bound.add(name)
            elif symbol.is_referenced() and (is_module or symbol.is_global()):
                read.add(name)
    return frozenset(read - bound - _PROVIDED)


def module_level_names(source: str, path: str = "<module>") -> tuple[frozenset[str], tuple[str, ...]] | None:
    """What ``from <this module> import *`` may bring in: every name its top level binds (a
    superset: ``__all__`` and underscores are not read), and the modules it star-imports in turn
    (``from .b import *``, as written). None when unknown."""
    if any(word in source for word in _DYNAMIC_BINDING):
        return None
    try:
        table = symtable.symtable(source, path, "exec")
    except (SyntaxError, ValueError, RecursionError):
        return None
    names = frozenset(symbol.get_name() for symbol in table.get_symbols()
                      if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace())
    return names, tuple(star_imports_in(source))


def star_imports_in(source: str) -> list[str]:
    """The modules ``from x import *`` names, as written (``.utils``, ``pkg.models``)."""
    return re.findall(r"^\s*from\s+([\w.]+)\s+import\s+\*", source, re.MULTILINE)


def find_raising_code(module: cst.Module, source: str, path: str = "<module>",
                      star_imported: frozenset[str] | None = None, complete: bool = True) -> RaisingCode:
    """Which statements of ``module`` never run (see the module's docstring). ``complete`` False
    (a snippet, a file joined to no project): only what follows a ``raise`` statement, since a
    snippet leaves names undefined on purpose."""
    if not complete:
        if "raise " not in source:
            return NOTHING
        return _Reader(frozenset(), {}, None).read(module)
    unbound = names_bound_nowhere(source, path, star_imported)
    signatures = _signatures(module) if not any(word in source for word in _DYNAMIC_BINDING) else {}
    if "import *" in source:
        signatures = {name: s for name, s in signatures.items() if star_imported is not None and name not in star_imported}
    namespace = command_line_fields(module, source)
    if not unbound and not signatures and namespace is None and "raise " not in source:
        return NOTHING
    reader = _Reader(unbound, signatures, namespace)
    return reader.read(module)


def command_line_fields(module: cst.Module, source: str) -> tuple[str, frozenset[str]] | None:
    """The module's command line, when it is fully known: the name its parsed arguments are
    bound to at the top level (``args = parser.parse_args()``) and every field they can have (each
    ``add_argument``'s ``dest``, ``set_defaults``, ``args.x = ...``). None when anything may add
    fields unseen: a second parser, the parser handed to a function (``add_model_args(parser)``),
    sub-commands, ``parse_known_args``, an option name that is no literal, ``setattr``/``vars``."""
    if "ArgumentParser" not in source or any(word in source for word in (
            "add_subparsers", "parse_known_args", "setattr(", "vars(", "__dict__", "Namespace(", "fromfile")):
        return None
    parsers: list[str] = []
    parsed: list[str] = []
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                    and isinstance(small.value, cst.Call):
                func = small.value.func
                name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
                if name == "ArgumentParser":
                    parsers.append(small.targets[0].target.value)
                elif name == "parse_args" and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and not small.value.args:
                    parsed.append(small.targets[0].target.value)
    if len(parsers) != 1 or len(parsed) != 1 or source.count("ArgumentParser(") != 1:
        return None
    parser, namespace = parsers[0], parsed[0]
    groups = {parser}
    calls: list[cst.Call] = []
    targets: list[cst.BaseExpression] = []
    for node in _descendants(module):  # one walk; the groups are known only at its end
        if isinstance(node, cst.Call):
            calls.append(node)
        elif isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            targets.append(node.target)
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Attribute) \
                and node.value.func.attr.value in ("add_argument_group", "add_mutually_exclusive_group") \
                and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            groups.add(node.targets[0].target.value)
    if sum(1 for target in targets if isinstance(target, cst.Name) and target.value == namespace) != 1:
        return None  # the parsed arguments rebound
    fields: set[str] = set()
    for node in calls:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in groups:
            if func.attr.value == "add_argument":
                dest = _destination(node)
                if dest is None:
                    return None
                fields.add(dest)
            elif func.attr.value == "set_defaults":
                if any(arg.keyword is None for arg in node.args):
                    return None
                fields.update(arg.keyword.value for arg in node.args)
        elif any(isinstance(arg.value, cst.Name) and arg.value.value in groups | {namespace} for arg in node.args):
            return None  # add_model_args(parser), update(args): fields may be added unseen
    for target in targets:
        for element in (target.elements if isinstance(target, (cst.Tuple, cst.List)) else (target,)):
            if isinstance(element, (cst.Element, cst.StarredElement)):
                element = element.value
            if isinstance(element, cst.Attribute) and isinstance(element.value, cst.Name) \
                    and element.value.value == namespace:
                fields.add(element.attr.value)
    return namespace, frozenset(fields)


def _destination(call: cst.Call) -> str | None:
    """The field ``parser.add_argument(...)`` fills: ``dest=``, else the first long option
    (``--num-epochs``: ``num_epochs``), else the first option or the positional name."""
    strings = []
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == "dest":
                return arg.value.evaluated_value if isinstance(arg.value, cst.SimpleString) else None
            continue
        if arg.star or not isinstance(arg.value, cst.SimpleString):
            return None
        strings.append(arg.value.evaluated_value)
    if not strings:
        return None
    long = [s for s in strings if s.startswith("--")]
    chosen = long[0] if long else strings[0]
    return chosen.lstrip("-").replace("-", "_")


def _descendants(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


@dataclass(frozen=True)
class _Signature:
    """What a call of a top-level function (or of a class, through its ``__init__``) may pass."""

    positional: tuple[str, ...]  # filled by position, in order (``self`` left out for a class)
    required: frozenset[str]  # parameters without a default
    keyword_only: frozenset[str]
    star_args: bool
    star_kwargs: bool

    def refuses(self, call: cst.Call) -> bool:
        """Does Python raise TypeError for ``call``, whatever the values?"""
        given = 0
        named: set[str] = set()
        for arg in call.args:
            if arg.star:
                return False  # f(*xs) / f(**kw): the count is not known
            if arg.keyword is None:
                given += 1
            else:
                named.add(arg.keyword.value)
        if given > len(self.positional) and not self.star_args:
            return True
        filled = set(self.positional[:given])
        if filled & named:
            return True  # the same parameter twice
        parameters = set(self.positional) | self.keyword_only
        if not self.star_kwargs and named - parameters:
            return True
        return bool(self.required - filled - named)


def _signature(function: cst.FunctionDef, bound: bool) -> _Signature | None:
    if function.decorators or function.asynchronous:
        return None
    params = function.params
    positional = [*params.posonly_params, *params.params]
    required = {p.name.value for p in positional if p.default is None}
    required |= {p.name.value for p in params.kwonly_params if p.default is None}
    names = tuple(p.name.value for p in positional)
    if bound:
        if not names:
            return None
        required.discard(names[0])
        names = names[1:]
    return _Signature(
        positional=names,
        required=frozenset(required),
        keyword_only=frozenset(p.name.value for p in params.kwonly_params),
        star_args=isinstance(params.star_arg, cst.Param),
        star_kwargs=params.star_kwarg is not None,
    )


# Bases whose metaclass decides what calling the class does (``Color(1)`` looks a member up).
_CALLED_THROUGH_A_METACLASS = frozenset({"Enum", "IntEnum", "Flag", "IntFlag", "StrEnum", "NamedTuple",
                                         "TypedDict", "Protocol", "type", "ABCMeta"})


def _signatures(module: cst.Module) -> dict[str, _Signature]:
    """The top-level functions, and the classes with an ``__init__`` of their own (no ``__new__``,
    no decorator, no metaclass, no enum-like base), that the module binds once, by name."""
    counts: dict[str, int] = {}
    found: dict[str, _Signature] = {}
    for statement in module.body:
        for name in _top_level_bindings(statement):
            counts[name] = counts.get(name, 0) + 1
        if isinstance(statement, cst.FunctionDef):
            signature = _signature(statement, bound=False)
            if signature is not None:
                found[statement.name.value] = signature
        elif isinstance(statement, cst.ClassDef) and not statement.decorators \
                and not any(arg.keyword is not None for arg in statement.bases) \
                and not any(_last_name(arg.value) in _CALLED_THROUGH_A_METACLASS for arg in statement.bases):
            methods = {s.name.value: s for s in _block(statement.body) if isinstance(s, cst.FunctionDef)}
            init = methods.get("__init__")
            if init is not None and "__new__" not in methods and "__call__" not in methods:
                signature = _signature(init, bound=True)
                if signature is not None:
                    found[statement.name.value] = signature
    return {name: signature for name, signature in found.items() if counts.get(name) == 1}


def _top_level_bindings(statement: cst.CSTNode) -> list[str]:
    """The names a top-level statement binds; a binding under a compound statement (``try: from x
    import Encoder``) counts twice, so that no signature is trusted for it."""
    names = _bound_names(statement)
    return names if isinstance(statement, (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef)) else names * 2


def _bound_names(node: cst.CSTNode, into_definitions: bool = False) -> list[str]:
    """The names bound in ``node``: assigned, loop targets, ``with``/``except ... as``, imported
    (``import a.b`` binds ``a``), defined; the bodies of nested definitions only with
    ``into_definitions``."""
    names = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            names.append(current.name.value)
            if not into_definitions:
                continue
        targets: list[cst.CSTNode] = []
        if isinstance(current, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For)):
            targets.append(current.target)
        elif isinstance(current, cst.WithItem) and current.asname is not None:
            targets.append(current.asname.name)
        elif isinstance(current, cst.ExceptHandler) and current.name is not None:
            targets.append(current.name.name)
        elif isinstance(current, cst.ImportAlias):
            bound = current.asname.name if current.asname is not None else current.name
            targets.append(bound)
            if isinstance(bound, cst.Attribute):
                names.append(_leftmost(bound))
        for target in targets:
            names.extend(n.value for n in _names(target))
        stack.extend(current.children)
    return names


def _names(target: cst.CSTNode) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in _names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _names(target.value)
    if isinstance(target, cst.AsName):
        return _names(target.name)
    return []


def _last_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else ""


def _leftmost(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def _block(body: cst.BaseSuite) -> list[cst.BaseStatement]:
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []


def evaluated(node: cst.CSTNode):
    """The expressions certainly evaluated when ``node`` is (a name, a call), in no order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (cst.Lambda, cst.SimpleString, cst.Integer, cst.Float)):
            continue
        if isinstance(current, cst.BooleanOperation):
            stack.append(current.left)
        elif isinstance(current, cst.IfExp):
            stack.append(current.test)
        elif isinstance(current, cst.Comparison):
            stack.append(current.left)
            if current.comparisons:
                stack.append(current.comparisons[0].comparator)
        elif isinstance(current, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            stack.append(current.for_in.iter)
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)
        elif isinstance(current, cst.Call):
            stack.append(current.func)
            stack.extend(arg.value for arg in current.args)
        elif isinstance(current, cst.Subscript):
            stack.append(current.value)
            for element in current.slice:
                part = element.slice
                if isinstance(part, cst.Index):
                    stack.append(part.value)
                elif isinstance(part, cst.Slice):
                    stack.extend(p for p in (part.lower, part.upper, part.step) if p is not None)
        elif isinstance(current, cst.BinaryOperation):
            stack.extend((current.left, current.right))
        elif isinstance(current, cst.UnaryOperation):
            stack.append(current.expression)
        elif isinstance(current, (cst.Tuple, cst.List, cst.Set)):
            stack.extend(element.value for element in current.elements)
        elif isinstance(current, cst.Dict):
            for element in current.elements:
                if isinstance(element, cst.DictElement):
                    stack.extend((element.key, element.value))
                else:
                    stack.append(element.value)
        elif isinstance(current, cst.FormattedString):
            stack.extend(part.expression for part in current.parts
                         if isinstance(part, cst.FormattedStringExpression))
        elif isinstance(current, cst.ConcatenatedString):
            stack.extend((current.left, current.right))
        elif isinstance(current, (cst.Await, cst.NamedExpr)):
            stack.append(current.expression if isinstance(current, cst.Await) else current.value)


def _header_expressions(statement: cst.CSTNode) -> list[cst.CSTNode]:
    """What running ``statement`` evaluates for sure, before (or without) any block of its own."""
    if isinstance(statement, cst.SimpleStatementLine):
        found: list[cst.CSTNode] = []
        for small in statement.body:
            if isinstance(small, (cst.Expr, cst.Return)) and small.value is not None:
                found.append(small.value)
            elif isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                found.append(small.value)
            elif isinstance(small, cst.AugAssign):
                found.append(small.value)
            elif isinstance(small, cst.Assert):
                found.append(small.test)
        return found
    if isinstance(statement, (cst.If, cst.While)):
        return [statement.test]
    if isinstance(statement, cst.For):
        return [statement.iter]
    if isinstance(statement, cst.With):
        return [item.item for item in statement.items]
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [decorator.decorator for decorator in statement.decorators]
    return []


class _Reader:
    def __init__(self, unbound: frozenset[str], signatures: dict[str, _Signature],
                 namespace: tuple[str, frozenset[str]] | None = None) -> None:
        self.unbound = unbound
        self.signatures = signatures
        self.namespace = namespace
        self.shadowed = 0  # inside functions that bind the namespace's name themselves
        self.always_raising: set[str] = set()  # top-level names whose call always raises
        self.found = RaisingCode()
        self.classes: list[cst.ClassDef] = []  # the classes around the statement being read

    def read(self, module: cst.Module) -> RaisingCode:
        # calls of always-raising functions raise too: read again until nothing new is found
        for _ in range(4):
            known = len(self.always_raising)
            self.found = RaisingCode()
            self._block(list(module.body))
            for statement in module.body:
                self._definitions(statement)
            if len(self.always_raising) == known:
                break
        subclassed = {_leftmost(arg.value) for statement in module.body if isinstance(statement, cst.ClassDef)
                      for arg in statement.bases}
        self.found.classes_never_made = {
            statement.name.value for statement in module.body
            if isinstance(statement, cst.ClassDef) and statement.name.value in self.always_raising
            and statement.name.value not in subclassed
        }
        return self.found if self.found else NOTHING

    def _definitions(self, statement: cst.CSTNode) -> None:
        """Note the top-level functions, and classes through ``__init__``, whose body raises
        before anything can return."""
        if isinstance(statement, cst.FunctionDef):
            if statement.name.value in self.signatures and self._body_always_raises(statement):
                self.always_raising.add(statement.name.value)
        elif isinstance(statement, cst.ClassDef) and statement.name.value in self.signatures:
            init = next((s for s in _block(statement.body)
                         if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
            self.classes.append(statement)
            try:
                if init is not None and self._body_always_raises(init):
                    self.always_raising.add(statement.name.value)
            finally:
                self.classes.pop()

    def _body_always_raises(self, function: cst.FunctionDef) -> bool:
        body = _block(function.body)
        for index, statement in enumerate(body):
            if self._raises(statement):
                return not any(_may_leave(earlier) for earlier in body[:index])
        return False

    def _block(self, body: list[cst.BaseStatement]) -> None:
        for index, statement in enumerate(body):
            self._inner_blocks(statement)
            if self._raises(statement):
                self.found.dead_statements.update(id(later) for later in body[index + 1:])
                return

    def _inner_blocks(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.FunctionDef):
            shadows = self.namespace is not None and _binds(statement, self.namespace[0])
            self.shadowed += shadows
            self._block(_block(statement.body))
            self.shadowed -= shadows
        elif isinstance(statement, cst.ClassDef):
            self.classes.append(statement)
            try:
                self._block(_block(statement.body))
            finally:
                self.classes.pop()
        elif isinstance(statement, (cst.If, cst.For, cst.While, cst.With)):
            self._block(_block(statement.body))
            orelse = statement.orelse if isinstance(statement, (cst.If, cst.For, cst.While)) else None
            while isinstance(orelse, cst.If):
                self._block(_block(orelse.body))
                orelse = orelse.orelse
            if isinstance(orelse, cst.Else):
                self._block(_block(orelse.body))
        elif isinstance(statement, cst.Try):
            self._block(_block(statement.body))
            for handler in statement.handlers:
                self._block(_block(handler.body))
            for part in (statement.orelse, statement.finalbody):
                if part is not None:
                    self._block(_block(part.body))

    def _raises(self, statement: cst.CSTNode) -> bool:
        if isinstance(statement, cst.SimpleStatementLine) and any(isinstance(small, cst.Raise) for small in statement.body):
            return True  # raise RuntimeError("...") as a statement of the block
        for expression in _header_expressions(statement):
            for node in evaluated(expression):
                if isinstance(node, cst.Name) and node.value in self.unbound:
                    return True
                if self.namespace is not None and not self.shadowed and isinstance(node, cst.Attribute) \
                        and isinstance(node.value, cst.Name) and node.value.value == self.namespace[0] \
                        and node.attr.value not in self.namespace[1]:
                    return True  # args.epoch: a field the command line never defines
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                    name = node.func.value
                    if name in self.always_raising:
                        return True
                    signature = self.signatures.get(name)
                    if signature is not None and signature.refuses(node):
                        return True
                base = self._initialised_base(node) if isinstance(node, cst.Call) else None
                if base is not None and (base in self.always_raising
                                         or (base in self.signatures and self.signatures[base].refuses(node))):
                    return True  # super().__init__(..., kitti=True) that the base's __init__ cannot take
        return False

    def _initialised_base(self, call: cst.Call) -> str | None:
        """For ``super().__init__(...)`` (or ``super(Cls, self).__init__(...)``) in a class of the
        module with one base, a class of the module named plainly: that base's name."""
        func = call.func
        if not self.classes or not isinstance(func, cst.Attribute) or func.attr.value != "__init__" \
                or not isinstance(func.value, cst.Call) or not isinstance(func.value.func, cst.Name) \
                or func.value.func.value != "super":
            return None
        cls = self.classes[-1]
        if len(cls.bases) != 1 or not isinstance(cls.bases[0].value, cst.Name) or cls.bases[0].keyword is not None:
            return None
        arguments = func.value.args
        if arguments and not (len(arguments) == 2 and isinstance(arguments[0].value, cst.Name)
                              and arguments[0].value.value == cls.name.value):
            return None
        return cls.bases[0].value.value


def _binds(function: cst.FunctionDef, name: str) -> bool:
    """Does ``function`` (or a function nested in it) bind ``name`` itself: a parameter, an
    assignment, a loop target?"""
    params = function.params
    if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
        return True
    if any(isinstance(p, cst.Param) and p.name.value == name for p in (params.star_arg, params.star_kwarg)):
        return True
    return name in _bound_names(function.body, into_definitions=True)


def _may_leave(statement: cst.CSTNode) -> bool:
    """Could ``statement`` return or yield (at any depth, outside nested definitions)?"""
    stack = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Return, cst.Yield)):
            return True
        if node is not statement and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(node.children)
    return False
