"""Which files ``memlint check`` looks at: Python files and notebooks under the given
paths, minus excluded and never-interesting folders (virtualenvs, build output, VCS)."""

from __future__ import annotations

import os
from typing import Iterable

from memlint.config import DEFAULT_EXCLUDE, Config
from memlint.findings import Finding

PYTHON_SUFFIXES = (".py", ".pyw")
NOTEBOOK_SUFFIX = ".ipynb"


def unchecked_finding(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(path, line, column, line, column, "ML901", "unchecked-file", "error", message)


def discover(paths: Iterable[str], config: Config, force_exclude: bool = False) -> tuple[list[str], list[Finding]]:
    """Python files and notebooks under ``paths``, and ML901 findings for paths that
    do not exist. Explicit files are always checked unless ``force_exclude``."""
    files: list[str] = []
    problems: list[Finding] = []
    seen: set[str] = set()
    for raw in paths:
        path = os.path.normpath(raw)
        if os.path.isdir(path):
            for found in _walk_directory(path, config):
                if found not in seen:
                    seen.add(found)
                    files.append(found)
        elif os.path.isfile(path):
            if force_exclude and config.is_excluded(path):
                continue
            if path not in seen:
                seen.add(path)
                files.append(path)
        else:
            problems.append(unchecked_finding(path, "no such file or directory"))
    return files, problems


def _walk_directory(top: str, config: Config) -> Iterable[str]:
    visited: set[tuple[int, int]] = set()
    for folder, dirnames, filenames in os.walk(top, followlinks=False):
        try:
            st = os.stat(folder)
            key = (st.st_dev, st.st_ino)
            if key in visited:
                dirnames[:] = []
                continue
            visited.add(key)
        except OSError:
            continue
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in DEFAULT_EXCLUDE and not (d.startswith(".") and d not in (".", ".."))
            and not d.endswith(".egg-info") and not config.is_excluded(os.path.join(folder, d))
        )
        for filename in sorted(filenames):
            if filename.endswith(PYTHON_SUFFIXES) or filename.endswith(NOTEBOOK_SUFFIX):
                full = os.path.join(folder, filename)
                if not config.is_excluded(full):
                    yield full


