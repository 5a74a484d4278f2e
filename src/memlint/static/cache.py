"""Per-file result cache in ``.memlint_cache/``.

An entry is keyed by the file's path and bytes, memlint's version and a fingerprint of
memlint's own source files (so editing a rule during development misses too), the enabled
rule codes and the file's per-file ignores: any change to one of them misses. It also
records the other modules of the project whose outlines or summaries the check read (with
their digests): an entry is used only while those are unchanged, so editing a base class or
a helper in another module re-checks the files that relied on it, and only those. Entries are
written to a temporary file and renamed, so concurrent runs never see half an entry; an
unreadable or corrupted entry is a miss, never an error, and a cache folder that cannot
be written (read-only checkout) is given up on silently.

Reading the cache imports neither libcst nor the rules: a run whose files all hit stays
light (see :func:`memlint.static.runner.check_paths`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from memlint.config import Config
from memlint.findings import Finding
from memlint.static.discovery import LISTING, listing_digest
from memlint.static.source import file_digest, read_bytes
from memlint.version import __version__

CACHE_DIR = ".memlint_cache"
FORMAT = "v4"  # v3: findings carry "help"; v4: entries record the modules they depend on

# path -> {module path: digest}: what the last check of a file read of other modules (set by
# memlint.static.module_check, taken by the runner for the cache entry).
_dependencies: dict[str, dict[str, str]] = {}


# Where module summaries are kept on disk (memlint.static.project), set by the run: None to keep
# them in memory only (--no-cache, the language server).
_summary_root: Path | None = None


def use_summary_cache(root: Path | None) -> None:
    """Keep module summaries in ``root``'s ``.memlint_cache/`` (None: in memory only)."""
    global _summary_root
    _summary_root = root


def summary_folder(path: str) -> Path | None:
    return None if _summary_root is None else _summary_root / CACHE_DIR / FORMAT / "summaries"


def note_dependencies(path: str, reads: dict[str, str]) -> None:
    _dependencies[path] = reads


def take_dependencies(path: str) -> dict[str, str]:
    return _dependencies.pop(path, {})


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of memlint's version and the names, sizes and modification times of its
    source files: cheap (a few dozen ``stat`` calls), and different after any edit."""
    package = Path(__file__).resolve().parents[1]  # src/memlint
    digest = hashlib.sha256(__version__.encode())
    for folder, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                full = os.path.join(folder, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                digest.update(f"{os.path.relpath(full, package)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


class Cache:
    def __init__(self, folder: Path, salt: str) -> None:
        self.folder = folder
        self.salt = salt.encode()
        self._usable = True
        self._keys: dict[tuple[str, tuple[str, ...]], str | None] = {}

    @property
    def root(self) -> Path:
        """The folder holding ``.memlint_cache/``."""
        return self.folder.parent.parent

    @classmethod
    def for_run(cls, codes: Sequence[str], config: Config) -> "Cache":
        root = config.root or Path.cwd()
        salt = json.dumps([__version__, code_fingerprint(), sorted(codes)])
        return cls(Path(root) / CACHE_DIR / FORMAT, salt)

    def _key(self, path: str, ignored: Sequence[str]) -> str | None:
        memo = (path, tuple(ignored))
        if memo in self._keys:
            return self._keys[memo]
        try:
            data = read_bytes(path)
        except (OSError, MemoryError):
            key = None
        else:
            digest = hashlib.sha256(self.salt)
            digest.update(b"\0" + os.path.abspath(path).encode("utf-8", "surrogateescape") + b"\0")
            digest.update(",".join(sorted(ignored)).encode() + b"\0")
            digest.update(data)
            key = digest.hexdigest()
        self._keys[memo] = key
        return key

    def get(self, path: str, ignored: Sequence[str]) -> list[Finding] | None:
        key = self._key(path, ignored)
        if key is None:
            return None
        try:
            with open(self.folder / key[:2] / key, encoding="utf-8") as fh:
                data = json.load(fh)
            if data.get("key") != key:
                return None
            if any(_dependency_digest(dep) != digest for dep, digest in data.get("deps", {}).items()):
                return None  # a module it read of changed, or the project's files
            findings = [Finding.from_json(item) for item in data["findings"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None  # missing, half-written by a crashed run, or corrupted: a miss
        # The cache stores findings for the path they were computed on.
        return [f if f.path == path else _with_path(f, path) for f in findings]

    def put(self, path: str, ignored: Sequence[str], findings: list[Finding],
            dependencies: dict[str, str] | None = None) -> None:
        if not self._usable or any(f.code in ("ML901", "ML902") for f in findings):
            return  # never cache failures: the next run should try again
        key = self._key(path, ignored)
        if key is None:
            return
        # Store only if the bytes are still those the key was made from (the file may
        # have been edited while it was checked).
        self._keys.pop((path, tuple(ignored)), None)
        if self._key(path, ignored) != key:
            return
        folder = self.folder / key[:2]
        try:
            folder.mkdir(parents=True, exist_ok=True)
            gitignore = self.folder.parent / ".gitignore"
            if not gitignore.exists():
                _write_atomic(gitignore.parent, gitignore, "# Created by memlint\n*\n")
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump({"key": key, "findings": [f.to_json() for f in findings],
                               "deps": dependencies or {}}, fh)
                os.replace(tmp, folder / key)
            except BaseException:
                _remove(tmp)
                raise
        except OSError:
            self._usable = False  # read-only checkout, full disk: run without a cache

    def save(self) -> None:
        """Entries are written as they come; nothing left to do."""


def _write_atomic(folder: Path, target: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        _remove(tmp)
        raise


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _with_path(finding: Finding, path: str) -> Finding:
    return replace(finding, path=path)


def _dependency_digest(dependency: str) -> str | None:
    """The digest a result's dependency has now: a file's content, or (``LISTING`` + a project
    root) which files the project holds."""
    if dependency.startswith(LISTING):
        return listing_digest(dependency[len(LISTING):])
    return file_digest(dependency)
