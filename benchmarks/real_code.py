"""Precision benchmark: run memlint over the real training code of PyTorch frameworks.

Installs pinned releases with ``pip install --no-deps --target benchmarks/.corpus/<name>``
(never torch: the checker does not import the checked code), runs memlint's engine over
each package's sources and prints findings per rule and per 10k lines, per package.

    python3 benchmarks/real_code.py            # table
    python3 benchmarks/real_code.py --list     # plus every finding: path:line:col CODE message
                                               # (paths relative to benchmarks/.corpus/)
    python3 benchmarks/real_code.py --select ML1 --package skorch --list

Run by hand, not by CI. ``benchmarks/.corpus/`` is git-ignored; an install that is already
there is kept (delete the folder to reinstall).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / ".corpus"

# name -> (pinned requirement, source globs relative to the install folder)
PACKAGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "lightning": ("lightning==2.6.6", ("lightning/**/*.py",)),
    "accelerate": ("accelerate==1.15.0", ("accelerate/**/*.py",)),
    "pytorch-ignite": ("pytorch-ignite==0.5.5", ("ignite/**/*.py",)),
    "skorch": ("skorch==1.4.0", ("skorch/**/*.py",)),
    "torchtnt": ("torchtnt==0.2.4", ("torchtnt/**/*.py",)),
    "fastai": ("fastai==2.8.12", ("fastai/**/*.py",)),
    "speechbrain": ("speechbrain==1.1.2", ("speechbrain/**/*.py",)),
    # Only the training code: the models folder is ~1.2M lines of architectures.
    "transformers": (
        "transformers==5.23.0",
        (
            "transformers/trainer*.py",
            "transformers/training_args*.py",
            "transformers/optimization.py",
            "transformers/integrations/*.py",
        ),
    ),
}
TRANSFORMERS_MODELS_GLOB = "transformers/models/**/modeling_*.py"


def install(name: str, requirement: str, corpus: Path = CORPUS) -> Path:
    """Install ``requirement`` without dependencies into ``corpus`` (skipped if already there)."""
    target = corpus / name
    pkg = requirement.split("==")[0].replace("-", "_")
    version = requirement.split("==")[1]
    if any(target.glob(f"{pkg}-{version}.dist-info")):
        return target
    print(f"installing {requirement} -> {target}", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile", "--upgrade",
         "--disable-pip-version-check", "--target", str(target), requirement],
        check=True,
    )
    return target


def source_files(target: Path, globs: tuple[str, ...]) -> list[str]:
    files: set[str] = set()
    for pattern in globs:
        files.update(str(p) for p in target.glob(pattern) if p.is_file())
    return sorted(files)


def count_lines(paths: list[str]) -> int:
    total = 0
    for path in paths:
        with open(path, "rb") as fh:
            total += fh.read().count(b"\n")
    return total


def main(
    argv: list[str] | None = None,
    packages: dict[str, tuple[str, tuple[str, ...]]] = PACKAGES,
    corpus: Path = CORPUS,
    description: str = __doc__.splitlines()[0],
) -> int:
    """Install, check and tabulate ``packages`` in ``corpus`` (benchmarks/heldout_code.py reuses it)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--list", action="store_true", help="print every finding")
    parser.add_argument("--select", default=None, help="comma-separated code prefixes (default: the default rule set)")
    parser.add_argument("--all-rules", action="store_true", help="enable every rule, also those off by default")
    parser.add_argument("--package", action="append", choices=sorted(packages), help="only these packages")
    if "transformers" in packages:
        parser.add_argument("--transformers-models", action="store_true", help="also check transformers' modeling_*.py")
    parser.add_argument("-j", "--jobs", type=int, default=0, help="worker processes (default: all cores)")
    parser.add_argument("--absolute", action="store_true", help="--list: absolute paths (default: relative to the corpus)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(HERE.parent / "src"))
    from memlint.config import Config
    from memlint.catalogue import all_codes, default_codes
    from memlint.static.runner import check_paths

    if args.all_rules:
        config = Config(select=["ML"])
    elif args.select:
        config = Config(select=[c.strip() for c in args.select.split(",") if c.strip()])
    else:
        config = Config()
    enabled = sorted(config.enabled_codes(all_codes(), default_codes()))

    corpus.mkdir(exist_ok=True)
    names = args.package or list(packages)
    rows = []
    all_findings = []
    per_rule_total: Counter[str] = Counter()
    for name in names:
        requirement, globs = packages[name]
        if name == "transformers" and getattr(args, "transformers_models", False):
            globs = globs + (TRANSFORMERS_MODELS_GLOB,)
        target = install(name, requirement, corpus)
        files = source_files(target, globs)
        lines = count_lines(files)
        start = time.perf_counter()
        result = check_paths(files, config, use_cache=False, jobs=args.jobs)
        elapsed = time.perf_counter() - start
        per_rule = Counter(f.code for f in result.findings)
        per_rule_total.update(per_rule)
        rows.append((name, requirement.split("==")[1], len(files), lines, elapsed, per_rule))
        all_findings.extend(result.findings)

    if args.list:
        for f in all_findings:
            path = f.path if args.absolute else os.path.relpath(f.path, corpus)
            print(f"{path}:{f.line}:{f.column} {f.code} {f.message}")
        print()

    # a column per rule that fired; the enabled rules that found nothing are named below the table
    shown = sorted(per_rule_total)
    silent = [c for c in enabled if c not in per_rule_total and not c.startswith("ML9")]
    w = max([15] + [len(row[0]) + 1 for row in rows])  # the name column fits the longest package name
    head = f"{'package':<{w}}{'version':>9}{'files':>7}{'lines':>9}{'secs':>7}{'total':>7}{'/10k':>7}"
    head += "".join(f"{c:>7}" for c in shown)
    print(head)
    print("-" * len(head))
    tot_files = tot_lines = tot_n = 0
    tot_secs = 0.0
    for name, version, nfiles, lines, secs, per_rule in rows:
        n = sum(per_rule.values())
        tot_files += nfiles
        tot_lines += lines
        tot_n += n
        tot_secs += secs
        row = f"{name:<{w}}{version:>9}{nfiles:>7}{lines:>9}{secs:>7.2f}{n:>7}{n * 10000 / max(lines, 1):>7.2f}"
        row += "".join(f"{per_rule[c]:>7}" for c in shown)
        print(row)
    print("-" * len(head))
    row = f"{'total':<{w}}{'':>9}{tot_files:>7}{tot_lines:>9}{tot_secs:>7.2f}{tot_n:>7}{tot_n * 10000 / max(tot_lines, 1):>7.2f}"
    row += "".join(f"{per_rule_total[c]:>7}" for c in shown)
    print(row)
    print("per 10k lines:" + " " * (len(f"{'':<{w}}{'':>9}{'':>7}{'':>9}{'':>7}{'':>7}{'':>7}") - 14)
          + "".join(f"{per_rule_total[c] * 10000 / max(tot_lines, 1):>7.2f}" for c in shown))
    print(f"no findings: {', '.join(silent) or '-'}")
    print(f"rules enabled: {', '.join(enabled)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
