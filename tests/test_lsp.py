"""``memlint lsp`` end to end: the real server in its own process, driven over stdio by a
language client (pytest-lsp) as an editor drives it: diagnostics on open, change and save
with the file's own configuration, code actions applied to the text, hover, notebooks,
broken files, and a clean shutdown."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pygls.protocol import default_converter

SERVER = [sys.executable, "-m", "memlint", "lsp"]
LOOP = textwrap.dedent("""\
    import torch


    def train(model, loader, opt, crit):
        total = 0
        for x, y in loader:
            loss = crit(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss
        return total
""")
LEAK_LINE = 10  # 0-based line of "total += loss"
CAPABILITIES = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
    workspace=types.WorkspaceClientCapabilities(
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
    ),
    text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        code_action=types.CodeActionClientCapabilities(code_action_literal_support=types.ClientCodeActionLiteralOptions(
            code_action_kind=types.ClientCodeActionKindOptions(value_set=[types.CodeActionKind.QuickFix]))),
    ),
    notebook_document=types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()),
)


def make_client() -> LanguageClient:
    """pytest-lsp's client, also keeping the version each diagnostics notification is for."""
    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, {method: handler for method, handler in DEFAULT_CLIENT_FEATURES.items()
                                   if method != types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS})
    client.published = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published[params.uri] = params

    client.register_capability = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        client.register_capability.extend(params.registrations)

    return client


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lsp-project")
    (root / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.memlint]
        exclude = ["generated"]

        [tool.memlint.per-file-ignores]
        "quiet/*" = ["ML101"]
    """))
    for folder in ("quiet", "generated", "nested"):
        (root / folder).mkdir()
    (root / "nested" / "pyproject.toml").write_text('[tool.memlint]\nignore = ["ML1"]\n')
    return root


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER, client_factory=make_client))
async def client(lsp_client: LanguageClient, project: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, root_uri=project.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")]))
    yield
    await lsp_client.shutdown_session()


async def published(client: LanguageClient, uri: str, version: int | None, timeout: float = 60) -> list:
    """The diagnostics the server publishes for ``uri`` at ``version``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        params = client.published.get(uri)
        if params is not None and params.version == version:
            return list(params.diagnostics)
        if loop.time() > deadline:
            raise AssertionError(f"no diagnostics for {uri} version {version}: last {params}")
        await asyncio.sleep(0.01)


def open_file(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    path.write_text(text)
    uri = path.as_uri()
    client.published.pop(uri, None)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return uri


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """What an editor does with a code action's edits (ASCII text, \\n lines)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def edits_of(action: types.CodeAction, uri: str, version: int) -> list[types.TextEdit]:
    (change,) = action.edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == version
    return list(change.edits)


def change(client: LanguageClient, uri: str, version: int, old: str, new: str) -> None:
    """Send the edit from ``old`` to ``new`` as an editor does: the changed range only."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1

    def position(offset: int) -> types.Position:
        before = old[:offset]
        return types.Position(line=before.count("\n"), character=offset - (before.rfind("\n") + 1))

    client.published.pop(uri, None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=position(start), end=position(end_old)), text=new[start:end_new])]))


@pytest.mark.asyncio(loop_scope="module")
async def test_open_fix_edit_and_suppress_like_an_editor(client: LanguageClient, project: Path):
    uri = open_file(client, project / "train.py", LOOP)
    (diagnostic,) = await published(client, uri, 1)
    assert diagnostic.code == "ML101" and diagnostic.source == "memlint"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range == types.Range(start=types.Position(line=LEAK_LINE, character=8),
                                           end=types.Position(line=LEAK_LINE, character=21))
    assert diagnostic.code_description.href.startswith("file://")
    assert diagnostic.code_description.href.endswith("/ML101.md")
    assert "'total' accumulates 'loss'" in diagnostic.message

    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=LEAK_LINE, character=10), end=types.Position(line=LEAK_LINE, character=10)),
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    titles = [action.title for action in actions]
    assert titles == ["memlint (ML101): Replace `loss` with `loss.item()` (unsafe)",
                      "memlint (ML101): Suppress on this line (# noqa)"]
    fix, suppress = actions
    assert fix.kind == types.CodeActionKind.QuickFix and not fix.is_preferred
    assert list(fix.diagnostics) == [diagnostic]

    fixed = apply_edits(LOOP, edits_of(fix, uri, 1))
    assert "total += loss.item()\n" in fixed
    change(client, uri, 2, LOOP, fixed)
    assert await published(client, uri, 2) == []

    # Typing the leak back, then suppressing it with the action.
    leaky = fixed.replace("total += loss.item()", "total += loss")
    change(client, uri, 3, fixed, leaky)
    (again,) = await published(client, uri, 3)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=again.range,
        context=types.CodeActionContext(diagnostics=[again], only=[types.CodeActionKind.QuickFix])))
    suppressed = apply_edits(leaky, edits_of(actions[1], uri, 3))
    assert "        total += loss  # noqa: ML101\n" in suppressed
    change(client, uri, 4, leaky, suppressed)
    assert await published(client, uri, 4) == []

    # Save re-checks, and closing clears the file's diagnostics.
    client.published.pop(uri, None)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert await published(client, uri, 4) == []
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert await published(client, uri, None) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_a_broken_file_is_ml901_and_the_server_carries_on(client: LanguageClient, project: Path):
    uri = open_file(client, project / "broken.py", LOOP)
    assert [d.code for d in await published(client, uri, 1)] == ["ML101"]
    broken = LOOP.replace("for x, y in loader:", "for x, y in loader")
    change(client, uri, 2, LOOP, broken)
    (syntax,) = await published(client, uri, 2)
    assert syntax.code == "ML901" and "syntax error" in syntax.message
    assert syntax.range.start.line == 5
    change(client, uri, 3, broken, LOOP)  # fixed again
    assert [d.code for d in await published(client, uri, 3)] == ["ML101"]
    for garbage in ("\x00\x01", "def f(:\n" * 300, "(" * 5000, "x = '''\n"):
        change(client, uri, 4, LOOP, garbage)
        assert [d.code for d in await published(client, uri, 4)] == ["ML901"]
        change(client, uri, 3, garbage, LOOP)
        assert [d.code for d in await published(client, uri, 3)] == ["ML101"]


@pytest.mark.asyncio(loop_scope="module")
async def test_each_file_gets_its_own_configuration(client: LanguageClient, project: Path):
    quiet = open_file(client, project / "quiet" / "train.py", LOOP)
    generated = open_file(client, project / "generated" / "train.py", LOOP)
    nested = open_file(client, project / "nested" / "train.py", LOOP)
    for uri in (quiet, generated, nested):
        assert await published(client, uri, 1) == []
    # The configuration changes on disk: the open files are checked again with it.
    (project / "nested" / "pyproject.toml").write_text("[tool.memlint]\n")
    client.published.pop(nested, None)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
        uri=(project / "nested" / "pyproject.toml").as_uri(), type=types.FileChangeType.Changed)]))
    assert [d.code for d in await published(client, nested, 1)] == ["ML101"]
    assert any(r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.register_capability)
    # A client that watches no files: the next check notices the changed file by itself.
    (project / "nested" / "pyproject.toml").write_text('[tool.memlint]\nignore = ["ML101"]\n')
    client.published.pop(nested, None)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=nested)))
    assert await published(client, nested, 1) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_a_broken_configuration_is_shown_once_and_the_defaults_used(client: LanguageClient, project: Path):
    (project / "broken").mkdir()
    (project / "broken" / "pyproject.toml").write_text("[tool.memlint]\nselect = [\"ML999\"]\n")
    uri = open_file(client, project / "broken" / "train.py", LOOP)
    assert [d.code for d in await published(client, uri, 1)] == ["ML101"]
    change(client, uri, 2, LOOP, LOOP + "\n")
    await published(client, uri, 2)
    shown = [m.message for m in client.messages if "ML999" in m.message]
    assert len(shown) == 1 and "unknown rule code 'ML999'" in shown[0] and "default rules" in shown[0]


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_shows_the_rule_page_on_a_finding_and_on_a_noqa_code(client: LanguageClient, project: Path):
    text = LOOP.replace("total = 0", "total = 0  # noqa: ML203")
    uri = open_file(client, project / "hover.py", text)
    await published(client, uri, 1)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=LEAK_LINE, character=12)))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value.startswith("**ML101** (graph-accumulation): 'total' accumulates")
    assert "## Why is this bad?" in hover.contents.value and "code: ML101" not in hover.contents.value
    on_noqa = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=4, character=24)))
    assert on_noqa.contents.value.startswith("# ML203 load-without-map-location")
    nothing = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=1)))
    assert nothing is None

    # A finding with a remedy: the diagnostic says it on its own line; the hover, before the page.
    hooks = "import torch\n\n\ndef train(model, loader):\n    for x in loader:\n        model.register_forward_hook(print)\n"
    uri = open_file(client, project / "hooks.py", hooks)
    (diagnostic,) = await published(client, uri, 1)
    message, remedy = diagnostic.message.split("\nhelp: ")
    assert diagnostic.code == "ML107" and "every iteration" in message and "handle.remove()" in remedy
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=5, character=12)))
    finding, page = hover.contents.value.split("\n\n---\n\n", 1)
    assert finding == f"**ML107** (hook-registered-in-loop): {message}\n\nhelp: {remedy}"
    assert page.startswith("# ML107")


@pytest.mark.asyncio(loop_scope="module")
async def test_positions_are_utf16_code_units(client: LanguageClient, project: Path):
    text = LOOP.replace("        total += loss\n", "        note = '🔥'; total += loss\n")
    uri = open_file(client, project / "emoji.py", text)
    (diagnostic,) = await published(client, uri, 1)
    # "note = '🔥'; " is 12 code points and 13 UTF-16 code units
    assert diagnostic.range.start == types.Position(line=LEAK_LINE, character=8 + 13)


@pytest.mark.asyncio(loop_scope="module")
async def test_notebook_cells_are_checked_together(client: LanguageClient, project: Path):
    notebook_uri = (project / "train.ipynb").as_uri()
    cells = [
        ("import torch\nmodel = torch.nn.Linear(4, 1)\nlosses = []\n", types.NotebookCellKind.Code),
        ("# Training\n", types.NotebookCellKind.Markup),
        ("%%time\nfor x in range(3):\n    loss = model(torch.randn(2, 4)).sum()\n    loss.backward()\n"
         "    losses.append(loss)\n", types.NotebookCellKind.Code),
    ]
    cell_uris = [f"vscode-notebook-cell:{project / 'train.ipynb'}#cell{i}" for i in range(len(cells))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=notebook_uri, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kind, document=cell_uri) for (_, kind), cell_uri in zip(cells, cell_uris)]),
        cell_text_documents=[types.TextDocumentItem(uri=cell_uri, language_id="python" if kind == 2 else "markdown",
                                                    version=1, text=text)
                             for (text, kind), cell_uri in zip(cells, cell_uris)]))
    (diagnostic,) = await published(client, cell_uris[2], 1)
    assert diagnostic.code == "ML101" and diagnostic.range.start == types.Position(line=4, character=4)
    assert await published(client, cell_uris[0], 1) == []

    client.published.pop(cell_uris[2], None)
    fixed = cells[2][0].replace("losses.append(loss)", "losses.append(loss.item())")
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=notebook_uri, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=cell_uris[2], version=2),
                changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)])]))))
    assert await published(client, cell_uris[2], 2) == []
    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=notebook_uri),
        cell_text_documents=[types.TextDocumentIdentifier(uri=cell_uri) for cell_uri in cell_uris]))


@pytest.mark.asyncio
async def test_fix_all_with_unsafe_fixes_and_a_clean_exit(tmp_path: Path):
    config = ClientServerConfig(server_command=[*SERVER, "--unsafe-fixes", "--debounce", "0"], client_factory=make_client)
    client = await config.start()
    try:
        await client.initialize_session(types.InitializeParams(capabilities=CAPABILITIES, root_uri=tmp_path.as_uri()))
        text = LOOP.replace("        total += loss\n", "        total += loss\n        history.append(loss)\n")
        uri = open_file(client, tmp_path / "train.py", text)
        assert [d.code for d in await published(client, uri, 1)] == ["ML101", "ML101"]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll])))
        (fix_all,) = actions
        assert fix_all.kind == "source.fixAll.memlint"
        assert fix_all.title == "memlint: Fix all problems (unsafe fixes included)"
        fixed = apply_edits(text, edits_of(fix_all, uri, 1))
        assert "total += loss.item()" in fixed and "history.append(loss.detach())" in fixed
        change(client, uri, 2, text, fixed)
        assert await published(client, uri, 2) == []
        await client.shutdown_session()
        assert client._server.returncode == 0
    finally:
        await client.stop()


def test_memlint_check_never_imports_pygls(tmp_path: Path):
    (tmp_path / "train.py").write_text(LOOP)
    code = ("import sys\nfrom memlint.cli import main\ntry:\n    main(['check', '--no-cache', sys.argv[1]])\n"
            "except SystemExit:\n    pass\nprint(sorted(m for m in ('pygls', 'lsprotocol', 'memlint.lsp') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "train.py")], capture_output=True, text=True,
                          timeout=120)
    assert "ML101" in done.stdout and done.stdout.strip().endswith("[]"), done.stdout + done.stderr


def test_lsp_command_help_names_its_options():
    done = subprocess.run([*SERVER, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    for option in ("--config", "--unsafe-fixes", "--debounce"):
        assert option in done.stdout


@pytest.mark.parametrize("encoding, character", [("utf-16", 13), ("utf-8", 15), ("utf-32", 12)])
def test_positions_in_each_encoding_and_lines_as_lsp_counts_them(encoding, character):
    from memlint.lsp import TextBuffer

    # A form feed does not end a line for LSP (str.splitlines would say it does).
    text = "a = 1\x0c\r\nnote = '🔥'; total\n"
    buffer = TextBuffer(text)
    assert buffer.position(2, 13, encoding) == types.Position(line=1, character=character)
    buffer.apply(types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=1, character=character),
                          end=types.Position(line=1, character=character + 5)), text="loss"), encoding)
    assert buffer.text == "a = 1\x0c\r\nnote = '🔥'; loss\n"
    assert buffer.line(0) == "a = 1\x0c" and buffer.line(2) == ""


def test_one_minimal_edit_for_fix_all():
    from memlint.lsp import TextBuffer, whole_text_edit

    buffer = TextBuffer("x = 1\ntotal += loss\ny = 2\n")
    edit = whole_text_edit(buffer, "x = 1\ntotal += loss.item()\ny = 2\n", "utf-16")
    assert edit.range == types.Range(start=types.Position(line=1, character=13), end=types.Position(line=1, character=13))
    assert edit.new_text == ".item()"


def test_an_exception_in_a_handler_is_logged_and_the_handler_answers_its_fallback(monkeypatch, caplog, tmp_path):
    from memlint.lsp import MemlintServer

    server = MemlintServer()
    monkeypatch.setattr(server, "log", lambda message, kind=None: None)  # no client connected here
    features = server.protocol.fm.features

    def broken(*args):
        raise RuntimeError("a bug")

    monkeypatch.setattr("memlint.lsp.check_contents", broken)
    uri = (tmp_path / "train.py").as_uri()
    opened = types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=LOOP))
    with caplog.at_level("ERROR", logger="memlint.lsp"):
        assert features[types.TEXT_DOCUMENT_DID_OPEN](opened) is None
    assert "internal error in did_open: RuntimeError: a bug" in caplog.text
    monkeypatch.setattr(server, "_current", broken)
    actions = features[types.TEXT_DOCUMENT_CODE_ACTION](types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[])))
    assert actions == []
