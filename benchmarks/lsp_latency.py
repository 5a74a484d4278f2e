"""How long after an edit does ``memlint lsp`` publish the new diagnostics?

Starts the real server (``python -m memlint lsp --debounce 0``, so that only the check is
timed) and drives it over stdio as an editor does: opens a file of about 1,500 lines (by
default the shipped fixtures, concatenated; ``--file`` for another), then

- **statement edits**: a statement typed as a new line in a function body, then removed
  again (each one ``didChange``);
- **keystrokes**: ``total += loss.item()`` typed one character at a time into a loop body,
  most of the intermediate texts being syntax errors (ML901), then deleted;

and times each ``didChange`` until the ``publishDiagnostics`` of that version arrives (wall
clock, pipes and JSON included). Also times, in this process, the check itself with the
server's incremental re-parse and with a full parse, in CPU seconds (robust on a busy machine).

    python3 benchmarks/lsp_latency.py [--file PATH] [--edits 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import time
import tokenize
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def synthetic_module(lines: int = 1500) -> str:
    """The fixtures one after another, until the text has ``lines`` lines."""
    parts, count = [], 0
    for path in sorted((HERE.parent / "fixtures").glob("ML*.py")):
        text = path.read_text(encoding="utf-8")
        parts.append(text if text.endswith("\n") else text + "\n")
        count += text.count("\n")
        if count >= lines:
            break
    return "".join(parts)


class Client:
    """Just enough of an LSP client: JSON-RPC over the server's stdin and stdout."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(SRC))
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd, env=env)
        self.next_id = 0

    def send(self, message: dict) -> None:
        data = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.process.stdin.flush()

    def receive(self) -> dict:
        length = 0
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the server went away")
            if line == b"\r\n":
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.process.stdout.read(length))

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                return message
            self._answer(message)

    def _answer(self, message: dict) -> None:
        if "id" in message and "method" in message:  # a request from the server (registerCapability)
            self.send({"id": message["id"], "result": None})

    def diagnostics(self, uri: str, version: int) -> list:
        while True:
            message = self.receive()
            params = message.get("params") or {}
            if (message.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == uri
                    and params.get("version") == version):
                return params["diagnostics"]
            self._answer(message)


def statement_lines(text: str) -> list[int]:
    """0-based lines inside functions where a statement starts (a new one may go before it)."""
    lines = text.splitlines(keepends=True)
    starts, new = [], True
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NEWLINE:
            new = True
        elif token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            if new and token.start[1] >= 8:
                starts.append(token.start[0] - 1)
            new = False
    keywords = ("except", "else", "elif", "finally", "case", "@", "def ", "class ", "async ")
    return [i for i in starts if not lines[i].lstrip().startswith(keywords) and not lines[i - 1].lstrip().startswith("@")]


def percentiles(values: list[float]) -> str:
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    return f"median {statistics.median(values) * 1000:5.1f} ms, p90 {p90 * 1000:5.1f} ms, max {values[-1] * 1000:5.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, help="the file to edit (default: ~1,500 lines of fixtures)")
    parser.add_argument("--edits", type=int, default=40, help="statement edits (each typed and removed)")
    parser.add_argument("--keystrokes", type=int, default=3, help="lines typed a character at a time")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)

    text = args.file.read_text(encoding="utf-8") if args.file else synthetic_module()
    folder = Path(os.path.realpath(args.file.parent if args.file else HERE))
    path = (args.file.resolve() if args.file else folder / "lsp_latency_module.py")
    uri = path.as_uri()
    print(f"{path.name}: {text.count(chr(10))} lines")

    client = Client([sys.executable, "-m", "memlint", "lsp", "--debounce", "0"], folder)
    started = time.perf_counter()
    client.request("initialize", {"processId": os.getpid(), "rootUri": folder.as_uri(), "capabilities": {
        "general": {"positionEncodings": ["utf-16"]}}})
    client.send({"method": "initialized", "params": {}})
    version = 1
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": version, "text": text}}})
    first = client.diagnostics(uri, version)
    print(f"start-up and first check: {time.perf_counter() - started:.2f} s ({len(first)} diagnostics)")

    def edit(start: tuple[int, int], end: tuple[int, int], new: str, old_text: str) -> tuple[str, float, list]:
        """Replace the text between two (line, column) positions, as a didChange."""
        nonlocal version
        version += 1
        lines = old_text.splitlines(keepends=True)

        def offset(where: tuple[int, int]) -> int:
            return sum(len(x) for x in lines[:where[0]]) + where[1]

        updated = old_text[:offset(start)] + new + old_text[offset(end):]
        began = time.perf_counter()
        client.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": start[0], "character": start[1]},
                                          "end": {"line": end[0], "character": end[1]}}, "text": new}]}})
        diagnostics = client.diagnostics(uri, version)
        return updated, time.perf_counter() - began, diagnostics

    statement_times, texts = [], []
    for _ in range(args.edits):
        line = rng.choice(statement_lines(text))
        current = text.splitlines()[line]
        typed = current[:len(current) - len(current.lstrip())] + rng.choice(
            ["total += loss", "losses.append(loss)", "model.eval()", "x = model(batch)", "torch.cuda.empty_cache()"])
        text, seconds, _ = edit((line, 0), (line, 0), typed + "\n", text)  # a line typed (pasted)
        statement_times.append(seconds)
        texts.append(text)
        text, seconds, _ = edit((line, 0), (line + 1, 0), "", text)  # and deleted
        statement_times.append(seconds)
        texts.append(text)

    key_times, broken = [], 0
    for _ in range(args.keystrokes):
        line = rng.choice(statement_lines(text))
        current = text.splitlines()[line]
        indent = current[:len(current) - len(current.lstrip())]
        text, seconds, _ = edit((line, 0), (line, 0), indent + "\n", text)
        key_times.append(seconds)
        column = len(indent)
        for char in "total += loss.item()":
            text, seconds, diagnostics = edit((line, column), (line, column), char, text)
            column += 1
            key_times.append(seconds)
            broken += any(d["code"] == "ML901" for d in diagnostics)
        text, seconds, _ = edit((line, 0), (line + 1, 0), "", text)
        key_times.append(seconds)

    client.request("shutdown", {})
    client.send({"method": "exit"})
    client.process.wait(timeout=30)

    print(f"statement edits ({len(statement_times)} versions): {percentiles(statement_times)}")
    print(f"keystrokes ({len(key_times)} versions, {broken} with a syntax error): {percentiles(key_times)}")
    _in_process(str(path), texts)
    return 0


def _in_process(path: str, texts: list[str]) -> None:
    sys.path.insert(0, str(SRC))
    from memlint.catalogue import default_codes
    from memlint.static.reparse import IncrementalParser
    from memlint.static.file_check import check_contents

    codes = sorted(default_codes())
    parser = IncrementalParser()
    check_contents(path, texts[0], codes, (), parser)
    parser.prepare()
    incremental, full, how = [], [], {}
    for text in texts:
        began = time.process_time()
        check_contents(path, text, codes, (), parser)
        incremental.append(time.process_time() - began)
        how[parser.reparsed] = how.get(parser.reparsed, 0) + 1
        began = time.process_time()
        check_contents(path, text, codes)
        full.append(time.process_time() - began)
    print(f"in process, CPU time of a check: incremental re-parse {percentiles(incremental)} "
          f"({', '.join(f'{n} {kind}' for kind, n in sorted(how.items()))}); full parse {percentiles(full)}")


if __name__ == "__main__":
    sys.exit(main())
