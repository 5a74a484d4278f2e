"""``memlint lsp``: a Language Server Protocol server over stdio (pygls), for diagnostics as
you type in any LSP editor.

- Diagnostics for Python files and Jupyter notebooks (LSP notebook documents: the code cells
  are checked together, as ``memlint check`` does) on open, on change (debounced) and on
  save, with each file's own ``[tool.memlint]`` (nearest pyproject.toml, ``exclude``,
  ``per-file-ignores``) and suppression comments, exactly as ``memlint check`` checks it:
  the same :func:`memlint.static.file_check.check_contents`, on the editor's text.
- Code actions: each fix (a safe one is the preferred quick fix; an unsafe one says so),
  "suppress on this line" (adds or extends a ``# noqa``), and ``source.fixAll.memlint``
  (every safe fix; unsafe ones too with ``--unsafe-fixes``).
- Hover on a finding, or on a code in a ``# noqa`` comment: the rule's page.

libcst and the rules stay imported, and an edit re-parses only the statements it touched
(:mod:`memlint.static.reparse`), so a 1,500-line file is checked again in a few tens of
milliseconds. A file that cannot be checked gets an ML901 diagnostic; an exception in a
handler is logged (stderr and the editor's log), never the end of the server.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import json
import logging
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from memlint.catalogue import RUNNER_CODES, UNUSED_SUPPRESSION, all_codes, default_codes, rule_page, rule_page_path
from memlint.config import Config, ConfigError, Configs
from memlint.findings import Edit, Finding, Fix
from memlint.static.discovery import NOTEBOOK_SUFFIX, PYTHON_SUFFIXES, is_default_excluded
from memlint.static.fixing import fix_text
from memlint.static.noqa import noqa_edits
from memlint.static.notebook import blank_magics
from memlint.static.reparse import IncrementalParser
from memlint.static.rules import rules_by_code
from memlint.static.file_check import check_contents
from memlint.static.text_edits import apply_edits, split_lines
from memlint.version import __version__

logger = logging.getLogger("memlint.lsp")

DEFAULT_DEBOUNCE_MS = 50
IDLE_COLLECTION_SECONDS = 2.0
FIX_ALL_KIND = "source.fixAll.memlint"
SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
WARM_UP = "import torch\n\ndef f(model, loader):\n    total = 0\n    for x in loader:\n        total += model(x)\n"
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_NOQA_CODES = re.compile(r"#\s*(?:noqa:|memlint:\s*disable(?:-file)?=)\s*([A-Za-z0-9,\s]+)", re.IGNORECASE)


@dataclass
class Options:
    """What ``memlint lsp`` was started with."""

    config_path: Path | None = None  # --config: one configuration for every file
    unsafe_fixes: bool = False  # fix-all applies unsafe fixes too
    debounce_ms: int = DEFAULT_DEBOUNCE_MS


# ----- text and positions ---------------------------------------------------------------------------------
class TextBuffer:
    """A document's text, with LSP positions: lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (not at
    form feeds, as ``str.splitlines`` would), columns counted in the negotiated encoding."""

    def __init__(self, text: str, version: int | None = None) -> None:
        self.text = text
        self.version = version
        self._lines: list[str] | None = None
        self._starts: list[int] | None = None

    @property
    def lines(self) -> list[str]:
        """The lines with their endings; a text ending with a newline has an empty last line."""
        if self._lines is None:
            lines = split_lines(self.text)
            if not lines or lines[-1].endswith(("\n", "\r")):
                lines.append("")
            self._lines = lines
        return self._lines

    def line(self, number: int) -> str:
        """The 0-based line ``number`` without its ending ("" past the end)."""
        lines = self.lines
        return lines[number].rstrip("\r\n") if 0 <= number < len(lines) else ""

    def offset(self, position: types.Position, encoding: str) -> int:
        lines = self.lines
        if self._starts is None:
            starts, total = [], 0
            for line in lines:
                starts.append(total)
                total += len(line)
            self._starts = starts
        if position.line >= len(lines):
            return len(self.text)
        return self._starts[position.line] + code_points(self.line(position.line), position.character, encoding)

    def apply(self, change: Any, encoding: str) -> None:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start = self.offset(change.range.start, encoding)
            end = self.offset(change.range.end, encoding)
            self.text = self.text[:start] + change.text + self.text[max(start, end):]
        else:
            self.text = change.text
        self._lines = self._starts = None

    def position(self, line: int, column: int, encoding: str) -> types.Position:
        """The LSP position of memlint's 1-based ``line`` and 1-based code point ``column``."""
        text = self.line(line - 1)
        return types.Position(line=max(0, line - 1), character=units(text[:max(0, column - 1)], encoding))

    def range_of(self, line: int, column: int, end_line: int, end_column: int, encoding: str) -> types.Range:
        return types.Range(start=self.position(line, column, encoding),
                           end=self.position(end_line, end_column, encoding))


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in the client's position units."""
    if text.isascii() or encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def code_points(line: str, character: int, encoding: str) -> int:
    """The code point index of the client's column ``character`` in ``line``."""
    if line.isascii() or encoding == types.PositionEncodingKind.Utf32:
        return max(0, min(character, len(line)))
    count = 0
    for index, char in enumerate(line):
        if count >= character:
            return index
        count += units(char, encoding)
    return len(line)


def path_of(uri: str) -> str | None:
    """The file system path of a ``file:`` URI, else None."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", path):
        path = path[1:]
    return os.path.normpath(path)


# ----- documents ------------------------------------------------------------------------------------------
@dataclass
class Checked:
    """The last check of a document: its findings and the diagnostics published for them."""

    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[types.Diagnostic] = field(default_factory=list)


@dataclass
class PythonDocument:
    uri: str
    language_id: str
    buffer: TextBuffer
    parser: IncrementalParser = field(default_factory=IncrementalParser)
    checked: Checked = field(default_factory=Checked)
    pending: asyncio.TimerHandle | None = None


@dataclass
class NotebookDocument:
    uri: str
    version: int
    cells: list[tuple[str, bool]]  # (cell document URI, is a code cell), in order
    parser: IncrementalParser = field(default_factory=IncrementalParser)
    checked: dict[str, Checked] = field(default_factory=dict)  # by cell URI
    pending: asyncio.TimerHandle | None = None


class _Protocol(LanguageServerProtocol):
    """pygls' protocol, except that memlint keeps the documents' text itself (pygls' copy
    splits lines at form feeds and would be kept for nothing)."""

    def _user(self, method: str, params: Any):
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params):
        yield from self._user(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params):
        yield from self._user(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params):
        yield from self._user(types.TEXT_DOCUMENT_DID_CLOSE, params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def lsp_notebook_document__did_open(self, params):
        yield from self._user(types.NOTEBOOK_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params):
        yield from self._user(types.NOTEBOOK_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def lsp_notebook_document__did_close(self, params):
        yield from self._user(types.NOTEBOOK_DOCUMENT_DID_CLOSE, params)


def _guarded(fallback: Any = None) -> Callable:
    """Run a handler; an exception is logged (stderr and the client's log) and ``fallback``
    answered, so that one bug never takes the server down."""

    def wrap(handler: Callable) -> Callable:
        @functools.wraps(handler)
        def run(*args: Any) -> Any:
            try:
                return handler(*args)
            except Exception as exc:
                server = getattr(handler, "__self__", None)
                message = (f"memlint: internal error in {handler.__name__}: {type(exc).__name__}: {exc} "
                           "(please report it)")
                logger.exception(message)
                if isinstance(server, MemlintServer):
                    server.log(message, types.MessageType.Error)
                return fallback

        return run

    return wrap


class MemlintServer(LanguageServer):
    def __init__(self, options: Options | None = None) -> None:
        super().__init__(
            "memlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(
                    cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook")],
                save=True),
            protocol_cls=_Protocol,
        )
        self.options = options or Options()
        if self.options.config_path is not None:  # before initialize moves to the project's root
            self.options.config_path = self.options.config_path.resolve()
        self.configs = Configs(self.options.config_path)
        self._config_stamps: dict[Path, float | None] = {}
        self._reported_config_errors: set[str] = set()
        self.documents: dict[str, PythonDocument] = {}
        self.notebooks: dict[str, NotebookDocument] = {}
        self.cell_owner: dict[str, str] = {}  # cell URI -> notebook URI
        self.cell_buffers: dict[str, TextBuffer] = {}
        self.cell_languages: dict[str, str] = {}
        self._idle_collection: asyncio.TimerHandle | None = None
        self._register()

    # ----- plumbing -------------------------------------------------------------------------------------
    def _register(self) -> None:
        on = self.feature
        on(types.INITIALIZE)(_guarded()(self.initialize))
        on(types.INITIALIZED)(_guarded()(self.initialized))
        on(types.SHUTDOWN)(_guarded()(self.shutting_down))
        on(types.TEXT_DOCUMENT_DID_OPEN)(_guarded()(self.did_open))
        on(types.TEXT_DOCUMENT_DID_CHANGE)(_guarded()(self.did_change))
        on(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))(_guarded()(self.did_save))
        on(types.TEXT_DOCUMENT_DID_CLOSE)(_guarded()(self.did_close))
        on(types.NOTEBOOK_DOCUMENT_DID_OPEN)(_guarded()(self.notebook_did_open))
        on(types.NOTEBOOK_DOCUMENT_DID_CHANGE)(_guarded()(self.notebook_did_change))
        on(types.NOTEBOOK_DOCUMENT_DID_SAVE)(_guarded()(self.notebook_did_save))
        on(types.NOTEBOOK_DOCUMENT_DID_CLOSE)(_guarded()(self.notebook_did_close))
        on(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(_guarded()(self.watched_files_changed))
        on(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]))(_guarded([])(self.code_actions))
        on(types.TEXT_DOCUMENT_HOVER)(_guarded()(self.hover))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors pygls meets outside memlint's handlers: logged, not shown as pop-ups."""
        logger.error("memlint: %s: %s", getattr(source, "__name__", source), error)

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # not connected (yet)
            pass

    @property
    def encoding(self) -> str:
        try:
            return str(self.workspace.position_encoding or types.PositionEncodingKind.Utf16)
        except RuntimeError:  # before initialize
            return types.PositionEncodingKind.Utf16

    # ----- lifecycle ------------------------------------------------------------------------------------
    def initialize(self, params: types.InitializeParams) -> None:
        # Files are checked as `memlint check` run from the project's root checks them: a file
        # with no [tool.memlint] above it gets the root's, folders like .venv are relative to it.
        root = None
        if params.workspace_folders:
            root = path_of(params.workspace_folders[0].uri)
        elif params.root_uri:
            root = path_of(params.root_uri)
        elif params.root_path:
            root = params.root_path
        if root and os.path.isdir(root):
            os.chdir(root)
            self.configs = Configs(self.options.config_path)

    def initialized(self, params: types.InitializedParams) -> None:
        # libcst's parser and every rule loaded now, not on the first keystroke
        codes = sorted(default_codes())
        rules_by_code(codes)
        check_contents("warm-up.py", WARM_UP, codes)
        gc.freeze()  # what is loaded now lives as long as the server: no collection needs to walk it
        gc.disable()  # collections run when the editor is idle (_collect_when_idle)
        watched = self.client_capabilities.workspace and self.client_capabilities.workspace.did_change_watched_files
        if watched and watched.dynamic_registration:
            self.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="memlint-pyproject", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml")]),
            )]))

    def shutting_down(self, params: Any) -> None:
        for document in [*self.documents.values(), *self.notebooks.values()]:
            if document.pending is not None:
                document.pending.cancel()

    def watched_files_changed(self, params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.endswith("pyproject.toml") for change in params.changes):
            self._reload_configuration()

    def _reload_configuration(self) -> None:
        self.configs = Configs(self.options.config_path)
        self._config_stamps.clear()
        self._reported_config_errors.clear()
        for uri in list(self.documents):
            self.check_now(uri)
        for uri in list(self.notebooks):
            self.check_notebook_now(uri)

    # ----- Python documents -----------------------------------------------------------------------------
    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        if item.uri in self.cell_owner:
            return
        path = path_of(item.uri) or ""
        if not (item.language_id == "python" or path.endswith(PYTHON_SUFFIXES)) or path.endswith(".pyi"):
            return
        self.documents[item.uri] = PythonDocument(item.uri, item.language_id, TextBuffer(item.text, item.version))
        self.check_now(item.uri)

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        document = self.documents.get(uri)
        if document is None:
            buffer = self.cell_buffers.get(uri)
            if buffer is not None:  # a client sending cell edits as text edits
                for change in params.content_changes:
                    buffer.apply(change, self.encoding)
                buffer.version = params.text_document.version
                self._schedule_notebook(self.cell_owner[uri])
            return
        for change in params.content_changes:
            document.buffer.apply(change, self.encoding)
        document.buffer.version = params.text_document.version
        if document.pending is not None:
            document.pending.cancel()
        document.pending = asyncio.get_running_loop().call_later(
            self.options.debounce_ms / 1000, _guarded()(self.check_now), uri)

    def did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri in self.documents:
            self.check_now(params.text_document.uri)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        document = self.documents.pop(params.text_document.uri, None)
        if document is not None:
            if document.pending is not None:
                document.pending.cancel()
            self.publish(params.text_document.uri, None, [])

    def check_now(self, uri: str) -> None:
        """Check a document's current text and publish its diagnostics."""
        document = self.documents.get(uri)
        if document is None:
            return
        if document.pending is not None:
            document.pending.cancel()
            document.pending = None
        buffer = document.buffer
        path = path_of(uri) or os.path.join(os.getcwd(), os.path.basename(urlparse(uri).path) or "untitled.py")
        findings = self._findings(path, buffer.text, document.parser)
        encoding = self.encoding
        diagnostics = [diagnostic(finding, buffer, encoding) for finding in findings]
        document.checked = Checked(findings, diagnostics)
        self.publish(uri, buffer.version, diagnostics)
        self._after_check(document.parser)

    def _after_check(self, parser: IncrementalParser) -> None:
        if parser.reparsed == "full":  # count the new tree's lines while the editor is idle
            try:
                asyncio.get_running_loop().call_soon(_guarded()(parser.prepare))
            except RuntimeError:
                pass

    def _findings(self, path: str, text: str, parser: IncrementalParser) -> list[Finding]:
        config = self._config_for(path)
        if config.is_excluded(path) or is_default_excluded(path):
            return []
        codes = tuple(sorted(config.enabled_codes(all_codes(), default_codes())))
        ignored = tuple(config.ignored_for(path)) if config.per_file_ignores else ()
        findings = check_contents(path, text, codes, ignored, parser)
        self._collect_when_idle()
        return [f for f in findings if f.code in codes or f.code in RUNNER_CODES]

    def _collect_when_idle(self) -> None:
        """The cyclic garbage collector runs only when no edit came for a while: a check
        allocates (and frees by reference counting) a great many objects, which would set it
        off in the middle of the next check, over the whole of the kept trees."""
        if self._idle_collection is not None:
            self._idle_collection.cancel()
        try:
            self._idle_collection = asyncio.get_running_loop().call_later(IDLE_COLLECTION_SECONDS, gc.collect)
        except RuntimeError:  # no loop (a check from outside the server's loop)
            self._idle_collection = None

    def _config_for(self, path: str) -> Config:
        """The file's configuration; a pyproject.toml changed on disk is read again. A broken
        one is shown once and the defaults are used meanwhile."""
        try:
            config = self.configs.for_path(path)
            if config.source is not None:
                stamp = _mtime(config.source)
                known = self._config_stamps.setdefault(config.source, stamp)
                if known != stamp:
                    self.configs = Configs(self.options.config_path)
                    self._config_stamps.clear()
                    config = self.configs.for_path(path)
                    if config.source is not None:
                        self._config_stamps[config.source] = _mtime(config.source)
            return config
        except ConfigError as exc:
            message = f"memlint: {exc}; checking with the default rules until it is fixed"
            if message not in self._reported_config_errors:
                self._reported_config_errors.add(message)
                logger.error(message)
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
            return Config()

    def publish(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics))

    # ----- notebooks ------------------------------------------------------------------------------------
    def notebook_did_open(self, params: types.DidOpenNotebookDocumentParams) -> None:
        notebook = params.notebook_document
        for item in params.cell_text_documents:
            self._open_cell(item, notebook.uri)
        self.notebooks[notebook.uri] = NotebookDocument(
            notebook.uri, notebook.version,
            [(cell.document, cell.kind == types.NotebookCellKind.Code) for cell in notebook.cells])
        self.check_notebook_now(notebook.uri)

    def _open_cell(self, item: types.TextDocumentItem, notebook_uri: str) -> None:
        self.cell_buffers[item.uri] = TextBuffer(item.text, item.version)
        self.cell_languages[item.uri] = item.language_id
        self.cell_owner[item.uri] = notebook_uri

    def _close_cell(self, uri: str) -> None:
        self.cell_buffers.pop(uri, None)
        self.cell_languages.pop(uri, None)
        self.cell_owner.pop(uri, None)
        self.publish(uri, None, [])

    def notebook_did_change(self, params: types.DidChangeNotebookDocumentParams) -> None:
        notebook = self.notebooks.get(params.notebook_document.uri)
        if notebook is None:
            return
        notebook.version = params.notebook_document.version
        cells = params.change.cells
        if cells is not None:
            if cells.structure is not None:
                array = cells.structure.array
                for item in cells.structure.did_open or ():
                    self._open_cell(item, notebook.uri)
                new = [(cell.document, cell.kind == types.NotebookCellKind.Code) for cell in array.cells or ()]
                notebook.cells[array.start:array.start + array.delete_count] = new
                for closed in cells.structure.did_close or ():
                    self._close_cell(closed.uri)
            for cell in cells.data or ():
                notebook.cells = [(uri, cell.kind == types.NotebookCellKind.Code) if uri == cell.document
                                  else (uri, code) for uri, code in notebook.cells]
            for content in cells.text_content or ():
                buffer = self.cell_buffers.get(content.document.uri)
                if buffer is None:
                    continue
                for change in content.changes:
                    buffer.apply(change, self.encoding)
                buffer.version = content.document.version
        self._schedule_notebook(notebook.uri)

    def _schedule_notebook(self, uri: str) -> None:
        notebook = self.notebooks.get(uri)
        if notebook is None:
            return
        if notebook.pending is not None:
            notebook.pending.cancel()
        notebook.pending = asyncio.get_running_loop().call_later(
            self.options.debounce_ms / 1000, _guarded()(self.check_notebook_now), uri)

    def notebook_did_save(self, params: types.DidSaveNotebookDocumentParams) -> None:
        self.check_notebook_now(params.notebook_document.uri)

    def notebook_did_close(self, params: types.DidCloseNotebookDocumentParams) -> None:
        notebook = self.notebooks.pop(params.notebook_document.uri, None)
        if notebook is not None and notebook.pending is not None:
            notebook.pending.cancel()
        for cell in params.cell_text_documents:
            self._close_cell(cell.uri)

    def check_notebook_now(self, uri: str) -> None:
        notebook = self.notebooks.get(uri)
        if notebook is None:
            return
        if notebook.pending is not None:
            notebook.pending.cancel()
            notebook.pending = None
        cells = []
        for cell_uri, is_code in notebook.cells:
            buffer = self.cell_buffers.get(cell_uri)
            python = is_code and buffer is not None and self.cell_languages.get(cell_uri, "python") == "python"
            cells.append({"cell_type": "code" if python else "markdown",
                          "source": buffer.text if python and buffer is not None else ""})
        document = {"cells": cells, "metadata": {"language_info": {"name": "python"}}}
        path = path_of(uri) or os.path.join(os.getcwd(), os.path.basename(urlparse(uri).path) or "untitled.ipynb")
        if not path.endswith(NOTEBOOK_SUFFIX):
            path += NOTEBOOK_SUFFIX
        findings = self._findings(path, json.dumps(document), notebook.parser)
        by_cell: dict[str, list[Finding]] = {cell_uri: [] for cell_uri, _ in notebook.cells}
        first_code = next((cell_uri for cell_uri, code in notebook.cells if code), None)
        for finding in findings:
            index = (finding.cell or 0) - 1
            cell_uri = notebook.cells[index][0] if 0 <= index < len(notebook.cells) else first_code
            if cell_uri is not None:
                by_cell[cell_uri].append(finding)
        encoding = self.encoding
        notebook.checked = {}
        for cell_uri, cell_findings in by_cell.items():
            buffer = self.cell_buffers.get(cell_uri) or TextBuffer("")
            diagnostics = [diagnostic(f, buffer, encoding) for f in cell_findings]
            notebook.checked[cell_uri] = Checked(cell_findings, diagnostics)
            self.publish(cell_uri, buffer.version, diagnostics)
        self._after_check(notebook.parser)

    # ----- what the requests read -----------------------------------------------------------------------
    def _current(self, uri: str) -> tuple[TextBuffer, Checked, bool] | None:
        """A document's buffer and its up-to-date check (a check still waiting for the
        debounce runs now), and whether it is a notebook cell."""
        document = self.documents.get(uri)
        if document is not None:
            if document.pending is not None:
                self.check_now(uri)
            return document.buffer, document.checked, False
        notebook_uri = self.cell_owner.get(uri)
        notebook = self.notebooks.get(notebook_uri) if notebook_uri else None
        if notebook is None:
            return None
        if notebook.pending is not None:
            self.check_notebook_now(notebook.uri)
        return self.cell_buffers[uri], notebook.checked.get(uri, Checked()), True

    # ----- code actions ---------------------------------------------------------------------------------
    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        current = self._current(params.text_document.uri)
        if current is None:
            return []
        buffer, checked, is_cell = current
        uri, encoding = params.text_document.uri, self.encoding
        only = params.context.only

        def wanted(kind: str) -> bool:
            return not only or any(kind == o or kind.startswith(o + ".") for o in only)

        actions: list[types.CodeAction] = []
        if wanted(types.CodeActionKind.QuickFix):
            selected = _range_lines(params.range)
            for finding, diag in zip(checked.findings, checked.diagnostics):
                if not _overlaps(diag.range, params.range, selected):
                    continue
                if finding.fix is not None and finding.fix.edits:
                    actions.append(types.CodeAction(
                        title=f"memlint ({finding.code}): {fix_title(finding.fix, buffer.text)}",
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diag], is_preferred=finding.fix.safe,
                        edit=self._workspace_edit(uri, buffer,
                                                  [_text_edit(e, buffer, encoding) for e in finding.fix.edits]),
                    ))
                if finding.code not in RUNNER_CODES and finding.code != UNUSED_SUPPRESSION:
                    code_view = blank_magics(buffer.text) if is_cell else None
                    edits, _ = noqa_edits(buffer.text, [finding], code=code_view)
                    if edits:
                        actions.append(types.CodeAction(
                            title=f"memlint ({finding.code}): Suppress on this line (# noqa)",
                            kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                            edit=self._workspace_edit(uri, buffer, [_text_edit(e, buffer, encoding) for e in edits]),
                        ))
        if wanted(FIX_ALL_KIND):
            fixed = self._fix_all(uri, buffer, checked, is_cell)
            if fixed is not None and fixed != buffer.text:
                title = ("Fix all problems (unsafe fixes included)" if self.options.unsafe_fixes
                         else "Fix all safe problems")
                actions.append(types.CodeAction(
                    title=f"memlint: {title}", kind=FIX_ALL_KIND,
                    edit=self._workspace_edit(uri, buffer, [whole_text_edit(buffer, fixed, encoding)]),
                ))
        return actions

    def _fix_all(self, uri: str, buffer: TextBuffer, checked: Checked, is_cell: bool) -> str | None:
        unsafe = self.options.unsafe_fixes
        eligible = [f for f in checked.findings if f.fix is not None and f.fix.edits and (f.fix.safe or unsafe)]
        if not eligible:
            return None
        if is_cell:  # one pass: the cell is checked in its notebook, not alone
            fixed, _ = apply_edits(buffer.text, [f.fix for f in eligible if f.fix is not None])
            return fixed
        path = path_of(uri) or os.path.join(os.getcwd(), "untitled.py")
        config = self._config_for(path)
        codes = tuple(sorted(config.enabled_codes(all_codes(), default_codes())))
        ignored = tuple(config.ignored_for(path)) if config.per_file_ignores else ()
        fixed, _, _ = fix_text(buffer.text, checked.findings, path, codes, ignored, unsafe)
        return fixed

    def _workspace_edit(self, uri: str, buffer: TextBuffer, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        workspace = self.client_capabilities.workspace
        edit_capabilities = workspace.workspace_edit if workspace else None
        if edit_capabilities is not None and edit_capabilities.document_changes:
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=buffer.version),
                edits=edits)])
        return types.WorkspaceEdit(changes={uri: edits})

    # ----- hover ----------------------------------------------------------------------------------------
    def hover(self, params: types.HoverParams) -> types.Hover | None:
        current = self._current(params.text_document.uri)
        if current is None:
            return None
        buffer, checked, _ = current
        position = params.position
        parts = []
        for finding, diag in zip(checked.findings, checked.diagnostics):
            if _contains(diag.range, position):
                page = _page(finding.code)
                what = f"**{finding.code}** ({finding.name}): {finding.message}"
                if finding.help:
                    what += f"\n\nhelp: {finding.help}"
                parts.append(what + (f"\n\n---\n\n{page}" if page else ""))
        if not parts:
            code = _code_in_suppression(buffer.line(position.line),
                                        code_points(buffer.line(position.line), position.character, self.encoding))
            if code is not None and _page(code):
                parts.append(_page(code) or "")
        if not parts:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value="\n\n---\n\n".join(parts)))


# ----- conversions ----------------------------------------------------------------------------------------
def diagnostic(finding: Finding, buffer: TextBuffer, encoding: str) -> types.Diagnostic:
    end_line, end_column = finding.end_line, finding.end_column
    if (end_line, end_column) <= (finding.line, finding.column):  # a point (ML901): show one character
        end_line, end_column = finding.line, finding.column + 1
    page = rule_page_path(finding.code)
    return types.Diagnostic(
        range=buffer.range_of(finding.line, finding.column, end_line, end_column, encoding),
        message=finding.message + (f"\nhelp: {finding.help}" if finding.help else ""),
        severity=SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=page.resolve().as_uri()) if page is not None else None,
        source="memlint",
        tags=[types.DiagnosticTag.Unnecessary] if finding.code == UNUSED_SUPPRESSION else None,
    )


def _text_edit(edit: Edit, buffer: TextBuffer, encoding: str) -> types.TextEdit:
    return types.TextEdit(range=buffer.range_of(edit.line, edit.column, edit.end_line, edit.end_column, encoding),
                          new_text=edit.content)


def whole_text_edit(buffer: TextBuffer, new: str, encoding: str) -> types.TextEdit:
    """One edit turning the buffer's text into ``new``: the changed middle only."""
    old = buffer.text
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    start_line, start_column = _line_column(old, start)
    end_line, end_column = _line_column(old, end_old)
    return types.TextEdit(range=buffer.range_of(start_line, start_column, end_line, end_column, encoding),
                          new_text=new[start:end_new])


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and code point column of ``offset`` in ``text``."""
    lines = split_lines(text[:offset])
    if not lines:
        return 1, 1
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return len(lines) + 1, 1
    return len(lines), len(last) + 1


def fix_title(fix: Fix, text: str) -> str:
    """What a fix does, in a few words: "Replace `loss` with `loss.item()`"."""
    unsafe = "" if fix.safe else " (unsafe)"
    if len(fix.edits) == 1:
        edit = fix.edits[0]
        lines = split_lines(text)
        if edit.line == edit.end_line and 0 < edit.line <= len(lines) and "\n" not in edit.content:
            old = lines[edit.line - 1][edit.column - 1:edit.end_column - 1]
            new = edit.content
            if len(old) <= 40 and len(new) <= 60:
                if not old:
                    return f"Insert `{new.strip()}`{unsafe}"
                if not new:
                    return f"Remove `{old}`{unsafe}"
                return f"Replace `{old}` with `{new}`{unsafe}"
    return f"Apply the fix{unsafe}"


def _range_lines(selection: types.Range) -> tuple[int, int]:
    return selection.start.line, selection.end.line


def _overlaps(a: types.Range, b: types.Range, b_lines: tuple[int, int]) -> bool:
    """Does a diagnostic's range meet the requested range? (A cursor on the line counts.)"""
    return a.start.line <= b_lines[1] and b_lines[0] <= a.end.line


def _contains(where: types.Range, position: types.Position) -> bool:
    start, end = where.start, where.end
    return (start.line, start.character) <= (position.line, position.character) <= (end.line, end.character)


def _page(code: str) -> str | None:
    page = rule_page(code)
    return _FRONT_MATTER.sub("", page, count=1).strip() if page else None


def _code_in_suppression(line: str, column: int) -> str | None:
    """The memlint code under ``column`` in a ``# noqa:`` or ``# memlint: disable=`` list."""
    for match in _NOQA_CODES.finditer(line):
        for code in re.finditer(r"[A-Za-z]+[0-9]+", match.group(1)):
            start, end = match.start(1) + code.start(), match.start(1) + code.end()
            if start <= column <= end and code.group().upper().startswith("ML"):
                return code.group().upper()
    return None


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def serve(options: Options, stdin=None, stdout=None) -> None:
    """Run the server on stdin/stdout until the client says exit (or goes away)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(message)s")
    out = stdout or sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the protocol stream
    MemlintServer(options).start_io(stdin or sys.stdin.buffer, out)

