"""``memlint check --add-noqa`` on the real-code corpus (``benchmarks/real_code.py``'s, which must
be installed: run that first), or with ``--research`` on ``research_code.py``'s (notebooks too).

Copies every corpus file with a finding into a temporary folder (the corpus is never edited),
runs ``memlint check --add-noqa`` there through the real CLI, and checks that

- ``memlint check`` then reports nothing (memlint's own ML9xx diagnostics aside);
- nothing else changed: every changed line is its old text with a ``# noqa`` comment or codes
  inserted, and no line was added or removed;
- a second ``--add-noqa`` adds nothing and changes no byte.

    python3 benchmarks/add_noqa_corpus.py [--all-rules] [--transformers-models] [--package lightning ...] [--keep]
    python3 benchmarks/add_noqa_corpus.py --research [--mirror /work/.mirror] [--package nanoGPT ...]
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
INSERTED = re.compile(r"^( {0,2}# noqa: |, | |,)[A-Z]+[0-9]+((, |,| )[A-Z]+[0-9]+)*$")


def memlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(SRC), MEMLINT_NO_SERVER="1")
    return subprocess.run([sys.executable, "-m", "memlint", *args], cwd=cwd, env=env, capture_output=True, text=True)


def only_insertions(old: str, new: str) -> list[str]:
    """Lines of ``new`` that are not ``old``'s with a noqa insertion (empty: all fine)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    if len(old_lines) != len(new_lines):
        return [f"line count changed: {len(old_lines)} -> {len(new_lines)}"]
    bad = []
    for number, (a, b) in enumerate(zip(old_lines, new_lines), start=1):
        if a == b:
            continue
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
        if len(ops) != 1 or ops[0][0] != "insert" or not INSERTED.match(b[ops[0][3]:ops[0][4]]):
            bad.append(f"{number}: {a!r} -> {b!r}")
    return bad


def _corpus_files(args):
    """(corpus folder, files to check) for each package or repository of the chosen corpus."""
    if args.research:
        from research_code import BY_NAME, CORPUS as RESEARCH, REPOS, obtain
        from research_code import source_files as repository_files

        RESEARCH.mkdir(exist_ok=True)
        for repo in [BY_NAME[name] for name in args.package] if args.package else REPOS:
            files, _ = repository_files(obtain(repo, args.mirror), repo)
            yield RESEARCH, files
        return
    from real_code import CORPUS, PACKAGES, TRANSFORMERS_MODELS_GLOB, source_files

    for name in args.package or list(PACKAGES):
        target = CORPUS / name
        if not target.is_dir():
            print(f"{name}: not installed (run benchmarks/real_code.py first)", file=sys.stderr)
            continue
        globs = PACKAGES[name][1]
        if name == "transformers" and args.transformers_models:
            globs = globs + (TRANSFORMERS_MODELS_GLOB,)
        yield CORPUS, source_files(target, globs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", action="append", help="only these packages (or repositories, with --research)")
    parser.add_argument("--research", action="store_true",
                        help="research_code.py's corpus (repositories, notebooks included) instead of real_code.py's")
    parser.add_argument("--mirror", type=Path, help="with --research: local git mirrors, as research_code.py --mirror")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--all-rules", action="store_true", help="every rule, also those off by default")
    parser.add_argument("--transformers-models", action="store_true", help="also transformers' modeling_*.py")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(SRC))
    from memlint.config import Config
    from memlint.static.runner import check_paths

    config = Config(select=["ALL"]) if args.all_rules else Config()
    work = Path(tempfile.mkdtemp(prefix="memlint-add-noqa-"))
    originals: dict[Path, str] = {}
    for corpus, files in _corpus_files(args):
        result = check_paths(files, config, use_cache=False)
        for path in sorted({f.path for f in result.findings if not f.code.startswith("ML9")}):
            copy = work / corpus.name.lstrip(".") / os.path.relpath(path, corpus)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
            originals[copy] = copy.read_text(encoding="utf-8")
    if not originals:
        print("no files with findings", file=sys.stderr)
        return 1
    # The files by name: a folder walk would leave out some (a build/ or env/ folder of a repository).
    rules = ["--select", "ALL"] if args.all_rules else []
    named = [str(path.relative_to(work)) for path in originals]
    before = memlint("check", "--no-cache", *rules, "--statistics", *named, cwd=work)
    first = memlint("check", "--no-cache", *rules, "--add-noqa", *named, cwd=work)
    after = memlint("check", "--no-cache", *rules, "--format", "concise", *named, cwd=work)
    snapshot = {path: path.read_bytes() for path in originals}
    second = memlint("check", "--no-cache", *rules, "--add-noqa", *named, cwd=work)

    failures = []
    for path, old in originals.items():
        for problem in only_insertions(old, path.read_text(encoding="utf-8")):
            failures.append(f"{path.relative_to(work)}:{problem}")
    unchanged_again = all(path.read_bytes() == data for path, data in snapshot.items())
    leftover = [line for line in after.stdout.splitlines() if re.search(r": ML[0-8]\d\d ", line)]

    print(f"{len(originals)} files with findings copied to {work}")
    print("findings before:\n" + before.stdout.rstrip())
    print(f"--add-noqa: {first.stderr.strip()} (exit {first.returncode})")
    print(f"check afterwards: {after.stdout.strip().splitlines()[-1]} (exit {after.returncode})")
    print(f"second --add-noqa: {second.stderr.strip()} (exit {second.returncode}); "
          f"files unchanged: {unchanged_again}")
    print(f"lines changed other than by an inserted noqa: {len(failures)}")
    for failure in failures[:20]:
        print("  " + failure)
    for line in leftover[:20]:
        print("  still reported: " + line)
    if not args.keep:
        shutil.rmtree(work)
    ok = not failures and not leftover and unchanged_again and "Added 0 " in second.stderr
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
