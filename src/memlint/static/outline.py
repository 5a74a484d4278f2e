"""The outline of one module: what other modules of the project may ask of it without
running its value-flow — its imports, its classes with their bases, its functions with their
decorators — read with Python's own parser (a fifth of a libcst parse).

An outline depends on the module's text alone, so it is cached by content and never goes
stale because another module changed. The project index (:mod:`memlint.static.project`)
follows outlines from module to module: a class's ancestry through the project's own base
classes to a framework class, what an imported name is (a class, a function, a module).
"""

from __future__ import annotations

import ast
import re
import functools
from dataclasses import dataclass, field

from memlint.static.tensor_api import TENSOR_API


@dataclass(frozen=True)
class FunctionOutline:
    name: str
    decorators: tuple[str, ...]  # qualified names of the decorators (calls: their function)
    positional: tuple[str, ...] = ()  # the parameters a positional argument fills, in order
    keyword_only: tuple[str, ...] = ()
    has_star_args: bool = False
    none_defaults: frozenset[str] = frozenset()  # the parameters whose default is ``None``

    @property
    def is_static(self) -> bool:
        return any(d.rsplit(".", 1)[-1] == "staticmethod" for d in self.decorators)

    def parameters(self, bound: bool) -> tuple[list[str], list[str]]:
        """The names a call's positional arguments fill, in order (without ``self`` when the
        call goes through an instance), and every parameter a keyword may name."""
        positional = list(self.positional)
        if bound and positional and not self.is_static:
            positional = positional[1:]
        return positional, positional + list(self.keyword_only)


@dataclass(frozen=True)
class ClassOutline:
    name: str
    # Each base as a qualified name, resolved through the module's imports (``torch.nn.Module``,
    # ``pkg.models.base.BaseModel``); a base defined in the module itself is ``<module>.<Name>``.
    bases: tuple[str, ...]
    methods: "dict[str, FunctionOutline]"
    # ``Name = value`` in the class body (``training_step = _shared_step``): method aliases.
    attributes: frozenset[str] = frozenset()
    # Its own methods create no parameter or submodule: every ``self.x = ...`` is data (numbers,
    # literals, tensors from torch functions, buffers), nothing assigned is called, and nothing
    # makes an ``nn.Parameter``. Its bases decide the rest (see Project.without_parameters).
    makes_no_parameters: bool = False
    # Else, when the only modules it may hold are objects handed to ``__init__`` and stored
    # (``FocalLoss(loss_fcn)``: ``self.loss_fcn = loss_fcn``, then called): those parameters'
    # names. What a construction passes for them decides (see Project.wrapped_at).
    holds_only_passed_in: tuple[str, ...] = ()
    # ``__init__`` freezes every parameter (``for p in self.parameters(): p.requires_grad = False``,
    # a statement of its own body): "" when always, else the name of the ``__init__`` parameter,
    # False by default, that decides (``InceptionV3(..., requires_grad=False)``); None otherwise.
    frozen_unless: str | None = None
    # A ``@dataclass`` whose every field is annotated with a plain type (``str``, ``int``,
    # ``Optional[str]``, ``List[int]``...), and no base: its instances hold no tensor (a run's
    # arguments, ``torch.save``d beside the checkpoints).
    plain_record: bool = False


@dataclass
class ModuleOutline:
    name: str  # dotted module name (``pkg.sub.mod``; ``pkg`` for ``pkg/__init__.py``)
    is_package: bool
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    star_imports: list[str] = field(default_factory=list)  # ``from x import *``: modules
    classes: dict[str, ClassOutline] = field(default_factory=dict)
    functions: dict[str, FunctionOutline] = field(default_factory=dict)
    # ``Alias = Other`` / ``Alias = pkg.Other`` at module level: a second name for a class or function
    aliases: dict[str, str] = field(default_factory=dict)

    def qualify(self, dotted: str) -> str:
        """A dotted name as written in this module, as a qualified name: through its imports,
        or as one of its own definitions."""
        head, _, rest = dotted.partition(".")
        if head in self.imports:
            base = self.imports[head]
        elif head in self.classes or head in self.functions or head in self.aliases:
            base = f"{self.name}.{head}" if self.name else head
        else:
            return dotted
        return f"{base}.{rest}" if rest else base


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str | None:
    """The absolute module of ``from <level dots><target> import ...`` written in ``module``."""
    if level == 0:
        return target
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        if level - 1 > len(parts):
            return None
        parts = parts[: len(parts) - (level - 1)]
    if target:
        parts.append(target)
    return ".".join(parts) if parts else None


def outline_of(source: str, name: str, is_package: bool) -> ModuleOutline | None:
    """The outline of a module's text; None if Python cannot parse it."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    outline = ModuleOutline(name, is_package)
    _read_block(tree.body, outline)
    # Decorators and bases are qualified once every name of the module is known (a base
    # class defined below its subclass, an import at the bottom of the file).
    outline.classes = {
        key: ClassOutline(value.name, tuple(outline.qualify(base) for base in value.bases),
                          {name: _qualified(method, outline) for name, method in value.methods.items()},
                          value.attributes, value.makes_no_parameters, value.holds_only_passed_in,
                          value.frozen_unless, value.plain_record)
        for key, value in outline.classes.items()
    }
    outline.functions = {key: _qualified(value, outline) for key, value in outline.functions.items()}
    outline.aliases = {key: outline.qualify(value) for key, value in outline.aliases.items()}
    return outline


def _read_block(statements: list[ast.stmt], outline: ModuleOutline) -> None:
    for statement in statements:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    outline.imports[alias.asname] = alias.name
                else:
                    head = alias.name.split(".", 1)[0]
                    outline.imports.setdefault(head, head)
        elif isinstance(statement, ast.ImportFrom):
            source = resolve_relative(outline.name, outline.is_package, statement.level, statement.module)
            if source is None:
                continue
            for alias in statement.names:
                if alias.name == "*":
                    outline.star_imports.append(source)
                else:
                    outline.imports[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(statement, ast.ClassDef):
            methods, attributes = {}, set()
            for item in statement.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods[item.name] = _function(item)
                elif isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                    attributes.add(item.targets[0].id)
            bases = tuple(text for text in (_dotted(base) for base in statement.bases) if text)
            makes_none, passed_in = _makes_no_parameters(statement, set(methods), set(outline.imports))
            outline.classes[statement.name] = ClassOutline(statement.name, bases, methods, frozenset(attributes),
                                                           makes_none, passed_in, _frozen_unless(statement),
                                                           _plain_record(statement))
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            outline.functions[statement.name] = _function(statement)
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            value = _dotted(statement.value)
            if value is not None:
                outline.aliases[statement.targets[0].id] = value
        elif isinstance(statement, ast.If):  # if TYPE_CHECKING: / version switches
            _read_block(statement.body, outline)
            _read_block(statement.orelse, outline)
        elif isinstance(statement, ast.Try):  # try: import x  except ImportError: ...
            _read_block(statement.body, outline)
            for handler in statement.handlers:
                _read_block(handler.body, outline)


# Annotations of values that hold no tensor: builtins and the typing wrappers around them.
_PLAIN_TYPES = frozenset({"str", "int", "float", "bool", "bytes", "None", "Optional", "List", "Dict", "Tuple",
                          "Union", "Literal", "Sequence", "Set", "list", "dict", "tuple", "set", "Any"})


def _plain_record(statement: ast.ClassDef) -> bool:
    """Is the class a ``@dataclass`` without bases whose fields are all annotated with plain types?"""
    if statement.bases or not any(_dotted(d.func if isinstance(d, ast.Call) else d) in ("dataclass", "dataclasses.dataclass")
                                  for d in statement.decorator_list):
        return False
    fields = [item for item in statement.body if isinstance(item, ast.AnnAssign)]
    return bool(fields) and all(_plain_annotation(item.annotation) for item in fields)


def _plain_annotation(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, str) and node.value in _PLAIN_TYPES
    if isinstance(node, (ast.Name, ast.Attribute)):
        return (_dotted(node) or "").rsplit(".", 1)[-1] in _PLAIN_TYPES
    if isinstance(node, ast.Subscript):
        if (_dotted(node.value) or "").rsplit(".", 1)[-1] == "Literal":
            return True  # Literal["mse", "ce"]
        return _plain_annotation(node.value) and _plain_annotation(node.slice)
    if isinstance(node, ast.Tuple):
        return all(_plain_annotation(element) for element in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _plain_annotation(node.left) and _plain_annotation(node.right)
    return False


# Calls whose result is plain data, never a module: builtins, and torch's lower-case functions
# (``torch.zeros``, ``torch.tensor``); ``register_buffer`` keeps a tensor that is no parameter.
_DATA_BUILTINS = frozenset({"len", "int", "float", "bool", "str", "list", "tuple", "dict", "set", "range", "max",
                            "min", "sum", "abs", "round", "sorted", "getattr"})
_PARAMETER_MAKERS = ("Parameter", "register_parameter", "add_module", "register_module", "ParameterList",
                     "ParameterDict", "ModuleList", "ModuleDict", "Sequential")


def _makes_no_parameters(node: ast.ClassDef, methods: set[str], imported: set[str]) -> tuple[bool, tuple[str, ...]]:
    """See :attr:`ClassOutline.makes_no_parameters` (``RunningMeanStd``: numbers and buffers) and
    :attr:`ClassOutline.holds_only_passed_in`: the pair."""
    assigned: set[str] = set()
    passed_in: set[str] = set()  # self.x = x, x a parameter: an object from outside, maybe a module
    from_init: dict[str, str] = {}  # self.x = x in __init__: attribute -> parameter
    for item in ast.walk(node):
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parameters = {a.arg for a in (*item.args.posonlyargs, *item.args.args, *item.args.kwonlyargs)}
            for statement in ast.walk(item):
                if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name) \
                        and statement.value.id in parameters:
                    for target in statement.targets:
                        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                                and target.value.id == "self":
                            passed_in.add(target.attr)
                            if item.name == "__init__" and item in node.body:
                                from_init.setdefault(target.attr, statement.value.id)
                            else:
                                from_init[target.attr] = ""  # also set elsewhere: unknown
        if isinstance(item, ast.Call):
            callee = _dotted(item.func) or ""
            if callee.rsplit(".", 1)[-1] in _PARAMETER_MAKERS:
                return False, ()
        if isinstance(item, ast.AnnAssign) and item.value is None:
            continue  # self.buf: Tensor, a declaration: nothing is assigned
        if isinstance(item, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            for target in targets:
                for element in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name) \
                            and element.value.id == "self":
                        if item.value is None or not _is_data(item.value, imported):
                            return False, ()
                        assigned.add(element.attr)
    wrapped: set[str] = set()  # attributes holding an object passed in whose calls may run a module
    for item in ast.walk(node):  # a stored callable, called: a module or a function passed in
        if isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute) \
                and isinstance(item.func.value, ast.Name) and item.func.value.id == "self" \
                and item.func.attr in assigned and item.func.attr not in methods:
            wrapped.add(item.func.attr)
        # ... or a part of an object passed in, called (self.model.encoder(x)): its submodules
        parts = (_dotted(item.func) or "").split(".") if isinstance(item, ast.Call) else []
        if len(parts) >= 3 and parts[0] == "self" and parts[1] in passed_in and parts[2] not in TENSOR_API:
            wrapped.add(parts[1])  # (not a tensor's own method: self.scale.clamp(0, 1))
    if not wrapped:
        return True, ()
    if all(from_init.get(attribute) for attribute in wrapped):
        return False, tuple(sorted({from_init[attribute] for attribute in wrapped}))
    return False, ()


def _frozen_unless(node: ast.ClassDef) -> str | None:
    """See :attr:`ClassOutline.frozen_unless`."""
    init = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
    if init is None:
        return None
    arguments = init.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    defaults = dict(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
    defaults.update((a.arg, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None)

    def decided_by(value: ast.expr) -> str | None:
        if isinstance(value, ast.Constant) and value.value is False:
            return ""
        default = defaults.get(value.id) if isinstance(value, ast.Name) else None
        return value.id if isinstance(default, ast.Constant) and default.value is False else None

    for statement in init.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and statement.value.args \
                and _dotted(statement.value.func) == "self.requires_grad_":
            return decided_by(statement.value.args[0])  # self.requires_grad_(False)
        if not isinstance(statement, ast.For) or not isinstance(statement.iter, ast.Call) \
                or _dotted(statement.iter.func) not in ("self.parameters", "self.named_parameters") \
                or len(statement.body) != 1:
            continue
        target = statement.target
        if isinstance(target, ast.Tuple) and len(target.elts) == 2:
            target = target.elts[1]  # for name, p in self.named_parameters()
        if not isinstance(target, ast.Name):
            continue
        only = statement.body[0]
        if isinstance(only, ast.Assign) and len(only.targets) == 1 \
                and _dotted(only.targets[0]) == f"{target.id}.requires_grad":
            return decided_by(only.value)
        if isinstance(only, ast.Expr) and isinstance(only.value, ast.Call) and only.value.args \
                and _dotted(only.value.func) == f"{target.id}.requires_grad_":
            return decided_by(only.value.args[0])
    return None


def _is_data(value: ast.expr, imported: set[str]) -> bool:
    """Plain data: constants, containers of data, names and attributes (what a parameter or a
    local holds is judged by whether it is ever called), arithmetic, subscripts, tensors from
    torch's lower-case functions, methods of values (``x.view(...)``, ``self._update(...)``).
    Not a call of anything else imported (``models.resnet18()``) or of a plain name."""
    for item in ast.walk(value):
        if isinstance(item, (ast.Lambda, ast.FunctionDef)):
            return False
        if isinstance(item, ast.Call):
            callee = _dotted(item.func)
            if callee is None:
                continue  # x.mean(0).sqrt(): a method of a computed value
            head, _, last = callee.rpartition(".")
            root = callee.split(".", 1)[0]
            if callee in _DATA_BUILTINS or (root in ("torch", "np", "numpy", "math") and last[:1].islower()):
                continue
            if head and root not in imported and not last[:1].isupper():
                continue  # a method of a value, not a constructor
            return False
    return True


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionOutline:
    args = node.args
    decorators = tuple(text for text in (_dotted(_callee(d)) for d in node.decorator_list) if text)
    positional = [*args.posonlyargs, *args.args]
    with_defaults = list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) \
        + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    none_defaults = frozenset(a.arg for a, d in with_defaults if isinstance(d, ast.Constant) and d.value is None)
    return FunctionOutline(node.name, decorators, tuple(a.arg for a in positional),
                           tuple(a.arg for a in args.kwonlyargs), args.vararg is not None, none_defaults)


def _qualified(function: FunctionOutline, outline: ModuleOutline) -> FunctionOutline:
    return FunctionOutline(function.name, tuple(outline.qualify(d) for d in function.decorators),
                           function.positional, function.keyword_only, function.has_star_args,
                           function.none_defaults)


def _callee(node: ast.expr) -> ast.expr:
    return node.func if isinstance(node, ast.Call) else node


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Subscript):  # Generic[T], nn.Module subclass with a type parameter
        return _dotted(node.value)
    return None


def instances_only_called(text: str, class_name: str) -> list[tuple[str, str, int]] | None:
    """Every instance of the class ``class_name`` the module makes, as (function, local name, how
    many times the function calls it) — when each is bound to a local name of a function that
    only ever calls it (``extractor = RLExtractor(path)`` ... ``extractor(article)``): its
    ``__call__`` then runs only at those calls. None when some mention of the class is anything
    else (an instance passed on, returned, stored, made at module level; a subclass; an
    annotation): who calls it is not known."""
    tree = parsed_text(text)
    if tree is None:
        return None
    parents = _parents(tree)
    found = []
    for node in _mentions(tree, class_name):
        call = parents.get(id(node))
        assign = parents.get(id(call)) if call is not None else None
        if not (isinstance(call, ast.Call) and call.func is node and isinstance(assign, ast.Assign)
                and assign.value is call and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)):
            return None
        function = parents.get(id(assign))
        while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = parents.get(id(function))
        if function is None:
            return None  # made by module-level code: any importer may call it
        name = assign.targets[0].id
        calls = _only_called(function, name, parents)
        if calls is None:
            return None
        found.append((function.name, name, calls))
    return found


def _only_called(function: ast.AST, name: str, parents: dict[int, ast.AST]) -> int | None:
    """How many times ``function`` calls its local ``name``, when it binds it once and uses it
    only as the function of a call, none inside a nested definition; else None."""
    stores = calls = 0
    for node in ast.walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        owner = parents.get(id(node))
        while owner is not None and owner is not function:
            if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                                  ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                return None
            owner = parents.get(id(owner))
        if isinstance(node.ctx, ast.Store):
            stores += 1
        elif isinstance(parents.get(id(node)), ast.Call) and parents[id(node)].func is node:
            calls += 1
        else:
            return None
    return calls if stores == 1 else None


def constructions_leave(text: str, class_name: str, parameter: str, index: int | None) -> bool:
    """Does every mention of the class ``class_name`` in the module construct it without passing
    ``parameter`` (by keyword, or by position ``index`` counted after ``self``; None: keyword
    only)? A mention that is no call (a subclass, a registry, a class handed on) or a call with
    ``*args`` / ``**kwargs`` may pass it: False. ``super(Name, self)`` is no construction."""
    values = construction_literals(text, class_name, parameter, index)
    return values is not None and all(value is PARAMETER_DEFAULT for value in values)


class _Default:
    def __repr__(self) -> str:
        return "PARAMETER_DEFAULT"


PARAMETER_DEFAULT = _Default()  # a construction that leaves the parameter at its default


def construction_literals(text: str, class_name: str, parameter: str, index: int | None) -> list[object] | None:
    """What every mention of the class ``class_name`` in the module passes ``parameter`` (by
    keyword, or by position ``index`` counted after ``self``): a literal, or
    :data:`PARAMETER_DEFAULT` when left out. None when a mention is no plain construction (see
    :func:`constructions_leave`) or passes anything but a literal."""
    tree = parsed_text(text)
    if tree is None:
        return None
    parents = _parents(tree)
    values: list[object] = []
    for node in _mentions(tree, class_name):
        call = parents.get(id(node))
        if not isinstance(call, ast.Call):
            return None
        if call.func is not node:
            if isinstance(call.func, ast.Name) and call.func.id == "super" and call.args and call.args[0] is node:
                continue
            return None
        if any(isinstance(arg, ast.Starred) for arg in call.args) or any(keyword.arg is None for keyword in call.keywords):
            return None
        passed = [keyword.value for keyword in call.keywords if keyword.arg == parameter]
        if index is not None and len(call.args) > index:
            passed.append(call.args[index])
        if not passed:
            values.append(PARAMETER_DEFAULT)
            continue
        try:
            values.append(ast.literal_eval(passed[0]))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    return values


def imports_name_from(text: str, stem: str, name: str) -> bool:
    """May the module's code (imports at any depth, in functions and branches too) reach ``name``
    of the module whose last dotted part is ``stem``: ``from ...stem import name`` (or ``*``), or
    the module itself imported (``import pkg.stem``, ``from pkg import stem``), whose attributes
    are open to it? True when the text cannot be parsed or imports by a computed name."""
    tree = parsed_text(text)
    if tree is None:
        return True
    if "import_module" in text or "__import__" in text:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module == stem or module.endswith("." + stem):
                if any(alias.name in ("*", name) for alias in node.names):
                    return True
            elif any(alias.name == stem for alias in node.names):
                return True  # from pkg import stem: the module as an object
        elif isinstance(node, ast.Import):
            if any(alias.name == stem or alias.name.endswith("." + stem) for alias in node.names):
                return True
    return False


@functools.lru_cache(maxsize=16)
def parsed_text(text: str) -> ast.Module | None:
    """The module's tree (the project's modules are read again for each question: kept a while)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    """id() of each node -> the node it is a child of."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def _mentions(tree: ast.AST, name: str):
    """The expressions naming ``name``: ``Name`` or ``pkg.Name`` (also as the object of an
    attribute: ``Name.from_pretrained(...)`` is a mention that is no plain construction)."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name):
            yield node


def only_called_by_name(text: str, name: str, own: bool = False) -> bool:
    """Is every mention of ``name`` in a module's text a call of it, an import of it or (``own``)
    its definition? Not when it is handed on (``callbacks.append(evaluate)``), stored, or
    named in a string or comment. In its own module (``own``), an attribute of that name
    (``optimizer.step()`` beside ``def step(...)``) is another object's, not a mention."""
    mentions = len(re.findall(rf"(?<![\w.]){re.escape(name)}\b" if own else rf"\b{re.escape(name)}\b", text))
    calls = len(re.findall(rf"(?<![\w.]){re.escape(name)}\s*\(", text))
    imports = len(re.findall(rf"^[ \t]*from[ \t]+[\w.]+[ \t]+import[^\n(]*\b{re.escape(name)}\b", text, re.MULTILINE))
    return mentions == calls + imports
