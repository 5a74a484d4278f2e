"""Prepare a release: set the version everywhere it is written, and date the changelog.

    python3 scripts/release.py 0.2.0 [--date 2026-12-01]

Sets ``version`` in pyproject.toml and ``__version__`` in src/memlint/version.py, points the
pre-commit (``rev: v0.2.0``) and GitHub Action (``...@v0.2.0``) snippets of README.md and
action.yml at the new tag, and turns CHANGELOG.md's ``## Unreleased`` section into
``## 0.2.0 — DATE`` under a new, empty ``## Unreleased``. It commits and tags nothing: read the diff, run the tests, then
``git commit -am "Release 0.2.0" && git tag -a v0.2.0 -m "memlint 0.2.0"`` (CONTRIBUTING.md,
"Releasing").
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = re.compile(r"^\d+\.\d+\.\d+$")
UNRELEASED = "## Unreleased\n"


def current_version(root: Path) -> str:
    match = re.search(r'^__version__ = "([^"]+)"$', (root / "src/memlint/version.py").read_text(), re.M)
    return match.group(1)


def _replace(path: Path, pattern: str, replacement: str, count: int | None = None) -> None:
    text = path.read_text(encoding="utf-8")
    new, found = re.subn(pattern, replacement, text, flags=re.M)
    if not found or (count is not None and found != count):
        raise SystemExit(f"release: {path.name}: expected {count or 'some'} match(es) of {pattern!r}, found {found}")
    path.write_text(new, encoding="utf-8")


def release(root: Path, version: str, date: str) -> None:
    old = current_version(root)
    _replace(root / "pyproject.toml", r'^version = "[^"]+"$', f'version = "{version}"', count=1)
    _replace(root / "src/memlint/version.py", r'^__version__ = "[^"]+"$', f'__version__ = "{version}"', count=1)
    for snippets in ("README.md", "action.yml"):
        _replace(root / snippets, rf"(rev: |@)v{re.escape(old)}\b", rf"\g<1>v{version}")
    changelog = root / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    if text.count(UNRELEASED) != 1:
        raise SystemExit("release: CHANGELOG.md needs exactly one '## Unreleased' section")
    changelog.write_text(text.replace(UNRELEASED, f"{UNRELEASED}\n## {version} — {date}\n"), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", help="the new version, MAJOR.MINOR.PATCH")
    parser.add_argument("--date", default=datetime.date.today().isoformat(), help="the release date (today)")
    options = parser.parse_args()
    if not VERSION.match(options.version):
        parser.error(f"{options.version!r} is not MAJOR.MINOR.PATCH")
    release(ROOT, options.version, options.date)
    print(f"set {options.version}; now: git diff, bash scripts/test.sh, then\n"
          f"  git commit -am 'Release {options.version}' && git tag -a v{options.version} -m 'memlint {options.version}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
