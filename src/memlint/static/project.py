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

import os
from dataclasses import dataclass
from typing import Callable, Iterator

from memlint.static.frameworks import PLAIN, ClassKinds, external_kinds
from memlint.static.outline import ClassOutline, FunctionOutline, ModuleOutline, outline_of
from memlint.static.source import content_digest, decode_source, read_bytes

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
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
    def class_outline(self) -> ClassOutline | None:
        return self.outline.classes.get(self.name) if self.kind == "class" else None

    @property
    def function_outline(self) -> FunctionOutline | None:
        return self.outline.functions.get(self.name) if self.kind == "function" else None


def import_root(path: str) -> tuple[str, str, bool]:
    """The folder a file's module is imported from, its dotted module name, and whether it is
    a package's ``__init__.py``: ``/r/pkg/sub/m.py`` (with ``pkg/__init__.py`` and
    ``pkg/sub/__init__.py``) -> (``/r``, ``pkg.sub.m``, False)."""
    path = os.path.abspath(path)
    folder, filename = os.path.split(path)
    stem = filename[:-3] if filename.endswith(".py") else filename.rsplit(".", 1)[0]
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parent, name = os.path.split(folder)
        if not name.isidentifier() or parent == folder:
            break
        parts.append(name)
        folder = parent
    return folder, ".".join(reversed(parts)), is_package


def project_root(folder: str) -> str:
    """The nearest folder at or above ``folder`` holding a project marker, else ``folder``."""
    current = folder
    while True:
        if any(os.path.exists(os.path.join(current, marker)) for marker in PROJECT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return folder
        current = parent


class Project:
    """The modules reachable from the files of one project, read lazily and remembered by
    content (an edited module is read again)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._search: list[str] = []  # import roots, most specific first
        self._files: dict[str, ModuleFile | None] = {}  # module name -> its file
        for candidate in (root, os.path.join(root, "src")):
            self.add_import_root(candidate)
        # path -> ((mtime_ns, size), digest, outline)
        self._outlines: dict[str, tuple[tuple[int, int], str, ModuleOutline | None]] = {}
        # Set by memlint.static.summaries: computes a module's summary (the engine's walk).
        self.summarise: Callable[[ModuleFile, str], object] | None = None
        self._summaries: dict[str, tuple[str, object]] = {}  # path -> (digest, summary)
        self._summarising: set[str] = set()
        # Every module file whose outline or summary was read, with the digest it was read at:
        # what a result computed with this project depends on (see reads_since()).
        self.read_log: dict[str, str] = {}

    def add_import_root(self, folder: str) -> None:
        folder = os.path.abspath(folder)
        if folder not in self._search and os.path.isdir(folder):
            self._search.insert(0, folder)
            self._files.clear()

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
        folder, name, is_package = import_root(path)
        self.add_import_root(folder)
        return ModuleFile(name, os.path.abspath(path), is_package)

    def _read(self, module: ModuleFile) -> tuple[str, ModuleOutline | None, str | None]:
        """The module's digest and outline (remembered while its size and modification time
        stay the same), and its text when it had to be read now."""
        try:
            stat = os.stat(module.path)
        except OSError:
            return "", None, None
        key = (stat.st_mtime_ns, stat.st_size)
        known = self._outlines.get(module.path)
        if known is not None and known[0] == key:
            return known[1], known[2], None
        try:
            data = read_bytes(module.path)
            text = decode_source(data)
        except Exception:  # unreadable or undecodable: the module is unknown, never an error
            self._outlines[module.path] = (key, "", None)
            return "", None, None
        digest = content_digest(data)
        outline = outline_of(text, module.name, module.is_package)
        self._outlines[module.path] = (key, digest, outline)
        return digest, outline, text

    def outline(self, module: ModuleFile) -> ModuleOutline | None:
        digest, outline, _ = self._read(module)
        if outline is not None:
            self.read_log[module.path] = digest
        return outline

    def summary(self, module: ModuleFile):
        """What the module's functions and classes do (a ``ModuleSummary``), computed once per
        content; None while it is being computed (a cycle of imports) or when it cannot be."""
        if self.summarise is None or module.path in self._summarising:
            return None
        digest, outline, text = self._read(module)
        if outline is None:
            return None
        self.read_log[module.path] = digest
        known = self._summaries.get(module.path)
        if known is not None and known[0] == digest:
            return known[1]
        if text is None:
            try:
                text = decode_source(read_bytes(module.path))
            except Exception:
                return None
        self._summarising.add(module.path)
        try:
            summary = self.summarise(module, text)
        finally:
            self._summarising.discard(module.path)
        self._summaries[module.path] = (digest, summary)
        return summary

    def remember_summary(self, module: ModuleFile, data: bytes, summary: object) -> None:
        """The summary of a module just checked from ``data`` (its walk made it): no second
        walk when another module asks for it."""
        self._summaries[module.path] = (content_digest(data), summary)

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


_projects: dict[str, Project] = {}


def project_for(path: str) -> Project | None:
    """The project a file on disk belongs to (one per project root and process); None for a
    text that is no file (a snippet, an unsaved editor buffer)."""
    if not os.path.isfile(path):
        return None
    folder, _, _ = import_root(path)
    root = project_root(folder)
    project = _projects.get(root)
    if project is None:
        project = _projects[root] = Project(root)
    project.add_import_root(folder)
    return project
