"""Check files: read and decode, parse, run the engine, position and suppress findings,
and spread the work over processes."""

from __future__ import annotations

import os
import tokenize
from concurrent.futures import ProcessPoolExecutor
from typing import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from memlint.config import Config
from memlint.findings import CheckResult, Finding
from memlint.static.discovery import NOTEBOOK_SUFFIX, discover, unchecked_finding
from memlint.static.engine import FileChecker, rules_for_source
from memlint.static.rule import Rule
from memlint.static.suppress import apply_suppressions

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 16


class UncheckableFile(Exception):
    """The file cannot be checked: reported as ML901 with this message."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def decode_source(data: bytes) -> str:
    """Decode Python source bytes as the interpreter would (BOM, PEP 263 cookie, UTF-8)."""
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


def parse(source: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        message = str(exc.message).strip().splitlines()[0] if exc.message else "invalid syntax"
        raise UncheckableFile(f"syntax error: {message}", exc.raw_line, exc.raw_column + 1) from None
    except RecursionError:
        raise UncheckableFile("file is too deeply nested to parse") from None


def check_source(
    source: str, path: str, rule_classes: Sequence[type[Rule]], ignored: Sequence[str] = ()
) -> list[Finding]:
    """Findings of ``rule_classes`` on one source text (raises UncheckableFile)."""
    rules = [r for r in rules_for_source(source, rule_classes) if not r.code.startswith(tuple(ignored))]
    if not rules:
        return []
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
    if not reports:
        return failures
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    located = []
    for rule, report in reports:
        where = positions[report.node]
        lines = {where.start.line, where.end.line}
        if report.statement is not None and report.statement in positions:
            statement = positions[report.statement]
            lines |= {statement.start.line, statement.end.line}
        located.append((rule, report, where, tuple(sorted(lines))))
    findings = []
    for rule, report, where in apply_suppressions(located, source):
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
    return sorted(set(findings) | set(failures), key=lambda f: f.sort_key)


def check_file(path: str, rule_classes: Sequence[type[Rule]], ignored: Sequence[str] = ()) -> list[Finding]:
    """Findings for one file; problems reading or parsing it become an ML901 finding."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return [unchecked_finding(path, f"cannot read: {exc.strerror or exc}")]
    try:
        if path.endswith(NOTEBOOK_SUFFIX):
            from memlint.static.notebook import check_notebook

            return check_notebook(data, path, rule_classes, ignored)
        source = decode_source(data)
        return check_source(source, path, rule_classes, ignored)
    except UncheckableFile as exc:
        return [unchecked_finding(path, exc.message, exc.line, exc.column)]
    except Exception as exc:  # a bug in memlint must not stop the run
        return [Finding(path, 1, 1, 1, 1, "ML902", "internal-error", "error",
                        f"internal error while checking this file: {type(exc).__name__}: {exc} "
                        "(please report it; other files were still checked)")]


def _check_chunk(args: tuple[list[str], tuple[str, ...], dict[str, tuple[str, ...]]]) -> list[list[Finding]]:
    from memlint.static.rules import rules_by_code

    paths, codes, ignored_by_path = args
    rules = rules_by_code(codes)
    return [check_file(path, rules, ignored_by_path.get(path, ())) for path in paths]


def check_paths(
    paths: Sequence[str],
    config: Config | None = None,
    use_cache: bool = True,
    jobs: int = 0,
    force_exclude: bool = False,
) -> CheckResult:
    """Check files and directories with the rules the config enables."""
    from memlint.static.rules import all_codes, default_codes

    config = config or Config()
    codes = tuple(sorted(config.enabled_codes(all_codes(), default_codes())))
    files, problems = discover(paths, config, force_exclude)
    ignored_by_path = {path: tuple(config.ignored_for(path)) for path in files if config.per_file_ignores}

    cache = None
    if use_cache:
        from memlint.static.cache import Cache

        cache = Cache.for_run(codes, config)
    results: dict[str, list[Finding]] = {}
    todo = []
    for path in files:
        cached = cache.get(path, ignored_by_path.get(path, ())) if cache else None
        if cached is not None:
            results[path] = cached
        else:
            todo.append(path)

    workers = jobs or os.cpu_count() or 1
    if workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
        chunk = max(1, min(64, len(todo) // (workers * 4) or 1))
        chunks = [todo[i:i + chunk] for i in range(0, len(todo), chunk)]
        with ProcessPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            for paths_done, findings_list in zip(chunks, pool.map(_check_chunk, [(c, codes, ignored_by_path) for c in chunks])):
                for path, findings in zip(paths_done, findings_list):
                    results[path] = findings
    else:
        for path, findings in zip(todo, _check_chunk((todo, codes, ignored_by_path))):
            results[path] = findings
    if cache:
        for path in todo:
            cache.put(path, ignored_by_path.get(path, ()), results[path])
        cache.save()

    findings = list(problems)
    for path in files:
        findings.extend(f for f in results[path] if f.code in codes or f.code in ("ML901", "ML902"))
    findings.sort(key=lambda f: f.sort_key)
    return CheckResult(findings=findings, files_checked=len(files))
