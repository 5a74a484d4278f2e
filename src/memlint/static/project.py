"""The project a checked file belongs to: its other modules, found from the file's package,
read as outlines (:mod:`memlint.static.outline`) and, on demand, as summaries of what their
functions and classes do (:mod:`memlint.static.summaries`).

A rule sees a class or function of another module of the project as it sees one of its own
file: ``class Model(BaseModel)`` with ``BaseModel`` in ``models/base.py`` deriving from
``LightningModule`` is a LightningModule; ``device = utils.get_device()`` sets the CUDA
device if ``get_device`` does.

Where the project is: the import root of a file is the folder above its top-level package
(the folder of a file outside any package: a script's folder is on ``sys.path``); absolute
imports are looked up from the import roots of the files checked, from the project root (the
nearest folder above with ``pyproject.toml``, ``setup.py``, ``setup.cfg`` or ``.git``) and
from its ``src/``; relative imports from the importing module's package. So a single file
named on the command line (as pre-commit names them) still sees its package.

Outlines and summaries depend on a module's text (summaries also on the outlines they read):
they are kept per process by content, and summaries on disk beside the result cache
(:mod:`memlint.static.summary_cache`), so that a changed module invalidates only the modules
whose summaries read it.
"""

from __future__ import annotations

import ast
import os
import pickle
import io
import re
import tokenize
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from memlint.static.discovery import CONFIGURATION_SUFFIXES, LISTING, listing_digest, skip_folder_name
from memlint.static.engine import FileChecker
from memlint.static.facts import related_classes
from memlint.static.frameworks import PLAIN, ClassKinds, external_kinds
from memlint.static.outline import (
    ClassOutline, FunctionOutline, ModuleOutline, construction_literals, constructions_leave, imports_name_from,
    instances_only_called,
    only_called_by_name, outline_of, parsed_text, resolve_relative,
)
from memlint.static.raising import module_level_names
from memlint.static.cache import code_fingerprint, summary_folder
from memlint.static.source import UncheckableFile, content_digest, decode_source, file_digest, parse, read_bytes
from memlint.static.summaries import (
    BACKWARD, MODULE_CODE, PINS_ONE_GPU, SAVES_CPU_STATE, SAVES_CPU_WEIGHTS, SAVES_DEVICE_STATE, SAVES_DEVICE_WEIGHTS,
    SAVES_MODULE_STATE, ModuleSummary,
)

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
PROJECT_MARKER_SET = frozenset(PROJECT_MARKERS)
# A project with more Python files than this is not read whole (a question about all of its
# modules is then answered "unknown").
MAX_PROJECT_FILES = 20_000
# How long a listing of the project's files is trusted by a process that outlives a run.
FILE_LIST_SECONDS = 60.0
_MAX_DEPTH = 12  # re-exports and base-class chains followed at most this far


@dataclass(frozen=True)
class ModuleFile:
    name: str  # dotted module name
    path: str  # absolute path of the file
    is_package: bool  # an __init__.py


@dataclass(frozen=True)
class Definition:
    """What a qualified name is in the project: a class or a function of one of its modules."""

    module: ModuleFile
    outline: ModuleOutline
    name: str  # the name in that module
    kind: str  # "class" | "function"

    @property
    def qualified(self) -> str:
        return f"{self.module.name}.{self.name}" if self.module.name else self.name

    @property
    def key(self) -> str:
        """``module:name``: how summaries and pending calls name it."""
        return f"{self.module.name}:{self.name}"

    @property
    def class_outline(self) -> ClassOutline | None:
        return self.outline.classes.get(self.name) if self.kind == "class" else None

    @property
    def function_outline(self) -> FunctionOutline | None:
        return self.outline.functions.get(self.name) if self.kind == "function" else None


# What looks a module's names up by a computed name: a star import into such a module may hand any
# of them on.
_DYNAMIC_LOOKUP = re.compile(r"(?<![\w.])(?:getattr|globals|locals|eval|exec)\s*\(|__dict__|sys\.modules|import_module")


# Ways a module gets objects of classes it never imports: unpickling them.
_UNPICKLES = re.compile(r"\b(?:torch\.load|pickle|dill|joblib|cloudpickle)\b")


def _imports_module_named(text: str, stem: str) -> bool:
    """Does ``text`` hold an import statement naming a module ``stem`` (``from models.icarl import
    iCaRL``, ``from . import utils_rd``, ``from im2scene import gan2d, giraffe``, ``import utils_rd
    as u``), at any depth of the code (a factory's function-local import), not in a comment?"""
    stem = re.escape(stem)
    return re.search(rf"^[ \t]*(?:from[ \t]+[\w.]*\b{stem}\b|from[ \t]+[\w.]+[ \t]+import[ \t]+[\w., \t()\\\n]*\b{stem}\b"
                     rf"|import[ \t]+[\w., \t]*\b{stem}\b)", text, re.MULTILINE) is not None


def _code_without_strings(text: str, name: str) -> str | None:
    """``text`` with its comments and string literals blanked out, so that prose (``# load
    dataset``) does not count as naming ``name``; None when a string is ``name`` itself (a
    ``getattr(obj, "load")`` may reach it) or the text does not tokenize."""
    pieces = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING:
                if token.string.strip("rbuRBU").strip("\"'") == name:
                    return None
                pieces.append('""')
            elif token.type != tokenize.COMMENT:
                pieces.append(token.string)
            pieces.append(" ")
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return "".join(pieces)


def import_root(path: str) -> tuple[str, str, bool]:
    """The folder a file's module is imported from, its dotted module name, and whether it is
    a package's ``__init__.py``: ``/r/pkg/sub/m.py`` (with ``pkg/__init__.py`` and
    ``pkg/sub/__init__.py``) -> (``/r``, ``pkg.sub.m``, False). A repository's top folder (it
    holds ``.git`` or another project marker) is an import root even with an ``__init__.py``:
    its scripts run from there (``python train.py`` finds the ``utils.py`` beside it)."""
    path = os.path.abspath(path)
    folder, filename = os.path.split(path)
    stem = filename[:-3] if filename.endswith(".py") else filename.rsplit(".", 1)[0]
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")) and not (
            parts and any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS)):
        parent, name = os.path.split(folder)
        if not name.isidentifier() or parent == folder:
            break
        parts.append(name)
        folder = parent
    return folder, ".".join(reversed(parts)), is_package


def project_root(folder: str) -> str:
    """The nearest folder at or above ``folder`` holding a project marker, else ``folder``. A
    folder memlint never checks on the way (a virtualenv, ``site-packages``, a hidden or build
    folder) ends the search there: what lies in it is not the project above it."""
    current = folder
    while True:
        if any(os.path.exists(os.path.join(current, marker)) for marker in PROJECT_MARKERS):
            return current
        parent, name = os.path.split(current)
        if parent == current or skip_folder_name(name) or name == "site-packages":
            return folder
        current = parent


class Project:
    """The modules reachable from the files of one project, read lazily and remembered by
    content (an edited module is read again)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._search: list[str] = []  # import roots, most specific first
        self._looking: list[str] = []  # the roots of the modules being checked (see looking_from)
        self._files: dict[str, ModuleFile | None] = {}  # module name -> its file
        for candidate in (root, os.path.join(root, "src")):
            self.add_import_root(candidate)
        self._outlines: dict[str, tuple[str, ModuleOutline | None]] = {}  # path -> (digest, outline)
        # path -> (digest, summary, what it was computed from: {path: digest})
        self._summaries: dict[str, tuple[str, ModuleSummary | None, dict[str, str]]] = {}
        self._summarising: set[str] = set()
        # The reads being recorded (innermost last): each module whose outline or summary was
        # read, with the digest it was read at. See recording().
        self._logs: list[dict[str, str]] = []
        self._all_files: list[str] | None = None  # every .py under the root (see modules_mentioning)
        self._marker_folders: set[str] = set()  # the folders of that listing holding a project marker
        self._listed_at = 0.0  # time.monotonic() of that listing: files come and go in an editor
        self._too_large = False
        self._texts: dict[str, tuple[str | None, str | None]] = {}  # path -> (digest, text), for searches
        self._mentions: dict[tuple[str, bool], tuple] = {}  # modules_mentioning's answers
        self._launch_answer: tuple | None = None  # may_launch_ranks's answer, per file listing
        self._configuration_texts: list[tuple[str, str]] | None = None  # (path, text): see _configuration_mentions
        self._notebook_texts: list[str] | None = None  # see _notebooks_mention
        self._dead_packages: dict[str, dict[str, str]] = {}  # package folder -> reads when nobody imports it
        self._import_failures: dict[str, str | None] = {}  # path -> why importing it fails (see fails_at_import)
        # path -> (why its own imports fail, the modules importing it runs): see _import_facts
        self._import_fact_cache: dict[str, tuple[str | None, list[ModuleFile]]] = {}
        self._path_changed: bool | None = None  # see _puts_folders_on_the_path, per file listing

    def add_import_root(self, folder: str) -> None:
        folder = os.path.abspath(folder)
        if folder not in self._search and os.path.isdir(folder):
            # first, unless a module is being checked (looking_from): its own root stays first
            self._search.insert(1 if self._looking else 0, folder)
            self._files.clear()

    def add_every_import_root(self) -> None:
        """The import roots of every file of the project, whichever files are checked: a script
        that puts ``lib/`` on ``sys.path`` finds ``lib/models`` the same when it is checked alone
        (a pre-commit hook passing one file), with the whole project, or beside other files in
        one of several processes. Roots come in the order of the files (the last first)."""
        files = self._project_files()
        if files is None:
            return  # too large to list: roots come as its files are checked
        # import_root() of each folder, read from the listing (which folders hold an __init__.py)
        # rather than asked of the file system folder by folder
        packages = {os.path.dirname(path) for path in files if os.path.basename(path) == "__init__.py"}
        found: dict[str, str] = {}

        def root_of(folder: str) -> str:
            if folder not in found:
                parent, name = os.path.split(folder)
                if folder not in packages or not name.isidentifier() or parent == folder \
                        or folder in self._marker_folders:
                    found[folder] = folder
                else:
                    found[folder] = root_of(parent)
            return found[folder]

        roots = dict.fromkeys(root_of(os.path.dirname(path)) for path in files)
        for root in roots:
            self.add_import_root(root)

    # ----- what a result depends on -------------------------------------------------------------
    @contextmanager
    def recording(self) -> Iterator[dict[str, str]]:
        """Record the modules read inside the block (and what their summaries were computed
        from): ``{path: digest}``, what a check's result depends on besides its own file."""
        log: dict[str, str] = {}
        self._logs.append(log)
        try:
            yield log
        finally:
            self._logs.pop()

    def _note(self, reads: dict[str, str]) -> None:
        for log in self._logs:
            log.update(reads)

    # ----- files ------------------------------------------------------------------------------
    def module_file(self, name: str) -> ModuleFile | None:
        """The file of the module ``name`` in this project (``pkg.sub`` -> ``pkg/sub.py`` or
        ``pkg/sub/__init__.py``), or None: a third-party or missing module."""
        if name in self._files:
            return self._files[name]
        found = None
        relative = name.replace(".", os.sep)
        for folder in self._search:
            for candidate, is_package in ((os.path.join(folder, relative + ".py"), False),
                                          (os.path.join(folder, relative, "__init__.py"), True)):
                if os.path.isfile(candidate):
                    found = ModuleFile(name, candidate, is_package)
                    break
            if found is not None:
                break
        self._files[name] = found
        return found

    def file_of_path(self, path: str) -> ModuleFile:
        path = os.path.realpath(path)
        folder, name, is_package = import_root(path)
        self.add_import_root(folder)
        return ModuleFile(name, path, is_package)

    @contextmanager
    def looking_from(self, path: str) -> Iterator[None]:
        """Inside the block, imports are looked up first from the import root of ``path`` (the
        module being checked or summarised): a script's ``import model`` finds the ``model.py``
        beside it, as Python does, also when other folders of the project hold a ``model.py``."""
        folder = os.path.abspath(import_root(os.path.realpath(path))[0])
        self.add_import_root(folder)
        place = self._search.index(folder)
        if place:
            self._search.insert(0, self._search.pop(place))
            self._files.clear()
        self._looking.append(folder)
        try:
            yield
        finally:
            self._looking.pop()
            if place and folder in self._search:  # back where it was, after what was added meanwhile
                self._search.remove(folder)
                self._search.insert(min(place, len(self._search)), folder)
                self._files.clear()

    def outline(self, module: ModuleFile) -> ModuleOutline | None:
        digest = file_digest(module.path)
        if digest is None:
            return None
        known = self._outlines.get(module.path)
        if known is None or known[0] != digest:
            known = _load_outline(module, digest)
            if known is None:
                text = _text_of(module.path)
                known = (digest, outline_of(text, module.name, module.is_package) if text is not None else None)
                if known[1] is not None:
                    _store_entry(_outline_file(module, digest), known)
            self._outlines[module.path] = known
        if known[1] is not None:
            self._note({module.path: digest})
        return known[1]

    def summary(self, module: ModuleFile) -> ModuleSummary | None:
        """What the module's functions and classes do, computed once per content (and kept on
        disk when a summary cache is set: :func:`use_summary_cache`); None while it is being
        computed (a cycle of imports) or when it cannot be."""
        digest = file_digest(module.path)
        if digest is None or module.path in self._summarising:
            return None
        known = self._summaries.get(module.path)
        if known is None or known[0] != digest or not _still_valid(known[2]):
            known = _load_summary(module, digest)
            if known is None:
                known = self._compute_summary(module, digest)
            self._summaries[module.path] = known
        self._note({module.path: digest, **known[2]})
        return known[1]

    def _compute_summary(self, module: ModuleFile, digest: str) -> tuple[str, ModuleSummary | None, dict[str, str]]:
        text = _text_of(module.path)
        self._summarising.add(module.path)
        try:
            with self.recording() as reads, self.looking_from(module.path):
                summary = self._summarise(module, text) if text is not None else None
        finally:
            self._summarising.discard(module.path)
        reads.pop(module.path, None)
        entry = (digest, summary, reads)
        _store_summary(module, entry)
        return entry

    def _summarise(self, module: ModuleFile, text: str) -> ModuleSummary | None:
        try:
            tree = parse(text)
            checker = FileChecker(module.path, text, [], self)
            checker.run(tree)
            return checker.module_summary()
        except (UncheckableFile, RecursionError):
            return None
        except Exception:  # a bug in memlint: the module is unknown, the file being checked is not hurt
            return None

    def remember_summary(self, path: str, source: str, summary: ModuleSummary, reads: dict[str, str]) -> None:
        """The summary of a module just checked (its walk made it), when ``source`` is what is
        on disk: no second walk when another module asks for it."""
        digest = file_digest(path)
        if digest is None or digest != content_digest(source.encode("utf-8")):
            return  # an editor's unsaved text, or another encoding: other modules import the file
        module = self.file_of_path(path)
        entry = (digest, summary, {p: d for p, d in reads.items() if p != module.path})
        self._summaries[module.path] = entry
        _store_summary(module, entry)

    # ----- names ------------------------------------------------------------------------------
    def definition(self, qualified: str, _depth: int = 0) -> Definition | None:
        """The class or function a qualified name stands for in this project, following
        re-exports (``from .base import Model`` in a package's ``__init__``) and aliases."""
        if _depth > _MAX_DEPTH or not qualified:
            return None
        module_name, _, name = qualified.rpartition(".")
        if not name:
            return None
        module = self.module_file(module_name) if module_name else None
        if module is None:
            return None
        outline = self.outline(module)
        if outline is None:
            return None
        if name in outline.classes:
            return Definition(module, outline, name, "class")
        if name in outline.functions:
            return Definition(module, outline, name, "function")
        target = outline.imports.get(name) or outline.aliases.get(name)
        if target is not None and target != qualified:
            return self.definition(target, _depth + 1)
        for star in outline.star_imports:
            found = self.definition(f"{star}.{name}", _depth + 1)
            if found is not None:
                return found
        # ``pkg.sub`` may be a submodule: a module, not a definition.
        return None

    def is_module(self, qualified: str) -> bool:
        return self.module_file(qualified) is not None

    def ancestors(self, qualified: str) -> Iterator[str]:
        """The bases of a class, breadth first, through the project's own classes: each
        qualified name once, ending with the classes outside the project (``torch.nn.Module``,
        ``lightning.pytorch.LightningModule``) and with ``?`` for a base that names nothing
        known (a name neither imported nor defined)."""
        seen = {qualified}
        queue = [qualified]
        depth = 0
        while queue and depth <= _MAX_DEPTH:
            depth += 1
            next_queue = []
            for current in queue:
                definition = self.definition(current)
                outline = definition.class_outline if definition is not None else None
                if outline is None:
                    continue
                for base in outline.bases:
                    if base in seen:
                        continue
                    seen.add(base)
                    yield base
                    next_queue.append(base)
            queue = next_queue

    def without_parameters(self, qualified: str) -> bool:
        """Does an instance of the project's class ``qualified`` hold no parameter and no
        submodule (a running normaliser of buffers)? Its own methods make none, and each base is
        ``torch.nn.Module`` or such a class of the project. Called on data without a graph, it
        records none."""
        definition = self.definition(qualified)
        outline = definition.class_outline if definition is not None else None
        return outline is not None and outline.makes_no_parameters and self._bases_make_no_parameters(qualified)

    def _bases_make_no_parameters(self, qualified: str) -> bool:
        """Is each base of the class ``torch.nn.Module`` or a class of the project that makes no
        parameter of its own?"""
        for base in self.ancestors(qualified):
            if base in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                continue
            base_definition = self.definition(base)
            base_outline = base_definition.class_outline if base_definition is not None else None
            if base_outline is None or not base_outline.makes_no_parameters:
                return False
        return True

    def modules_passed_in(self, qualified: str) -> tuple[str, ...]:
        """The ``__init__`` parameters of the project's class ``qualified`` whose objects are the
        only modules an instance may hold (``FocalLoss(loss_fcn)`` stores ``loss_fcn`` and calls
        it; it makes nothing else that could hold a parameter, nor do its bases); empty if it may
        hold others, or none at all (see :meth:`without_parameters`)."""
        definition = self.definition(qualified)
        outline = definition.class_outline if definition is not None else None
        if outline is None or not outline.holds_only_passed_in or not self._bases_make_no_parameters(qualified):
            return ()
        return outline.holds_only_passed_in

    def function_summary(self, key: str):
        """The summary (a ``FunctionSummary``) of ``module:function`` or ``module:Class.method``
        (a method a class inherits from a base of the project included); None if unknown."""
        module_name, _, name = key.partition(":")
        module = self.module_file(module_name)
        summary = self.summary(module) if module is not None else None
        if summary is None:
            return None
        found = summary.functions.get(name)
        if found is None and "." in name:
            class_name, _, method = name.partition(".")
            owner = self.method_owner(f"{module_name}.{class_name}", method)
            if owner is not None and owner != key:
                return self.function_summary(owner)
        return found

    def function_outline(self, key: str) -> FunctionOutline | None:
        """The outline (decorators, parameters) of ``module:function`` / ``module:Class.method``."""
        module_name, _, name = key.partition(":")
        module = self.module_file(module_name)
        outline = self.outline(module) if module is not None else None
        if outline is None:
            return None
        class_name, _, method = name.partition(".")
        if method:
            owner = outline.classes.get(class_name)
            return owner.methods.get(method) if owner is not None else None
        return outline.functions.get(name)

    def method_owner(self, class_qualified: str, method: str) -> str | None:
        """``module:Class.method`` of the class (of the project) that defines ``method`` for
        ``class_qualified``: itself or the nearest base that does."""
        for qualified in (class_qualified, *self.ancestors(class_qualified)):
            definition = self.definition(qualified)
            outline = definition.class_outline if definition is not None else None
            if outline is not None and method in outline.methods:
                return f"{definition.key}.{method}"
        return None

    def has_effect(self, callee: str, effect: str, _seen: set[str] | None = None) -> bool | None:
        """Does calling ``callee`` (``module:name``, or a qualified name as imported) do
        ``effect`` (see :mod:`memlint.static.summaries`), itself or through what it calls?
        True, False, or None when some function of the project on the way cannot be read; a
        callee outside the project is False (its effects are not the project's to know)."""
        seen = set() if _seen is None else _seen
        if callee in seen or len(seen) > 200:
            return False
        seen.add(callee)
        if ":" not in callee:
            definition = self.definition(callee)
            if definition is None:
                return None if self._looks_first_party(callee) else False
            if definition.kind == "class":
                callee = f"{definition.key}.__init__"
                if self.method_owner(definition.qualified, "__init__") is None:
                    return False
            else:
                callee = definition.key
        function = self.function_summary(callee)
        if function is None:
            return None
        if effect in function.effects:
            return True
        unknown = False
        for inner in function.calls:
            found = self.has_effect(inner, effect, seen)
            if found:
                return True
            unknown |= found is None
        return None if unknown else False

    def methods_named(self, name: str, effect: str, here: str) -> tuple[int, bool] | None:
        """How many methods called ``name`` the other modules of the project define (``here``: the
        module asking), and whether each has ``effect`` in its summary; None when a module that
        may define one cannot be read."""
        modules = self.modules_mentioning(name)
        if modules is None:
            return None
        count, every = 0, True
        for module in modules:
            if module.name == here:
                continue
            summary = self.summary(module)
            if summary is None:
                return None
            for key, function in summary.functions.items():
                if key.rsplit(".", 1)[-1] == name and "." in key:
                    count += 1
                    every = every and effect in function.effects
        return count, every

    def some_forward_differentiates(self) -> bool | None:
        """Does the ``forward`` of some class of the project take gradients (``torch.autograd.grad``
        or a backward pass, itself or through what it calls: a network computing normals, an
        inner loop of meta-learning)? A module built by a factory nothing can read (a class named
        in a configuration) may be that one. None when a module cannot be read."""
        modules = {module.path: module for word in ("grad", "backward") for module in self.modules_mentioning(word) or ()}
        if self._project_files() is None:
            return None
        found: bool | None = False
        for module in modules.values():
            summary = self.summary(module)
            if summary is None:
                found = None
                continue
            for key in summary.functions:
                if key.endswith(".forward") and self.has_effect(f"{module.name}:{key}", BACKWARD):
                    return True
        return found

    def modules_mentioning(self, word: str, called: bool = False) -> list[ModuleFile] | None:
        """The modules of the project (under its root) whose text holds ``word`` as a whole
        word (``called``: followed by an opening parenthesis, not in a ``def``): who may call a
        function, found without parsing anything. None when the project is too large to read
        here (the answer is unknown)."""
        files = self._project_files()
        if files is None:
            return None
        key = (word, called)
        known = self._mentions.get(key)
        if known is not None and known[0] is files:  # the same listing: this run, or the last minute
            return list(known[1])
        escaped = re.escape(word)
        pattern = re.compile(rf"(?<!def )\b{escaped}\s*\(" if called else rf"\b{escaped}\b")
        found = []
        for path in files:
            text = self._cached_text(path)
            if text is not None and pattern.search(text):
                found.append(self.file_of_path(path))
        self._mentions[key] = (files, tuple(found))
        return found

    def _cached_text(self, path: str) -> str | None:
        digest = file_digest(path)
        known = self._texts.get(path)
        if known is None or known[0] != digest:
            known = self._texts[path] = (digest, _text_of(path) if digest is not None else None)
        return known[1]

    def only_called_without_grad(self, name: str, here: ModuleFile, local_sites: dict[str, list],
                                 _seen: frozenset[str] = frozenset(), owner: str = "",
                                 local_related: Callable[[str], bool] | None = None, plain: bool = False) -> bool:
        """Is every call of a function named ``name`` in the project made with grad off: under
        ``no_grad`` / ``inference_mode`` (a decorator, a ``with``, a ``@contextmanager`` that
        yields under one), or from a function that is itself only called so? ``local_sites``
        are the calls of the module being checked (``here``: its summary is being made).
        ``owner``: the qualified name of the class the function is a method of ("" for none):
        ``self.name()`` in a class unrelated to it does not call it (``local_related`` says so
        for the classes of ``here``). ``plain``: the function is a top-level function of ``here``,
        which ``obj.name(...)`` on anything but an imported module never calls (``model.forward(x)``
        is a method's call, not one of ``sampling.forward``). False when the project makes no such
        call (it is called from outside: unknown)."""
        if name in _seen:
            return True  # a cycle adds no call with grad on
        if len(_seen) > 8:
            return False
        seen = _seen | {name}
        if name == "__call__" and owner:
            instance_sites = self.instance_call_sites(owner, here, local_sites)
            if instance_sites is None:
                return False
            sites = instance_sites
        else:
            sites = [(site.mode, site.caller.name, site.inherited) for site in local_sites.get(name, ())
                     if (site.self_class is None or local_related is None or local_related(site.self_class))
                     and not (plain and site.by_attribute)]
            if any(mode.value == "on" and not inherited for mode, _, inherited in sites):
                return False  # called here with grad on, explicitly: no need to read further
            summaries = self._other_summaries(name, here, plain_function=not owner, reaching=bool(owner))
            if summaries is None or None in summaries:
                return False
            for summary in summaries:
                sites.extend((mode, caller, inherited) for mode, caller, inherited, self_class, by_attribute
                             in summary.call_sites.get(name, ())
                             if (not (owner and self_class) or related_classes(owner, self_class, self._ancestor_list))
                             and not (plain and by_attribute))
        if not sites:
            return False
        for mode, caller, inherited in sites:
            if mode.value == "off":
                continue
            if mode.value == "on" and inherited and caller != MODULE_CODE and self.only_called_without_grad(
                    caller, here, local_sites, seen):
                continue
            return False
        return True

    def instance_call_sites(self, owner: str, here: ModuleFile,
                            local_sites: dict[str, list]) -> list[tuple[object, str, bool]] | None:
        """The calls of the instances of the class ``owner`` (qualified) that run its ``__call__``,
        as (grad mode, calling function, inherited), when every module that names the class makes
        its instances only as locals it then only calls (``extractor = RLExtractor(path)`` ...
        ``extractor(article)``, see ``outline.instances_only_called``). None when some instance may
        reach other code, or none is made in the project (it is called from outside: unknown)."""
        name = owner.rsplit(".", 1)[-1]
        modules = self.modules_mentioning(name)
        if not modules:
            return None
        sites: list[tuple[object, str, bool]] = []
        made = False
        for module in modules:
            text = self._cached_text(module.path)
            instances = instances_only_called(text, name) if text is not None else None
            if instances is None:
                return None
            if not instances:
                continue
            made = True
            if module.path == here.path:
                table = {callee: [(site.mode, site.caller.name, site.inherited) for site in found]
                         for callee, found in local_sites.items()}
            else:
                summary = self.summary(module)
                if summary is None:
                    return None
                table = {callee: [(mode, caller, inherited) for mode, caller, inherited, *_ in found]
                         for callee, found in summary.call_sites.items()}
            for function, local, count in instances:
                calls = [site for site in table.get(local, ()) if site[1] == function]
                if len(calls) != count:
                    return None
                sites.extend(calls)
        return sites if made else None

    def _ancestor_list(self, qualified: str) -> list[str]:
        return list(self.ancestors(qualified))

    def _other_summaries(self, word: str, here: ModuleFile, plain_function: bool = False,
                         reaching: bool = False) -> "list[ModuleSummary | None] | None":
        """The summaries of the other modules of the project that call ``word`` (None for one that
        cannot be summarised); None when the project is too large to read here. ``plain_function``:
        ``word`` is a function of ``here`` (not a method), so a module that imports nothing from
        ``here`` (its ``evaluate()`` is its own, or another module's) cannot call it.
        ``reaching``: ``word`` is a method of a class of ``here``, so a module that cannot reach
        ``here`` through the project's imports (nor unpickle objects) makes no instance of it:
        its ``model.generate(...)`` is another class's."""
        modules = self.modules_mentioning(word, called=True)
        if modules is None:
            return None
        return [self.summary(module) for module in modules if module.path != here.path
                and (not plain_function or (self._may_import_from(module, here)
                                            and not self.defines_its_own(module, word)))
                and (not reaching or self._may_reach(module, here))]

    def defines_its_own(self, module: ModuleFile, name: str) -> bool:
        """Does ``module`` define a top-level function ``name`` of its own, not importing that
        name (a sibling script's ``def test()``): its calls by that name are its own function's."""
        outline = self.outline(module)
        return outline is not None and name in outline.functions and name not in outline.imports

    def _may_reach(self, module: ModuleFile, here: ModuleFile, _seen: frozenset[str] = frozenset()) -> bool:
        """Can ``module`` get hold of an object of a class ``here`` defines: it imports ``here``
        (see _may_import_from), or a module of the project that may, at any depth; or it loads
        pickled objects or looks names up at run time. True when something cannot be read."""
        if self._may_import_from(module, here) or len(_seen) > 40:
            return True
        text = self._cached_text(module.path)
        outline = self.outline(module)
        if text is None or outline is None or _UNPICKLES.search(text):
            return True
        seen = _seen | {module.path}
        for qualified in (*outline.imports.values(), *outline.star_imports):
            for candidate in (qualified, qualified.rpartition(".")[0]):
                source = self.module_file(candidate) if candidate else None
                if source is not None:
                    if source.path not in seen and self._may_reach(source, here, seen):
                        return True
                    break
        return False

    def _may_import_from(self, module: ModuleFile, here: ModuleFile, depth: int = 0) -> bool:
        """Can ``module`` reach names of ``here``: an import statement naming ``here``'s module (at
        any depth of the code, relative or absolute), or a star import of a module that may? True
        when its text cannot be read."""
        text = self._cached_text(module.path)
        if text is None or depth > 3:
            return True
        if _imports_module_named(text, here.name.rsplit(".", 1)[-1]) or _DYNAMIC_LOOKUP.search(text):
            return True
        outline = self.outline(module)
        if outline is None:
            return True
        for star in outline.star_imports:
            source = self.module_file(star)
            if source is None or source.path == module.path:
                continue  # a library's names, or itself
            if self._may_import_from(source, here, depth + 1):
                return True
        return False

    def _names_function(self, qualified: str, module_name: str, function: str) -> bool | None:
        """Does ``qualified`` (as another module imports it) name ``function`` of ``module_name``?
        None when it names nothing memlint can read."""
        if qualified.rsplit(".", 1)[-1] != function:
            return False
        definition = self.definition(qualified)
        if definition is None:
            return None
        return definition.module.name == module_name and definition.name == function

    def literal_calls_of(self, module_name: str, function: str, here: ModuleFile) -> list[dict["int | str", object]]:
        """The calls other modules of the project make, with grad on, of the function ``function``
        of module ``module_name``: the literal arguments of each (by position or keyword)."""
        found: list[dict["int | str", object]] = []
        for summary in self._other_summaries(function, here) or ():
            for qualified, calls in (summary.literal_calls if summary is not None else {}).items():
                if self._names_function(qualified, module_name, function):
                    found.extend(dict(call) for call in calls)
        return found

    def calls_with_grad_from_elsewhere(self, module_name: str, function: str, here: ModuleFile
                                       ) -> tuple[list[dict["int | str", object]], int] | None:
        """The calls the other modules of the project make of the top-level function ``function``
        of module ``module_name`` with grad on, each as its arguments by position or keyword
        (``Ellipsis`` for one that is no literal), and how many calls of it they make in any grad
        mode. None when some call may be out of view: a module names the function other than to
        import or call it (handing it on), or calls by its name do not all resolve to it."""
        summaries = self._other_summaries(function, here, plain_function=True)
        if summaries is None or None in summaries:
            return None
        for module in self.modules_mentioning(function) or ():
            if module.path != here.path:
                text = self._cached_text(module.path)
                if text is None or not only_called_by_name(text, function):
                    return None
        found: list[dict["int | str", object]] = []
        made = 0
        for summary in summaries:
            sites = summary.call_sites.get(function, ())
            with_grad = sum(1 for mode, *_ in sites if mode.value == "on")
            calls = [dict(call) for qualified, calls in summary.literal_calls.items()
                     if self._names_function(qualified, module_name, function) for call in calls]
            if len(calls) != with_grad:
                return None  # a call by that name that is another function's, or not read
            found.extend(calls)
            made += len(sites)
        return found, made

    def called_from_elsewhere(self, module_name: str, function: str, here: ModuleFile) -> bool | None:
        """Does another module of the project call the function ``function`` of module
        ``module_name`` (a call its summary records, through imports and re-exports)? None when
        that cannot be read (the project is too large, a summary is missing)."""
        summaries = self._other_summaries(function, here)
        if summaries is None or None in summaries:
            return None
        for summary in summaries:
            for other in summary.functions.values():
                for key in other.calls:
                    if ":" not in key and self._names_function(key, module_name, function) is not False:
                        return True  # ours, or one that cannot be told apart from ours ("mod:f": its own)
        return False

    def may_launch_ranks(self) -> bool:
        """Can some code of the project run as one process per GPU: does any module start a
        process group or hand that to something that does (``init_process_group``, DDP/FSDP, a
        launcher's ``LOCAL_RANK``/``RANK``, ``mp.spawn``, accelerate, a Lightning or Hugging Face
        ``Trainer``, DeepSpeed, Horovod...)? True when the project cannot be read whole. A helper
        that calls ``torch.distributed`` in a project where nothing launches ranks runs in one
        process."""
        files = self._project_files()
        if files is None:
            return True
        if self._launch_answer is not None and self._launch_answer[0] is files:
            return self._launch_answer[1]
        found = False
        for path in files:
            text = self._cached_text(path)
            if text is None or _LAUNCHES_RANKS.search(_COMMENT.sub("", text)):
                found = True  # (a comment that mentions LOCAL_RANK starts no process)
                break
        self._launch_answer = (files, found)
        return found

    def pins_one_gpu(self, here: str) -> bool:
        """Does a function of another module of the project set ``CUDA_VISIBLE_DEVICES`` to one
        computed device per process (``setup_dist()`` doing ``os.environ["CUDA_VISIBLE_DEVICES"] =
        str(rank % 8)``)? Then each process sees one GPU, and ``cuda:0`` in it is its own.
        ``here``: the path of the module being checked (its own functions are the caller's to read)."""
        modules = self.modules_mentioning("CUDA_VISIBLE_DEVICES")
        for module in modules or ():
            if module.path == here:
                continue
            summary = self.summary(module)
            if summary is not None and any(PINS_ONE_GPU in f.effects for f in summary.functions.values()):
                return True
        return False

    def saved_state(self, here: str, beside: bool = False) -> tuple[bool, bool, bool] | None:
        """Do the other modules of the project (``beside``: those in the folder of ``here``)
        ``torch.save`` state moved to the CPU, anything else, and of that a model's or an
        optimizer's own state (see SAVES_CPU_STATE, SAVES_DEVICE_STATE, SAVES_MODULE_STATE)? None
        when a module that may save cannot be read, or the project is too large to list. ``here``:
        the module being checked."""
        modules = self.modules_mentioning("save")
        if modules is None:
            return None
        cpu = device = module_state = False
        folder = os.path.dirname(os.path.realpath(here))
        for module in modules:
            if module.path == here or (beside and os.path.dirname(os.path.realpath(module.path)) != folder):
                continue
            summary = self.summary(module)
            if summary is None:
                text = self._cached_text(module.path)
                if text is not None and not _may_call_torch_save(text):
                    continue  # not summarised (a syntax error), but its text never reaches torch.save
                return None
            for function in summary.functions.values():
                cpu |= SAVES_CPU_STATE in function.effects
                device |= SAVES_DEVICE_STATE in function.effects
                module_state |= SAVES_MODULE_STATE in function.effects
        return cpu, device, module_state

    def saved_weights(self, here: str) -> tuple[bool, bool] | None:
        """Do the other modules of the project ``torch.save`` a model's weights moved to the CPU,
        and any left on the device (see SAVES_CPU_WEIGHTS, SAVES_DEVICE_WEIGHTS)? None when a
        module that may save cannot be read."""
        modules = self.modules_mentioning("save")
        if modules is None:
            return None
        cpu = device = False
        for module in modules:
            if module.path == here:
                continue
            summary = self.summary(module)
            if summary is None:
                text = self._cached_text(module.path)
                if text is not None and not _may_call_torch_save(text):
                    continue
                return None
            for function in summary.functions.values():
                cpu |= SAVES_CPU_WEIGHTS in function.effects
                device |= SAVES_DEVICE_WEIGHTS in function.effects
        return cpu, device

    def writes_no_device_tensor_to(self, file_name: str, here: str) -> bool | None:
        """Does every ``torch.save`` of the other modules of the project to a file of that name
        (``data_args.bin``) write no device tensor (see ModuleSummary.saved_files)? None when
        none writes one; False when one may write device tensors or cannot be read. ``here``: the
        module being checked (its own saves are the caller's to read)."""
        modules = self.modules_mentioning(file_name)
        if modules is None:
            return False
        written = None
        for module in modules:
            if module.path == here:
                continue
            summary = self.summary(module)
            if summary is None:
                return False
            if file_name in summary.saved_files:
                if not summary.saved_files[file_name]:
                    return False
                written = True
        return written

    def imported_only_by_name(self, module: ModuleFile, _seen: frozenset[str] = frozenset()) -> bool:
        """Is ``module`` imported by other modules of the project, each of which imports names
        from it by name (``from .networks import init_weights``; not ``import networks``, which
        leaves room for ``getattr(networks, name)``)? ``from networks import *`` counts as by name
        when the importer looks nothing up by name (no ``getattr``, ``globals()``...) and is itself
        imported by nobody or only by name: its code names what it uses. A module that no other
        module imports is a script, or an entry point users import: False."""
        stem = module.name.rsplit(".", 1)[-1]
        if not stem or module.name.endswith("__init__") or module.path.endswith("__init__.py") or len(_seen) > 4:
            return False
        importers = [other for other in (self.modules_mentioning(stem) or ()) if other.path != module.path]
        by_name = False
        for importer in importers:
            outline = self.outline(importer)
            if outline is None:
                return False
            if any(star.rsplit(".", 1)[-1] == stem for star in outline.star_imports):
                if not self._star_importer_names_what_it_uses(importer, _seen | {module.path}):
                    return False
                by_name = True
            for qualified in outline.imports.values():
                parts = qualified.split(".")
                if parts[-1] == stem:
                    return False  # the module itself: its attributes may be looked up by name
                if len(parts) >= 2 and parts[-2] == stem:
                    by_name = True
        return by_name

    def _star_importer_names_what_it_uses(self, importer: ModuleFile, seen: frozenset[str]) -> bool:
        """``from train import *`` in ``importer``: does every use of those names show as a name
        in the project's code (the importer looks nothing up by name, and nobody imports it as a
        module or with ``*`` in turn, unless that too is by name)?"""
        text = self._cached_text(importer.path)
        if text is None or _DYNAMIC_LOOKUP.search(text) or importer.path in seen:
            return False
        return self.imported_by_nobody(importer) or self.imported_only_by_name(importer, seen)

    def unpackaged(self) -> bool:
        """Is the project not packaged for others to install (no ``pyproject.toml``, ``setup.py``
        or ``setup.cfg`` at its root, and not an installed distribution: no ``*.dist-info`` beside
        its package, not under ``site-packages``)? Then its own scripts are the only code that runs it."""
        if any(os.path.exists(os.path.join(self.root, marker)) for marker in ("pyproject.toml", "setup.py", "setup.cfg")):
            return False
        if "site-packages" in self.root or "dist-packages" in self.root:
            return False  # an installed distribution: its users are elsewhere
        try:
            return not any(name.endswith((".dist-info", ".egg-info")) for name in os.listdir(self.root))
        except OSError:
            return False

    def imported_for_its_names(self, module: ModuleFile) -> bool:
        """Is ``module`` imported by other modules of a project that is not packaged for others
        to install (no ``pyproject.toml``, ``setup.py`` or ``setup.cfg`` at its root: a research
        repository's scripts are its only users), none of which looks names up with ``getattr``
        or pulls everything in with ``import *``? Then what it defines runs only where the project
        names it (``pt_utils.load_checkpoint``, see :meth:`named_elsewhere`)."""
        if not self.unpackaged():
            return False
        stem = module.name.rsplit(".", 1)[-1]
        if not stem or module.path.endswith("__init__.py"):
            return False
        importers = [other for other in (self.modules_mentioning(stem) or ()) if other.path != module.path]
        imported = False
        for importer in importers:
            outline = self.outline(importer)
            text = self._cached_text(importer.path)
            if outline is None or text is None or "getattr(" in text:
                return False
            if any(star.rsplit(".", 1)[-1] == stem for star in outline.star_imports):
                return False
            imported |= any(stem in qualified.split(".") for qualified in outline.imports.values())
        return imported

    def imported_by_nobody(self, module: ModuleFile) -> bool:
        """Does no other module of the project import ``module`` (by any form)? Unknown: False."""
        stem = module.name.rsplit(".", 1)[-1]
        mentioning = self.modules_mentioning(stem) if stem else None
        if mentioning is None:
            return False
        for importer in mentioning:
            if importer.path == module.path:
                continue
            outline = self.outline(importer)
            if outline is None:
                return False
            if any(star.rsplit(".", 1)[-1] == stem for star in outline.star_imports):
                return False
            if any(stem in qualified.split(".")[-2:] for qualified in outline.imports.values()):
                return False
            text = self._cached_text(importer.path)
            if text is None or re.search(rf"^\s*(from\s+[\w.]*\b{re.escape(stem)}\b|import\s+[\w., ]*\b{re.escape(stem)}\b)",
                                         text, re.MULTILINE):
                return False  # imported under a name another import rebinds (``Solver`` from one of four)
        return True

    def in_a_package_nobody_imports(self, module: ModuleFile) -> bool:
        """Is ``module`` inside a package folder of a repository not packaged for others (see
        :meth:`unpackaged`) and run through programs of its own outside the folder, that no module
        outside the folder imports, that holds no program itself (no ``__main__`` check, no command
        line parsed), and that no configuration file or notebook names? Code vendored into a
        research repository and no longer used (a copy of a library whose only imports are
        commented out): what it would do if it ran is not a finding. A repository that is only a
        package (a library whose packaging files are missing) has its users elsewhere: False.
        Unknown: False. A True answer reads every file of the project."""
        folder = os.path.dirname(os.path.realpath(module.path))
        root = os.path.realpath(self.root)
        if not os.path.exists(os.path.join(folder, "__init__.py")) or not self.unpackaged():
            return False
        # The package the module is in and every package around it, up to the top one: a
        # subpackage nothing outside it imports (``lib/models/dcn``) is as dead as a top package.
        levels = [folder]
        while os.path.dirname(folder) != folder and os.path.exists(os.path.join(os.path.dirname(folder), "__init__.py")):
            folder = os.path.dirname(folder)
            levels.append(folder)
        for level in levels:
            if level == root or not level.startswith(root + os.sep):
                return False
            known = self._dead_packages.get(level)
            if known is None:
                self._dead_packages[level] = {}
                known = self._dead_packages[level] = self._package_nobody_imports(level) or {}
            if known:
                self._note(known)
                return True
        return False

    def _package_nobody_imports(self, folder: str) -> dict[str, str] | None:
        """What the answer of :meth:`in_a_package_nobody_imports` read, when it is True."""
        name = os.path.basename(folder)
        files = self._project_files()
        mentioning = self.modules_mentioning(name)
        if files is None or mentioning is None or not name.isidentifier():
            return None
        inside = [path for path in files if path.startswith(folder + os.sep)]
        if any(os.path.basename(path) == "__main__.py" for path in inside):
            return None
        for path in inside:
            text = self._cached_text(path)
            if text is None or "__main__" in text or "argparse" in text or "sys.argv" in text:
                return None  # a program of its own (``python -m pkg.train``)
        for other in mentioning:
            if os.path.realpath(other.path).startswith(folder + os.sep):
                continue
            text = self._cached_text(other.path)
            if text is None or _imports_module_named(text, name) or _DYNAMIC_LOOKUP.search(text) \
                    or any(word in text for word in ("sys.path", "__import__", "importlib")):
                return None
        if self._configuration_mentions(name) or self._notebooks_mention(name):
            return None
        if not any(self._is_a_program(path) for path in files if not path.startswith(folder + os.sep)):
            return None  # a library: its users are outside the repository
        return self._every_file(files)

    def a_module_nobody_imports(self, module: ModuleFile) -> bool:
        """Is ``module`` a module of a package folder (an ``__init__.py`` beside it, or a folder below
        the root without one) of a repository
        not packaged for others and run through programs outside that package, itself no program,
        that no other module imports in any form, in a project that imports nothing by a computed
        name (``importlib``,
        ``__import__``), and that no configuration file or notebook names? Nothing can run what it
        defines: a leftover ``networks_other.py`` beside the networks the scripts import. Unknown:
        False. A True answer reads every file of the project."""
        stem = module.name.rsplit(".", 1)[-1]
        packaged = os.path.exists(os.path.join(os.path.dirname(module.path), "__init__.py"))
        if module.is_package or not stem.isidentifier() or stem == "__main__" or not self.unpackaged() \
                or not (packaged or self._in_a_subfolder(module.path)) \
                or self._runs_on_its_own(module.path):
            return False
        files = self._project_files()
        folder = os.path.dirname(os.path.realpath(module.path))
        while os.path.exists(os.path.join(os.path.dirname(folder), "__init__.py")):
            folder = os.path.dirname(folder)  # the top package
        if files is None or not any(self._is_a_program(path) for path in files
                                    if not os.path.realpath(path).startswith(folder + os.sep)):
            return False  # no program outside the package: a library, whose users are elsewhere
        if not self.imported_by_nobody(module):
            return False
        package = self._cached_text(os.path.join(os.path.dirname(module.path), "__init__.py")) if packaged else ""
        if package is None or any(word in package for word in ("__all__", "glob", "listdir", "pkgutil", "scandir")):
            return False  # ``from .train import *`` of a package whose __all__ lists every module in its folder
        for path in files:
            text = self._cached_text(path)
            if text is None or any(word in text for word in ("import_module", "__import__", "importlib", "runpy",
                                                             "load_source", "spec_from_file_location")):
                return False
        if self._configuration_mentions(stem) or self._notebooks_mention(stem):
            return False
        self._note(self._every_file(files))
        return True

    def fails_at_import(self, module: ModuleFile) -> str | None:
        """Why importing ``module`` as part of its package certainly fails, or None: a relative
        import at its top level (run unconditionally, not under ``try``/``if``) names a module
        its package folder does not hold in any form (``from ..utils.audio import load`` with no
        ``utils/audio.*`` and no ``audio`` bound by ``utils/__init__.py``), or a name the module
        it names never binds (a superset of what it binds is read: unknown for a module that
        star-imports or binds names dynamically); an absolute import of a name the project's one
        module of that name never binds, in a project that changes no import path (see
        :meth:`_absolute_import_fails`); or a package around it, or a module it so
        imports, fails in turn (a module reached through such imports that fails on its own:
        the same answer whichever module is asked first, cycles included). Stale research code:
        what it would do if it ran is not a finding. A module that runs as a program of its
        own, or one without a relative import of its own in a project that puts folders on the
        import path (it may be imported outside its package), is asked only about its own
        imports. Unknown: None. An answer that says it fails depends on every file."""
        if module.path in self._import_failures:
            return self._import_failures[module.path]
        seen = {module.path}
        queue = [module]
        why = None
        while queue and why is None:
            current = queue.pop(0)
            own, needed = self._import_facts(current)
            if own is not None:
                why = own if current.path == module.path else f"{current.name} cannot be imported: {own}"
                break
            for other in needed:
                if self._import_failures.get(other.path) is not None:
                    why = f"{other.name} cannot be imported: {self._import_failures[other.path]}"
                    break
                if other.path not in seen:
                    seen.add(other.path)
                    queue.append(other)
        if why is None:
            # nothing any of them reaches fails on its own: none of them fails
            self._import_failures.update(dict.fromkeys(seen))
            return None
        files = self._project_files()
        if files is None:
            return None
        self._note(self._every_file(files))
        self._import_failures[module.path] = why
        return why

    def _import_facts(self, module: ModuleFile) -> tuple[str | None, list[ModuleFile]]:
        """Why ``module``'s own top-level relative imports certainly fail (a missing module or
        name), and the modules importing it runs besides (what those imports name, the packages
        around it): see :meth:`fails_at_import`."""
        known = self._import_fact_cache.get(module.path)
        if known is not None:
            return known
        text = self._cached_text(module.path)
        tree = parsed_text(text) if text is not None else None
        own: str | None = None
        needed: list[ModuleFile] = []
        if tree is not None:
            relative = any(isinstance(statement, ast.ImportFrom) and statement.level for statement in tree.body)
            # A module of a package folder is imported through its package (whose __init__ then
            # runs) when it imports relative to it; one without may be imported on its own through
            # a folder put on sys.path (``sys.path.append("../inplace_abn")``, then ``from bn import``).
            if not self._runs_on_its_own(module.path) and (relative or not self._puts_folders_on_the_path()):
                parts = module.name.split(".")
                for end in range(1, len(parts)):
                    package = self.module_file(".".join(parts[:end]))
                    if package is not None and package.is_package and package.path != module.path:
                        needed.append(package)
            for statement in tree.body:
                if own is not None:
                    break
                if isinstance(statement, ast.ImportFrom) and statement.level:
                    own = self._relative_import_fails(module, statement, needed)
                elif isinstance(statement, ast.ImportFrom) and statement.module \
                        and not self._puts_folders_on_the_path():
                    own = self._absolute_import_fails(module, statement)
        self._import_fact_cache[module.path] = (own, needed)
        return own, needed

    def _relative_import_fails(self, module: ModuleFile, statement: ast.ImportFrom, needed: list[ModuleFile]) -> str | None:
        source = resolve_relative(module.name, module.is_package, statement.level, statement.module)
        if source is None:
            return None
        target = self.module_file(source)
        if target is None:
            return self._missing_module(source)
        if target.path != module.path:
            needed.append(target)
        return self._names_missing(source, target, statement, needed)

    def _names_missing(self, source: str, target: ModuleFile, statement: ast.ImportFrom,
                       needed: list[ModuleFile]) -> str | None:
        """Why ``from <source> import a, b`` fails (``target``, the file of ``source``, binds no
        ``b`` and has no submodule of that name), or None."""
        names = None
        for alias in statement.names:
            if alias.name == "*":
                continue
            submodule = self.module_file(f"{source}.{alias.name}")
            if submodule is not None:
                needed.append(submodule)
                continue
            if self._beside_as_other_file(target, alias.name):
                continue
            outline = self.outline(target)
            if outline is not None and (alias.name in outline.classes or alias.name in outline.functions
                                        or alias.name in outline.imports or alias.name in outline.aliases):
                continue
            if names is None:
                names = self._names_bound_by(target)
                if names is None:
                    return None  # what it binds is not known
            if alias.name not in names:
                return f"{source} defines no {alias.name}"
        return None

    def _absolute_import_fails(self, module: ModuleFile, statement: ast.ImportFrom) -> str | None:
        """``from util.utils import save_checkpoint`` at the top level of ``module``, where every
        place Python may find ``util`` (each import root of the project, and the module's own
        folder, the first when it runs as a script) gives the same file, and that file binds no
        ``save_checkpoint``: why importing ``module`` fails (a stale copy in a ``backup/``
        folder), else None. Only names a module's outline or its bindings can tell."""
        source = statement.module
        target = self.module_file(source)
        if target is None or target.path == module.path:
            return None  # not the project's (a library), or itself
        relative = source.replace(".", os.sep)
        found = set()
        for folder in [os.path.dirname(module.path), *self._search]:
            for candidate in (os.path.join(folder, relative + ".py"), os.path.join(folder, relative, "__init__.py")):
                if os.path.isfile(candidate):
                    found.add(os.path.realpath(candidate))
                    break
        if found != {os.path.realpath(target.path)}:
            return None  # found in more than one place: which one runs depends on the path
        return self._names_missing(source, target, statement, [])

    def _puts_folders_on_the_path(self) -> bool:
        """Does any file of the project change the import path (``sys.path``, ``PYTHONPATH``, a
        ``.pth`` file)? Unknown: True."""
        if self._path_changed is None:
            files = self._project_files()
            texts = (self._cached_text(path) for path in files or ())
            self._path_changed = files is None or any(
                text is None or "sys.path" in text or "PYTHONPATH" in text or "site.addsitedir" in text
                for text in texts) or self._configuration_mentions("PYTHONPATH")
        return self._path_changed

    def _missing_module(self, name: str) -> str | None:
        """For a module ``name`` the project has no file of: why it is certainly missing (its
        nearest enclosing package is one of the project's, whose folder holds nothing of that
        name and whose ``__init__`` binds nothing of that name), or None."""
        parts = name.split(".")
        for end in range(len(parts) - 1, 0, -1):
            package = self.module_file(".".join(parts[:end]))
            if package is None:
                continue
            if not package.is_package:
                return None
            head = parts[end]
            if self._beside_as_other_file(package, head, inside=True):
                return None
            names = self._names_bound_by(package)
            if names is None or head in names:
                return None
            return f"{'.'.join(parts[:end + 1])} does not exist"
        return None

    def _names_bound_by(self, module: ModuleFile) -> frozenset[str] | None:
        """Every name ``module``'s top level may bind (a superset), or None when that is not known:
        it star-imports, defines a module ``__getattr__`` or binds names dynamically."""
        text = self._cached_text(module.path)
        found = module_level_names(text, module.path) if text is not None else None
        if found is None or found[1] or "__getattr__" in found[0]:
            return None
        return found[0]

    def _beside_as_other_file(self, module: ModuleFile, name: str, inside: bool = False) -> bool:
        """Is there something named ``name`` (an extension built in place, ``name.pyx``, a folder,
        a file a build step writes) in the folder of ``module`` (``inside``: in the package
        folder ``module`` is the ``__init__`` of)? Anything of that name may be importable."""
        folder = os.path.dirname(module.path) if inside or module.is_package else None
        if folder is None:
            return False
        try:
            entries = os.listdir(folder)
        except OSError:
            return True
        if any(entry == name or entry.startswith(name + ".") for entry in entries):
            return True
        return any(name in (self._cached_text(path) or "") for path in self._build_scripts())

    def _build_scripts(self) -> list[str]:
        root = self.root
        return [path for path in (os.path.join(root, "setup.py"), os.path.join(root, "pyproject.toml"))
                if os.path.isfile(path)]

    def _in_a_subfolder(self, path: str) -> bool:
        """Is ``path`` in a folder below the project's root (a namespace folder without
        ``__init__.py``, ``core/utils_models.py``), not beside the scripts at the root?"""
        root = self.root
        folder = os.path.dirname(os.path.realpath(path))
        return root is not None and folder != os.path.realpath(root) and folder.startswith(os.path.realpath(root) + os.sep)

    def taken_from_elsewhere(self, name: str, module: ModuleFile) -> bool:
        """Can another module of the project reach ``name`` of ``module``? Not when every other
        module that imports ``module`` names what it takes (``from gin import Encoder``: no
        ``import gin``, no ``import *``, at any depth of its code), none takes ``name``, and no
        configuration file names it:
        ``gin.test`` is then reached only from ``gin`` itself, whatever other modules call their
        own ``test``. True when that cannot be read. A False answer reads every file of the project."""
        stem = module.name.rsplit(".", 1)[-1]
        files = self._project_files()
        mentioning = self.modules_mentioning(stem) if stem else None
        if files is None or mentioning is None or module.path.endswith("__init__.py"):
            return True
        for importer in mentioning:
            if importer.path == module.path:
                continue
            text = self._cached_text(importer.path)
            if text is None or imports_name_from(text, stem, name):
                return True
        if self._configuration_mentions(name) or self._notebooks_mention(name):
            return True
        self._note(self._every_file(files))
        return False

    def star_exports(self, name: str) -> tuple[frozenset[str], tuple[str, ...], bool] | None:
        """What ``from <name> import *`` may bring in from the project's module ``name``: the names
        its top level binds, the modules it star-imports in turn (as written) and whether it is a
        package. None for a module outside the project or one that binds names dynamically."""
        module = self.module_file(name)
        text = self._cached_text(module.path) if module is not None else None
        exported = module_level_names(text, module.path) if text is not None else None
        if exported is None:
            return None
        self._note({module.path: file_digest(module.path) or ""})
        return exported[0], exported[1], module.is_package

    def never_passed(self, class_name: str, parameter: str, index: int | None, attribute: str,
                     here: ModuleFile) -> bool:
        """In a repository not packaged for others, does every construction of the class
        ``class_name`` (of ``here``) leave its ``__init__`` parameter ``parameter`` (position
        ``index`` after ``self``) at its default, and does no other module assign ``.attribute``?
        Every mention of the class must be such a construction (see
        ``outline.constructions_leave``). A True answer reads every file of the project."""
        if not self.unpackaged():
            return False
        files = self._project_files()
        mentioning = self.modules_mentioning(class_name)
        assigning = self.modules_mentioning(attribute)
        if files is None or mentioning is None or assigning is None:
            return False
        for module in mentioning:
            text = self._cached_text(module.path)
            if text is None or not constructions_leave(text, class_name, parameter, index):
                return False
        store = re.compile(rf"\.{re.escape(attribute)}\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)")
        for module in assigning:
            text = self._cached_text(module.path)
            if module.path != here.path and (text is None or store.search(text) or "setattr(" in text):
                return False
        if self._configuration_mentions(parameter):
            return False  # a configuration file may construct it (``_target_`` with the parameter)
        self._note(self._every_file(files))
        return True

    def literals_passed(self, class_name: str, parameter: str, index: int | None, here: ModuleFile) -> list[object] | None:
        """In a repository not packaged for others, what every construction of the class
        ``class_name`` (of ``here``) passes its ``__init__`` parameter ``parameter`` (position
        ``index`` after ``self``): literals, or ``outline.PARAMETER_DEFAULT``; None when a mention
        of the class is no plain construction or passes anything else (see
        ``outline.construction_literals``), or a configuration file names the parameter. A
        list answer reads every file of the project."""
        if not self.unpackaged():
            return None
        files = self._project_files()
        mentioning = self.modules_mentioning(class_name)
        if files is None or mentioning is None:
            return None
        values: list[object] = []
        for module in mentioning:
            text = self._cached_text(module.path)
            found = construction_literals(text, class_name, parameter, index) if text is not None else None
            if found is None:
                return None
            values.extend(found)
        if self._configuration_mentions(parameter):
            return None  # a configuration file may construct it (``_target_`` with the parameter)
        self._note(self._every_file(files))
        return values

    def joined_to_the_project(self, module: ModuleFile) -> bool:
        """Does ``module`` import another module of the project, or another import it? Then it is a
        part of a repository that runs as a whole, not a snippet or a lone script."""
        outline = self.outline(module)
        if outline is None:
            return False
        for qualified in (*outline.imports.values(), *outline.star_imports):
            for candidate in (qualified, qualified.rsplit(".", 1)[0]):
                found = self.module_file(candidate)
                if found is not None and found.path != module.path:
                    return True
        return not self.imported_by_nobody(module)

    def subclassed_elsewhere(self, name: str, module: ModuleFile) -> bool:
        """Does a class of another module of the project name ``name`` among its bases (a
        subclass whose own ``__init__`` may make instances that run the methods it inherits)?
        True when that cannot be read."""
        mentioning = self.modules_mentioning(name)
        if mentioning is None:
            return True
        for other in mentioning:
            if other.path == module.path:
                continue
            outline = self.outline(other)
            if outline is None or any(base.rsplit(".", 1)[-1] == name
                                      for cls in outline.classes.values() for base in cls.bases):
                return True
        return False

    def _runs_on_its_own(self, path: str) -> bool:
        """May the module at ``path`` be run as a script: a program (see :meth:`_is_a_program`), a
        reader of ``sys.argv``, or top-level code that calls something as a statement or runs a
        loop, a ``with`` or a ``try`` (``main_timer.run()`` at the end of ``bin/grownet.py``)?"""
        text = self._cached_text(path)
        if text is None or self._is_a_program(path) or "sys.argv" in text:
            return True
        tree = parsed_text(text)
        if tree is None:
            return True
        # ``import warnings`` ... ``warnings.filterwarnings("ignore")``: setting a library up, not
        # running anything of the module's (``fire.Fire(main)`` hands it a function: it runs it)
        modules = {(alias.asname or alias.name).split(".", 1)[0] for statement in tree.body
                   if isinstance(statement, ast.Import) for alias in statement.names}
        defined = {statement.name for statement in tree.body
                   if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        return any(isinstance(statement, (ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith))
                   or isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
                   and not _sets_a_library_up(statement.value, modules, defined)
                   for statement in tree.body)

    def _every_file(self, files: list[str]) -> dict[str, str]:
        """What an answer that read the whole project depends on: every module, every
        configuration file read, and the project's file listing (a new file may change it)."""
        reads = {path: file_digest(path) or "" for path in files}
        reads.update((path, file_digest(path) or "") for path, _ in self._configuration_texts or ())
        reads[LISTING + self.root] = listing_digest(self.root)
        return reads

    def _is_a_program(self, path: str) -> bool:
        """Is the module at ``path`` a program (``if __name__ == "__main__":``, or it parses a
        command line)? A repository that holds programs is run through them."""
        text = self._cached_text(path)
        return text is not None and ("__main__" in text or "parse_args(" in text)

    def _notebooks_mention(self, word: str) -> bool:
        """Does a notebook (``.ipynb``) under the project root name ``word``?"""
        if self._notebook_texts is None:
            texts = []
            for folder, dirnames, filenames in os.walk(self.root):
                dirnames[:] = sorted(d for d in dirnames if not skip_folder_name(d))
                texts.extend(text for text in (_text_of(os.path.join(folder, filename)) for filename in filenames
                                               if filename.endswith(".ipynb")) if text is not None)
                if len(texts) > MAX_PROJECT_FILES:
                    break
            self._notebook_texts = texts
        pattern = re.compile(rf"\b{re.escape(word)}\b")
        return any(pattern.search(text) for text in self._notebook_texts)

    def named_elsewhere(self, name: str, module: ModuleFile) -> bool:
        """Does another module of the project (in its code or as a string of its own; not in a
        comment: ``# train_graph_completion(args)``), or a configuration file (YAML, JSON, TOML,
        INI, shell: ``_target_: pkg.models.Net``), name ``name``? True when that cannot be read. A
        False answer reads every file of the project: it is recorded as depending on all of them."""
        files = self._project_files()
        mentioning = self.modules_mentioning(name)
        if files is None or mentioning is None:
            return True
        for other in mentioning:
            if other.path == module.path:
                continue
            text = self._cached_text(other.path)
            code = _code_without_strings(text, name) if text is not None else None
            if code is None or re.search(rf"\b{re.escape(name)}\b", code):
                return True  # named in code (not only in a comment or prose), or as a string of its own
        if self._configuration_mentions(name):
            return True
        self._note(self._every_file(files))
        return False

    def reachable_by_name(self, name: str, module: ModuleFile) -> bool:
        """Can code of the project reach a method called ``name`` of a class of ``module``: a
        ``.name`` on something other than a module the file imports (``gan.load()``, ``self.load``;
        not ``torch.load``), any other mention of the word outside its ``def`` (a string for
        ``getattr``, a name handed on), or a configuration file naming it? True when a file
        cannot be read. A False answer reads every file of the project."""
        files = self._project_files()
        mentioning = self.modules_mentioning(name)
        if files is None or mentioning is None or self._configuration_mentions(name):
            return True
        escaped = re.escape(name)
        pattern = re.compile(rf"(?:\b(def|class)\s+|([\w\]\)]+)\s*\.\s*)?\b{escaped}\b")
        for other in mentioning:
            text = self._cached_text(other.path)
            outline = self.outline(other)
            code = _code_without_strings(text, name) if text is not None else None
            if code is None or outline is None:
                return True  # unreadable, or the name as a string of its own ("load": getattr)
            modules = {local for local, qualified in outline.imports.items()
                       if self.module_file(qualified) is None and not self.definition(qualified)}
            for match in pattern.finditer(code):
                if match.group(1):
                    continue  # its own definition (or another of that name)
                receiver = match.group(2)
                if receiver is None or receiver not in modules:
                    return True  # gan.load(...), self.load, "load", callbacks=[load]
        self._note(self._every_file(files))
        return False

    def _configuration_mentions(self, word: str) -> bool:
        """Does a configuration file of the project name ``word`` (``_target_:
        pkg.models.Net``, a registry in JSON)?"""
        if self._configuration_texts is None:
            texts = []
            for folder, dirnames, filenames in os.walk(self.root):
                dirnames[:] = sorted(d for d in dirnames if not skip_folder_name(d))
                for filename in filenames:
                    if filename.rsplit(".", 1)[-1].lower() in CONFIGURATION_SUFFIXES:
                        path = os.path.join(folder, filename)
                        text = _text_of(path)
                        if text is not None and len(text) < 1_000_000:
                            texts.append((path, text))
                if len(texts) > MAX_PROJECT_FILES:
                    break
            self._configuration_texts = texts
        pattern = re.compile(rf"\b{re.escape(word)}\b")
        return any(pattern.search(text) for _, text in self._configuration_texts)

    def modules_mentioning_in(self, module: ModuleFile, word: str) -> bool:
        text = _text_of(module.path)
        return text is not None and re.search(rf"\b{re.escape(word)}\b", text) is not None

    def forget_file_list(self) -> None:
        """List the project's files again when next asked (a run starts; files were added)."""
        self._all_files = None
        self._configuration_texts = None
        self._notebook_texts = None
        self._dead_packages.clear()
        self._import_failures.clear()
        self._import_fact_cache.clear()
        self._path_changed = None

    def _project_files(self) -> list[str] | None:
        if self._all_files is not None and time.monotonic() - self._listed_at > FILE_LIST_SECONDS:
            self._all_files = None  # a long-lived process (the language server): files come and go
        if self._all_files is None:
            self._listed_at = time.monotonic()
            self._too_large = False
            files: list[str] = []
            markers: set[str] = set()
            for folder, dirnames, filenames in os.walk(self.root):
                if not PROJECT_MARKER_SET.isdisjoint(filenames) or not PROJECT_MARKER_SET.isdisjoint(dirnames):
                    markers.add(folder)
                dirnames[:] = sorted(d for d in dirnames if not skip_folder_name(d))
                files.extend(os.path.join(folder, name) for name in sorted(filenames) if name.endswith(".py"))
                if len(files) > MAX_PROJECT_FILES:
                    self._too_large = True
                    break
            self._all_files = files
            self._marker_folders = markers
        return None if self._too_large else self._all_files

    def _looks_first_party(self, qualified: str) -> bool:
        """A name under a package of the project that names nothing memlint can read."""
        return self.module_file(qualified.split(".", 1)[0]) is not None

    def class_kinds(self, qualified: str) -> ClassKinds:
        """What a class of the project is, from its bases (see :mod:`memlint.static.frameworks`)."""
        kinds = PLAIN
        for base in self.ancestors(qualified):
            definition = self.definition(base)
            if definition is None:
                kinds = kinds.join(external_kinds(base))
            elif definition.kind != "class":
                kinds = kinds.join(ClassKinds(unknown_base=True))  # a class made by a function call
        return kinds


def _sets_a_library_up(call: ast.Call, modules: set[str], defined: set[str]) -> bool:
    """Is a top-level call one of an imported module's own functions (``warnings.filterwarnings``,
    ``torch.manual_seed``, ``sys.path.append``) that is handed none of the module's definitions?"""
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not (isinstance(root, ast.Name) and root.id in modules and isinstance(call.func, ast.Attribute)):
        return False
    return not any(isinstance(node, ast.Name) and node.id in defined for node in ast.walk(call))


_COMMENT = re.compile(r"#[^\n]*")
# Text that starts (or hands to something that starts) one process per GPU.
_LAUNCHES_RANKS = re.compile(
    r"init_process_group|init_distributed|initialize_distributed|DistributedDataParallel|FullyShardedDataParallel"
    r"|\bFSDP\b|LOCAL_RANK|\bRANK\b|WORLD_SIZE|SLURM_PROCID|OMPI_COMM|\.local_rank\b|\bspawn\s*\(|start_processes"
    r"|\bAccelerator\b|\bTrainer\b|\bFabric\b|[Dd]eep[Ss]peed|horovod|\bhvd\.|\bstrategy\s*=|\bidist\b"
    r"|submitit|torchrun|distributed\.launch|distributed\.run|mpi4py|\bray\b|colossalai|megatron")


def _text_of(path: str) -> str | None:
    try:
        return decode_source(read_bytes(path))
    except Exception:  # unreadable or undecodable: the module is unknown, never an error
        return None


def _may_call_torch_save(text: str) -> bool:
    """Can this module's text reach ``torch.save``: ``torch.save(``, through an alias of torch
    (``import torch as th``, ``th.save(``) or ``from torch import save``?"""
    aliases = {"torch"} | set(re.findall(r"\bimport\s+torch\s+as\s+(\w+)", text))
    if re.search(r"\bfrom\s+torch(?:\.serialization)?\s+import\b[^\n]*\bsave\b", text):
        return True
    return any(re.search(rf"\b{re.escape(alias)}\s*\.\s*(?:serialization\s*\.\s*)?save\s*\(", text)
               for alias in aliases)


def _still_valid(reads: dict[str, str]) -> bool:
    return all(file_digest(path) == digest for path, digest in reads.items())


# ----- summaries on disk ------------------------------------------------------------------------
def _summary_file(module: ModuleFile, digest: str) -> Path | None:
    """Where the summary of ``module`` at ``digest`` is kept: ``.memlint_cache/`` of the
    project's root, when the run uses the cache (see memlint.static.cache.use_summary_cache)."""
    folder = summary_folder(module.path)
    if folder is None:
        return None
    key = content_digest(f"{code_fingerprint()}\0{module.name}\0{module.is_package}\0{digest}".encode())
    return folder / key[:2] / key


def _outline_file(module: ModuleFile, digest: str) -> Path | None:
    """Where the outline of ``module`` at ``digest`` is kept, beside the summaries: an outline
    depends on the module's text alone, so a warm project reads it instead of parsing again."""
    folder = summary_folder(module.path)
    if folder is None:
        return None
    key = content_digest(f"{code_fingerprint()}\0outline\0{module.name}\0{module.is_package}\0{digest}".encode())
    return folder.parent / "outlines" / key[:2] / key


def _load_outline(module: ModuleFile, digest: str):
    entry = _load_entry(_outline_file(module, digest))
    if not (isinstance(entry, tuple) and len(entry) == 2 and entry[0] == digest and isinstance(entry[1], ModuleOutline)):
        return None
    return entry


def _load_summary(module: ModuleFile, digest: str):
    entry = _load_entry(_summary_file(module, digest))
    if not (isinstance(entry, tuple) and len(entry) == 3 and entry[0] == digest and _still_valid(entry[2])):
        return None
    return entry


def _load_entry(path: Path | None):
    """What ``_store_entry`` wrote at ``path``; None when there is nothing to read."""
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except Exception:  # missing, half-written or from another version: a miss
        return None


def _store_summary(module: ModuleFile, entry: tuple) -> None:
    _store_entry(_summary_file(module, entry[0]), entry)


def _store_entry(path: Path | None, entry: tuple) -> None:
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(entry, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except (OSError, pickle.PickleError, TypeError, AttributeError, RecursionError):
        pass  # a read-only checkout (or a value pickle cannot write): it stays in memory


_projects: dict[str, Project] = {}


def forget_file_lists() -> None:
    """Each project lists its files again when next asked: called as a run starts."""
    for project in _projects.values():
        project.forget_file_list()


def project_for(path: str) -> Project | None:
    """The project a file on disk belongs to (one per project root and process); None for a
    text that is no file (a snippet, an unsaved editor buffer)."""
    if not os.path.isfile(path):
        return None
    path = os.path.realpath(path)  # a package reached through a symlinked folder is still one package
    folder, _, _ = import_root(path)
    root = project_root(folder)
    project = _projects.get(root)
    if project is None:
        project = _projects[root] = Project(root)
        project.add_every_import_root()
    project.add_import_root(folder)
    return project
