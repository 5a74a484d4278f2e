"""Check files: read and decode, parse, run the engine, position and suppress findings,
and spread the work over processes.

Start-up matters (pre-commit runs ``memlint check`` on every commit): this module imports
neither libcst nor the rules at import time, so a run whose files are all in the cache
never imports them; they are imported when the first file has to be parsed.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Iterator, Mapping, Sequence

from memlint.config import Config, Configs
from memlint.findings import CheckResult, Finding
from memlint.static.discovery import NOTEBOOK_SUFFIX, discover, unchecked_finding

if TYPE_CHECKING:
    import libcst as cst

    from memlint.static.rule import Rule

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 16
# Files per unit of work sent to a worker: big enough to keep the per-task overhead small,
# small enough that the last ones finish together.
CHUNK_FILES = 8

_ALWAYS_KEPT = ("ML901", "ML902")


class UncheckableFile(Exception):
    """The file cannot be checked: reported as ML901 with this message."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def read_bytes(path: str) -> bytes:
    """The bytes of a regular file. Anything else is an OSError: opening a FIFO for reading
    would wait for a writer forever, and a device may never end."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
            raise OSError(0, f"not a regular file ({kind})")
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        return fh.read()


def decode_source(data: bytes) -> str:
    """Decode Python source bytes as the interpreter would (BOM, PEP 263 cookie, UTF-8)."""
    import tokenize

    if b"\x00" in data:
        raise UncheckableFile("binary file: not Python source (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(iter(data.splitlines(keepends=True)).__next__)
    except SyntaxError as exc:
        raise UncheckableFile(f"cannot decode: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        raise UncheckableFile(f"cannot decode as {encoding}: {reason}", line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


# CPython refuses brackets nested deeper than this ("too many nested parentheses"); libcst's
# native parser overflows its stack and kills the process at about 1,500.
MAX_BRACKET_DEPTH = 200
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")
_BRACKET_STEP = bytes.maketrans(b"([{)]}", b"\x01\x01\x01\xff\xff\xff")


def too_deeply_bracketed(source: str, limit: int = MAX_BRACKET_DEPTH) -> bool:
    """Are brackets nested deeper than ``limit`` (counting those in strings and comments
    too, so it may say yes for a valid file; never no for a too deep one)?"""
    if source.count("(") + source.count("[") + source.count("{") <= limit:
        return False  # nearly every file: three C-speed counts
    from array import array
    from itertools import accumulate

    steps = _NOT_BRACKETS.sub("", source).encode("ascii").translate(_BRACKET_STEP)
    return max(accumulate(array("b", steps)), default=0) > limit


# A line this long is generated code (a table, an unrolled expression). libcst takes time
# quadratic in the length of an operator chain (~20 s for ``a + a + ...`` of 5,000 terms,
# which CPython itself refuses as too deep), so Python's parser looks at such a file first.
LONG_LINE = 5000


def has_long_line(source: str) -> bool:
    return len(source) >= LONG_LINE and max(map(len, source.split("\n"))) >= LONG_LINE


def parse(source: str) -> "cst.Module":
    import libcst as cst

    if too_deeply_bracketed(source) or has_long_line(source):
        # Only Python's own parser can tell safely: libcst's would crash the process.
        python = _python_syntax_error(source, too_deep=True)
        if python is not None:
            raise python
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        python = _python_syntax_error(source)
        if python is not None:  # Python's own message and place are the better ones
            raise python from None
        message = str(exc.message).strip().splitlines()[0] if exc.message else "invalid syntax"
        raise UncheckableFile(f"cannot parse (libcst): {message}", exc.editor_line, exc.editor_column) from None
    except RecursionError:
        raise UncheckableFile("file is too deeply nested to parse") from None
    except MemoryError:
        raise UncheckableFile("file is too large to parse in memory") from None


def _python_parse(source: str):
    """``ast.parse`` without the SyntaxWarnings it prints for odd code (``1()``)."""
    import ast
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


def _python_syntax_error(source: str, too_deep: bool = False) -> UncheckableFile | None:
    """The syntax error Python itself reports for ``source`` (None if it parses). When
    Python's parser gives up (too deep, out of memory): None, or with ``too_deep`` an error
    saying so."""
    import ast

    try:
        _python_parse(source)
    except SyntaxError as exc:
        message = (exc.msg or "invalid syntax").strip().splitlines()[0]
        return UncheckableFile(f"syntax error: {message}", max(1, exc.lineno or 1), max(1, exc.offset or 1))
    except (RecursionError, MemoryError, ValueError):
        return UncheckableFile("file is too deeply nested to parse") if too_deep else None
    return None


class Positions(Mapping):
    """Positions of nodes (as libcst's ``PositionProvider`` gives them), computed for one
    statement at a time: only the statements that hold a reported node pay.

    Positions for a whole module cost about four parses; a file with one finding needs one
    statement's. A top-level statement is positioned in a module holding just it, and a
    statement in the body of a top-level class or function (a method of a 4,000-line test
    class) in a module holding just it in its class or function; either is then shifted to
    its first line, which Python's own parser gives. Any disagreement between the two
    falls back to positioning the whole module.
    """

    def __init__(self, module: "cst.Module", source: str) -> None:
        self.module = module
        self.source = source
        # id(node) -> (index of its top-level statement, index in that statement's body or -1)
        self._owner: dict[int, tuple[int, int]] = {}
        self._scanned = 0  # top-level statements indexed into _owner so far
        self._done: dict[tuple[int, int], Mapping] = {}  # -> positions (shifted)
        self._python: list | None = None  # per top-level statement: its ast statements
        self._full: Mapping | None = None

    # ----- Mapping -----------------------------------------------------------------------------
    def __getitem__(self, node: "cst.CSTNode"):
        if self._full is not None:
            return self._full[node]
        where = self._statement_of(node)
        if where is None:
            return self._whole()[node]
        positions = self._done.get(where)
        if positions is None:
            positions = self._position(*where)
            if positions is None and where[1] >= 0:
                where = (where[0], -1)  # the inner statement disagreed: try its top-level one
                positions = self._done.get(where) or self._position(*where)
            if positions is None:
                return self._whole()[node]
        return positions[node]

    def __contains__(self, node: object) -> bool:
        try:
            self[node]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())

    # ----- helpers -----------------------------------------------------------------------------
    def _whole(self) -> Mapping:
        if self._full is None:
            from libcst.metadata import MetadataWrapper, PositionProvider

            self._full = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._full

    def _statement_of(self, node: object) -> tuple[int, int] | None:
        """Where ``node`` is (indexing statements in order until it is found), or None (the
        module itself, or not in this module)."""
        import libcst as cst

        key = id(node)
        where = self._owner.get(key)
        if where is not None:
            return where
        body = self.module.body
        owner = self._owner
        node_base = cst.CSTNode
        while self._scanned < len(body):
            index = self._scanned
            self._scanned += 1
            statement = body[index]
            roots: list[tuple[object, tuple[int, int]]] = [(statement, (index, -1))]
            inner = _inner_body(statement)
            if inner is not None:
                roots += [(child, (index, j)) for j, child in enumerate(inner)]
            for root, here in reversed(roots):  # inner statements first: the outer walk skips them
                stack: list = [root]
                while stack:
                    current = stack.pop()
                    if id(current) in owner:
                        continue
                    owner[id(current)] = here
                    for name in _all_fields(type(current)):
                        value = getattr(current, name)
                        if isinstance(value, node_base):
                            stack.append(value)
                        elif type(value) is tuple or type(value) is list:
                            stack.extend(item for item in value if isinstance(item, node_base))
            if key in owner:
                return owner[key]
        return None

    def _python_statements(self) -> list | None:
        """For each top-level statement, the statements Python's parser sees in it."""
        if self._python is None:
            self._python = _match_statements(self.module.body, self.source) or []
        return self._python or None

    def _position(self, index: int, inner: int) -> Mapping | None:
        from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

        python = self._python_statements()
        if python is None:
            return None
        statement = self.module.body[index]
        mine = python[index]
        if inner >= 0:  # a statement in the body of a top-level class or function
            children = _inner_body(statement)
            matched = _match_list(children, mine[0].body) if children is not None and len(mine) == 1 else None
            if matched is None:
                return None
            target, mine = children[inner], matched[inner]
            block = statement.body
            statement = statement.with_changes(body=block.with_changes(body=(target,)))
        else:
            target = statement
        alone = self.module.with_changes(body=(statement,), header=(), footer=())
        positions = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        own = positions.get(target)
        first, last = mine[0].lineno, mine[-1].end_lineno or 0
        if own is None or own.end.line - own.start.line != last - first:
            return None
        shift = first - own.start.line
        if inner >= 0:  # keep only the nodes of the inner statement (the rebuilt outer ones are new)
            kept = {n: w for n, w in positions.items() if self._owner.get(id(n)) == (index, inner)}
        else:
            kept = dict(positions)
            kept.pop(alone, None)
        if shift:
            kept = {
                node: CodeRange(CodePosition(where.start.line + shift, where.start.column),
                                CodePosition(where.end.line + shift, where.end.column))
                for node, where in kept.items()
            }
        self._done[(index, inner)] = kept
        return kept


def _inner_body(statement: object) -> tuple | None:
    """The statements of a class's or function's indented body, else None."""
    import libcst as cst

    if isinstance(statement, (cst.ClassDef, cst.FunctionDef)) and isinstance(statement.body, cst.IndentedBlock):
        return tuple(statement.body.body)
    return None


def _match_list(statements: Sequence, python: list) -> list | None:
    """libcst statements matched with Python's (``a; b`` is one for libcst, two for ast)."""
    import libcst as cst

    out, i = [], 0
    for statement in statements:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        if count < 1 or i + count > len(python):
            return None
        out.append(python[i:i + count])
        i += count
    return out if i == len(python) else None


def _match_statements(statements: Sequence, source: str) -> list | None:
    try:
        tree = _python_parse(source)
    except Exception:  # libcst and CPython disagree about this file: position it whole
        return None
    return _match_list(statements, tree.body)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _all_fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        import dataclasses

        fields = _FIELDS[node_type] = tuple(f.name for f in dataclasses.fields(node_type))
    return fields


def check_source(
    source: str, path: str, rule_classes: Sequence[type["Rule"]], ignored: Sequence[str] = ()
) -> list[Finding]:
    """Findings of ``rule_classes`` on one source text (raises UncheckableFile)."""
    from memlint.static.engine import FileChecker, rules_for_source
    from memlint.static.suppress import UNUSED_CODE, apply_suppressions, parse_suppressions, unused_suppressions

    rules = [r for r in rules_for_source(source, rule_classes) if not r.code.startswith(tuple(ignored))]
    if not rules:
        return []
    if all(r.code == UNUSED_CODE for r in rules):  # only ML903 could report: comments suffice, no parse
        enabled = [r.code for r in rule_classes if not r.code.startswith(tuple(ignored))]
        return unused_suppressions(parse_suppressions(source), path, enabled)
    module = parse(source)
    checker = FileChecker(path, source, rules)
    try:
        reports = checker.run(module)
    except RecursionError:
        raise UncheckableFile("file is too deeply nested to check") from None
    failures = [
        Finding(path, 1, 1, 1, 1, "ML902", "internal-error", "error",
                f"internal error in rule {rule.code} ({rule.name}): {type(exc).__name__}: {exc}; "
                "the other rules still checked this file (please report it)")
        for rule, exc in checker.failures
    ]
    # ML903 (unused suppressions) is selected and this file has a suppression comment.
    report_unused = any(r.code == UNUSED_CODE for r in rules)
    if not reports:
        if report_unused:
            enabled = [r.code for r in rule_classes if not r.code.startswith(tuple(ignored))]
            return failures + unused_suppressions(parse_suppressions(source), path, enabled)
        return failures
    positions = Positions(module, source)
    located = []
    for rule, report in reports:
        where = positions[report.node]
        lines = {where.start.line, where.end.line}
        if report.statement is not None and report.statement in positions:
            statement = positions[report.statement]
            lines |= {statement.start.line, statement.end.line}
        located.append((rule, report, where, tuple(sorted(lines))))
    findings = []
    suppressions = parse_suppressions(source)
    for rule, report, where in apply_suppressions(located, source, suppressions):
        fix = None
        if report.fix is not None:
            from memlint.static.fixes import build_fix

            fix = build_fix(report.fix, module, positions, rule)
        findings.append(Finding(
            path=path, line=where.start.line, column=where.start.column + 1,
            end_line=where.end.line, end_column=where.end.column + 1,
            code=rule.code, name=rule.name, severity=report.severity or rule.severity,
            message=report.message, fix=fix,
        ))
    if report_unused:
        enabled = [r.code for r in rule_classes if not r.code.startswith(tuple(ignored))]
        findings.extend(unused_suppressions(suppressions, path, enabled))
    return sorted(set(findings) | set(failures), key=lambda f: f.sort_key)


def internal_error(path: str, exc: BaseException) -> Finding:
    return Finding(path, 1, 1, 1, 1, "ML902", "internal-error", "error",
                   f"internal error while checking this file: {type(exc).__name__}: {exc} "
                   "(please report it; other files were still checked)")


def check_file(path: str, rule_classes: Sequence[type["Rule"]], ignored: Sequence[str] = ()) -> list[Finding]:
    """Findings for one file; problems reading or parsing it become an ML901 finding."""
    try:
        data = read_bytes(path)
    except OSError as exc:
        return [unchecked_finding(path, f"cannot read: {exc.strerror or exc}")]
    except MemoryError:
        return [unchecked_finding(path, "cannot read: file too large")]
    try:
        if path.endswith(NOTEBOOK_SUFFIX):
            from memlint.static.notebook import check_notebook

            return check_notebook(data, path, rule_classes, ignored)
        source = decode_source(data)
        return check_source(source, path, rule_classes, ignored)
    except UncheckableFile as exc:
        return [unchecked_finding(path, exc.message, exc.line, exc.column)]
    except RecursionError:
        return [unchecked_finding(path, "file is too deeply nested to check")]
    except MemoryError:
        return [unchecked_finding(path, "file is too large to check in memory")]
    except Exception as exc:  # a bug in memlint must not stop the run
        return [internal_error(path, exc)]


def _check_chunk(args: tuple[list[str], tuple[str, ...], dict[str, tuple[str, ...]]]) -> list[list[Finding]]:
    import gc

    from memlint.static.rules import rules_by_code

    paths, codes, ignored_by_path = args
    rules = rules_by_code(codes)
    results = []
    # A parsed module is some 10,000 acyclic objects freed by reference counting, yet their
    # allocation alone sets off the cyclic collector again and again (~7% of a check).
    # Collect once per file instead; a file's own reference cycles wait only that long.
    enabled = gc.isenabled()
    for path in paths:
        gc.disable()
        try:
            results.append(check_file(path, rules, ignored_by_path.get(path, ())))
        finally:
            if enabled:
                gc.enable()
    return results


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _check_parallel(
    todo: list[str], codes_by_path: dict[str, tuple[str, ...]], ignored_by_path: dict[str, tuple[str, ...]],
    workers: int,
) -> dict[str, list[Finding]]:
    """Check ``todo`` on ``workers`` processes: biggest files first, in small chunks (of one
    rule selection each), so that the workers finish together. A worker that dies costs only
    its files, which are then checked here."""
    from concurrent.futures import ProcessPoolExecutor

    # Import libcst, the engine and the rules once, before the workers are forked.
    import memlint.static.engine  # noqa: F401
    from memlint.static.rules import rules_by_code

    for codes in set(codes_by_path.values()):
        rules_by_code(codes)
    chunks: list[list[str]] = []
    open_chunks: dict[tuple[str, ...], list[str]] = {}
    for path in sorted(todo, key=_size, reverse=True):
        chunk = open_chunks.get(codes_by_path[path])
        if chunk is None or len(chunk) >= CHUNK_FILES:
            chunk = open_chunks[codes_by_path[path]] = []
            chunks.append(chunk)
        chunk.append(path)
    results: dict[str, list[Finding]] = {}

    def job(chunk: list[str]) -> tuple:
        return chunk, codes_by_path[chunk[0]], {p: ignored_by_path[p] for p in chunk if p in ignored_by_path}

    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            futures = [(chunk, pool.submit(_check_chunk, job(chunk))) for chunk in chunks]
            for chunk, future in futures:
                try:
                    for path, findings in zip(chunk, future.result()):
                        results[path] = findings
                except Exception:  # a worker died (killed, out of memory): redo its files below
                    pass
    except Exception:
        pass
    for path in todo:
        if path not in results:
            results[path] = _check_chunk(([path], codes_by_path[path], ignored_by_path))[0]
    return results


def check_paths(
    paths: Sequence[str],
    config: Config | None = None,
    use_cache: bool = True,
    jobs: int = 0,
    force_exclude: bool = False,
    configs: Configs | None = None,
) -> CheckResult:
    """Check files and directories, each with the rules its configuration enables: ``config``
    for every file, else (``configs``, by default) the nearest ``[tool.memlint]`` above it."""
    from memlint.static.rules import all_codes, default_codes

    if configs is None:
        configs = Configs.single(config) if config is not None else Configs()
    files, problems = discover(paths, configs, force_exclude)
    known, defaults = all_codes(), default_codes()
    codes_of: dict[int, tuple[str, ...]] = {}
    codes_by_path: dict[str, tuple[str, ...]] = {}
    ignored_by_path: dict[str, tuple[str, ...]] = {}
    caches: dict[tuple[str, tuple[str, ...]], object] = {}  # one per config folder and rule selection
    cache_of: dict[str, object] = {}
    results: dict[str, list[Finding]] = {}
    todo = []
    for path in files:
        file_config = configs.for_path(path)
        codes = codes_of.get(id(file_config))
        if codes is None:
            codes = codes_of[id(file_config)] = tuple(sorted(file_config.enabled_codes(known, defaults)))
        codes_by_path[path] = codes
        if file_config.per_file_ignores:
            ignored_by_path[path] = tuple(file_config.ignored_for(path))
        cached = None
        if use_cache:
            from memlint.static.cache import Cache

            key = (str(file_config.root), codes)
            cache = caches.get(key)
            if cache is None:
                cache = caches[key] = Cache.for_run(codes, file_config)
            cache_of[path] = cache
            cached = cache.get(path, ignored_by_path.get(path, ()))
        if cached is not None:
            results[path] = cached
        else:
            todo.append(path)

    workers = jobs or os.cpu_count() or 1
    if todo:
        if workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
            results.update(_check_parallel(todo, codes_by_path, ignored_by_path, workers))
        else:
            for path in todo:
                results[path] = _check_chunk(([path], codes_by_path[path], ignored_by_path))[0]
    if use_cache:
        for path in todo:
            cache_of[path].put(path, ignored_by_path.get(path, ()), results[path])
        for cache in caches.values():
            cache.save()

    findings = list(problems)
    for path in files:
        codes = codes_by_path[path]
        findings.extend(f for f in results[path] if f.code in codes or f.code in _ALWAYS_KEPT)
    findings.sort(key=lambda f: f.sort_key)
    return CheckResult(findings=findings, files_checked=len(files))
