"""Check files and folders: find them, take what the cache knows, check the rest (on every
core when there are many), and gather the findings of a run.

Start-up matters (pre-commit runs ``memlint check`` on every commit): a run whose files are
all cached imports no checking machinery at all, and one none of whose files a rule could
match never imports libcst or a rule (see :mod:`memlint.static.source_check`).
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Sequence

from memlint.catalogue import RUNNER_CODES, all_codes, default_codes
from memlint.config import Config, Configs
from memlint.findings import CheckResult, Finding
from memlint.static.cache import Cache, take_dependencies, use_summary_cache
from memlint.static.discovery import discover

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 16
# Files per unit of work sent to a worker: big enough to keep the per-task overhead small,
# small enough that the last ones finish together.
CHUNK_FILES = 8


Checked = tuple[list[Finding], dict[str, str]]  # a file's findings, and the other modules they depend on


def _check_chunk(args: tuple[list[str], tuple[str, ...], dict[str, tuple[str, ...]]]) -> list[Checked]:
    # the checking machinery only for files the cache does not know: a warm run imports none of it
    from memlint.static.file_check import check_file

    paths, codes, ignored_by_path = args
    results = []
    # A parsed module is some 10,000 acyclic objects freed by reference counting, yet their
    # allocation alone sets off the cyclic collector again and again (~7% of a check).
    # Collect once per file instead; a file's own reference cycles wait only that long.
    enabled = gc.isenabled()
    for path in paths:
        gc.disable()
        try:
            results.append((check_file(path, codes, ignored_by_path.get(path, ())), take_dependencies(path)))
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
) -> dict[str, Checked]:
    """Check ``todo`` on ``workers`` processes: biggest files first, in small chunks (of one
    rule selection each), so that the workers finish together. A worker that dies costs only
    its files, which are then checked here."""
    # processes only for many files: a one-file pre-commit run does not pay for multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # libcst and the rules, imported once before the workers are forked (not at the top: a
    # run whose files are all cached never needs them)
    import memlint.static.module_check  # noqa: F401
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
    results: dict[str, Checked] = {}

    def job(chunk: list[str]) -> tuple:
        return chunk, codes_by_path[chunk[0]], {p: ignored_by_path[p] for p in chunk if p in ignored_by_path}

    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            futures = [(chunk, pool.submit(_check_chunk, job(chunk))) for chunk in chunks]
            for chunk, future in futures:
                try:
                    for path, checked in zip(chunk, future.result()):
                        results[path] = checked
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
    if configs is None:
        configs = Configs.single(config) if config is not None else Configs()
    projects = sys.modules.get("memlint.static.project")  # loaded by an earlier run in this process
    if projects is not None:
        projects.forget_file_lists()  # files may have been added since
    discovered = discover(paths, configs, force_exclude)
    files, problems = discovered.files, discovered.problems
    known, defaults = all_codes(), default_codes()
    codes_of: dict[int, tuple[str, ...]] = {}
    codes_by_path: dict[str, tuple[str, ...]] = {}
    ignored_by_path: dict[str, tuple[str, ...]] = {}
    caches: dict[tuple[str, tuple[str, ...]], object] = {}  # one per config folder and rule selection
    cache_of: dict[str, object] = {}
    results: dict[str, list[Finding]] = {}
    dependencies: dict[str, dict[str, str]] = {}
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
    if todo and use_cache:
        # the summaries of the project's modules, beside the results (workers inherit this)
        use_summary_cache(next(iter(caches.values())).root)
    if todo:
        if workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
            checked = _check_parallel(todo, codes_by_path, ignored_by_path, workers)
        else:
            checked = {path: _check_chunk(([path], codes_by_path[path], ignored_by_path))[0] for path in todo}
        for path, (findings, reads) in checked.items():
            results[path] = findings
            dependencies[path] = reads
    use_summary_cache(None)
    if use_cache:
        for path in todo:
            cache_of[path].put(path, ignored_by_path.get(path, ()), results[path], dependencies.get(path))
        for cache in caches.values():
            cache.save()

    findings = list(problems)
    for path in files:
        codes = codes_by_path[path]
        findings.extend(f for f in results[path] if f.code in codes or f.code in RUNNER_CODES)
    findings.sort(key=lambda f: f.sort_key)
    return CheckResult(findings=findings, files_checked=len(files), empty_paths=discovered.empty,
                       excluded_paths=discovered.excluded)
