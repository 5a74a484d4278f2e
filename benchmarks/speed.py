"""How fast is ``memlint check`` next to a bare libcst parse?

Installs a pinned corpus (skorch, torchtnt, pytorch-ignite sources, no dependencies) into
``benchmarks/.corpus-speed/`` (git-ignored), then times, each as the median of ``--runs``:

- bare: ``libcst.parse_module`` of every file in a process pool on all cores (pool start included);
- cold: ``memlint check --no-cache`` on the same files (the real CLI, a subprocess);
- warm: ``memlint check`` again with a filled cache;
- one file: ``memlint check FILE`` as pre-commit runs it on one changed file (cache miss: new bytes)
  and on an unchanged one (cache hit), interpreter start-up included;

and prints each time with its ratio to the bare parse. Targets (issue 4): cold <= 1.5x,
warm <= 0.1x, one file < 0.3 s.

    python3 benchmarks/speed.py [--runs 5] [--jobs 0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / ".corpus-speed"
SITE = CORPUS / "site"
PINNED = ("skorch==1.4.0", "torchtnt==0.2.4", "pytorch-ignite==0.5.5")
PACKAGES = ("skorch", "torchtnt", "ignite")
# A typical torch-using module for the one-file runs.
ONE_FILE = "ignite/engine/engine.py"


def install() -> None:
    stamp = CORPUS / "installed.txt"
    if stamp.exists() and stamp.read_text() == "\n".join(PINNED):
        return
    shutil.rmtree(CORPUS, ignore_errors=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(SITE), *PINNED],
        check=True,
    )
    stamp.write_text("\n".join(PINNED))


def corpus_files() -> list[str]:
    files = []
    for package in PACKAGES:
        for folder, dirnames, filenames in os.walk(SITE / package):
            dirnames.sort()
            files.extend(os.path.join(folder, f) for f in sorted(filenames) if f.endswith(".py"))
    return files


def _parse_chunk(paths: list[str]) -> int:
    import libcst

    for path in paths:
        with open(path, "rb") as fh:
            libcst.parse_module(fh.read())
    return len(paths)


def bare_parse(files: list[str], jobs: int) -> float:
    import libcst  # noqa: F401  (imported before forking, as memlint's workers get it)

    start = time.perf_counter()
    chunk = max(1, len(files) // (jobs * 4))
    chunks = [files[i:i + chunk] for i in range(0, len(files), chunk)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        assert sum(pool.map(_parse_chunk, chunks)) == len(files)
    return time.perf_counter() - start


def memlint(args: list[str], cwd: str) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memlint.cli", "check", *args], cwd=cwd, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"memlint failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return elapsed, done


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=0, help="0: all cores")
    options = parser.parse_args()
    jobs = options.jobs or os.cpu_count() or 1

    install()
    files = corpus_files()
    lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    print(f"corpus: {len(files)} files, {lines} lines ({', '.join(PINNED)}); {jobs} processes")

    # Run from a scratch folder (no pyproject.toml above it) so the cache is ours alone.
    work = tempfile.mkdtemp(prefix="memlint-speed-")
    try:
        jobs_args = ["-j", str(options.jobs)]
        bare = median([bare_parse(files, jobs) for _ in range(options.runs)])
        cold_runs, warm_runs = [], []
        outputs = set()
        for _ in range(options.runs):
            elapsed, done = memlint(["--no-cache", *jobs_args, *files], work)
            cold_runs.append(elapsed)
            outputs.add(done.stdout)
        shutil.rmtree(os.path.join(work, ".memlint_cache"), ignore_errors=True)
        memlint([*jobs_args, *files], work)  # fill the cache
        for _ in range(options.runs):
            elapsed, done = memlint([*jobs_args, *files], work)
            warm_runs.append(elapsed)
            outputs.add(done.stdout)
        # One changed file as pre-commit passes it: a copy with new bytes each run (cache miss).
        one = str(SITE / ONE_FILE)
        source = Path(one).read_text(encoding="utf-8")
        miss_runs, hit_runs = [], []
        for i in range(options.runs):
            changed = os.path.join(work, f"changed_{i}.py")
            Path(changed).write_text(source + f"\n# edit {i} {time.time()}\n", encoding="utf-8")
            miss_runs.append(memlint([changed], work)[0])
        memlint([one], work)
        for _ in range(options.runs):
            hit_runs.append(memlint([one], work)[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    cold, warm = median(cold_runs), median(warm_runs)
    print(f"bare libcst parse (pool)      {bare:7.3f} s   1.00x")
    print(f"memlint check --no-cache      {cold:7.3f} s   {cold / bare:5.2f}x   (target <= 1.5x)")
    print(f"memlint check, warm cache     {warm:7.3f} s   {warm / bare:5.2f}x   (target <= 0.1x)")
    print(f"one changed file (cache miss) {median(miss_runs):7.3f} s            (target < 0.3 s)")
    print(f"one unchanged file (cache hit){median(hit_runs):7.3f} s")
    if len(outputs) != 1:
        print("WARNING: cold and warm runs printed different findings", file=sys.stderr)
        sys.exit(1)
    findings = next(iter(outputs)).count("\n")
    print(f"findings: {findings} output lines, identical across cold and warm runs")


if __name__ == "__main__":
    main()
