"""Per-file result cache in ``.memlint_cache/``.

An entry is keyed by the file's path and bytes, memlint's version, the enabled rule codes
and the file's ignores, so any change to one of them misses. Entries are written to a
temporary file and renamed, so concurrent runs never see half a file; an unreadable or
corrupted entry is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Sequence

from memlint import __version__
from memlint.config import Config
from memlint.findings import Finding

CACHE_DIR = ".memlint_cache"


class Cache:
    def __init__(self, folder: Path, salt: str) -> None:
        self.folder = folder
        self.salt = salt
        self._usable = True

    @classmethod
    def for_run(cls, codes: Sequence[str], config: Config) -> "Cache":
        root = config.root or Path.cwd()
        salt = json.dumps([__version__, list(codes)])
        return cls(Path(root) / CACHE_DIR / "v1", salt)

    def _key(self, path: str, ignored: Sequence[str]) -> str | None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        digest = hashlib.sha256()
        digest.update(self.salt.encode())
        digest.update(b"\0" + os.path.abspath(path).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(",".join(ignored).encode() + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def get(self, path: str, ignored: Sequence[str]) -> list[Finding] | None:
        key = self._key(path, ignored)
        if key is None:
            return None
        try:
            with open(self.folder / key[:2] / key, encoding="utf-8") as fh:
                data = json.load(fh)
            findings = [Finding.from_json(item) for item in data["findings"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        # The cache stores findings for the path they were computed on.
        return [f if f.path == path else _with_path(f, path) for f in findings]

    def put(self, path: str, ignored: Sequence[str], findings: list[Finding]) -> None:
        if not self._usable or any(f.code in ("ML901", "ML902") for f in findings):
            return  # never cache failures: the next run should try again
        key = self._key(path, ignored)
        if key is None:
            return
        folder = self.folder / key[:2]
        try:
            folder.mkdir(parents=True, exist_ok=True)
            gitignore = self.folder.parent / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Created by memlint\n*\n")
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"findings": [f.to_json() for f in findings]}, fh)
            os.replace(tmp, folder / key)
        except OSError:
            self._usable = False  # read-only checkout: run without a cache

    def save(self) -> None:
        """Entries are written as they come; nothing left to do."""


def _with_path(finding: Finding, path: str) -> Finding:
    from dataclasses import replace

    return replace(finding, path=path)
