"""Does ``memlint check`` give each file the same findings however it is run?

A pre-commit hook passes only the changed files, CI checks the whole project with one process
per core, an editor checks one file at a time: a file's findings must not depend on which other
files were checked beside it, in which order, or in how many processes. For each project folder
given (a repository of a benchmark corpus, say), this runs ``memlint check --no-cache`` on the
whole folder with ``-j 1`` and with ``-j 2``, and on each of ``--sample`` of its files alone, and
prints every file whose findings differ between the runs (nothing when they agree).

    python3 benchmarks/determinism.py benchmarks/.corpus-fresh/dev73/* [--sample 10]

Exit status 1 when a difference was found.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def findings(paths: list[str], cwd: Path, jobs: int) -> dict[str, list[tuple]]:
    """Each file's findings (line, column, code, severity), by path relative to ``cwd``."""
    run = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--output-format", "json", "-j", str(jobs), *paths],
        cwd=cwd, capture_output=True, text=True)
    try:
        data = json.loads(run.stdout or "[]")
    except json.JSONDecodeError:
        return {"<memlint failed>": [(run.returncode, run.stderr[-300:])]}
    found: dict[str, list[tuple]] = defaultdict(list)
    for item in data if isinstance(data, list) else data.get("findings", []):
        path = os.path.relpath(os.path.join(cwd, item["path"]), cwd)
        found[path].append((item.get("line"), item.get("column"), item.get("code"), item.get("severity")))
    return {path: sorted(items) for path, items in found.items()}


def python_files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*.py")
                  if not any(part.startswith(".") for part in path.relative_to(folder).parts))


def compare(folder: Path, sample: int, rng: random.Random) -> list[str]:
    one = findings(["."], folder, 1)
    two = findings(["."], folder, 2)
    differences = [f"{folder.name}/{path}: -j 1 {one.get(path, [])} / -j 2 {two.get(path, [])}"
                   for path in sorted(set(one) | set(two)) if one.get(path, []) != two.get(path, [])]
    files = python_files(folder)
    for path in rng.sample(files, min(sample, len(files))):
        alone = findings([path], folder, 1).get(path, [])
        if alone != one.get(path, []):
            differences.append(f"{folder.name}/{path}: alone {alone} / with the project {one.get(path, [])}")
    return differences


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="project folders to check")
    parser.add_argument("--sample", type=int, default=10, help="files of each folder checked alone (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="which files are sampled")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    differences = []
    for folder in args.folders:
        if folder.is_dir():
            differences.extend(compare(folder.resolve(), args.sample, rng))
    for line in differences:
        print(line)
    print(f"{len(args.folders)} folders: {len(differences)} differences", file=sys.stderr)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
