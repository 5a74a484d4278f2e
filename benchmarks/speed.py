"""How fast is ``memlint check`` next to a bare libcst parse?

Installs a pinned corpus (skorch, torchtnt, pytorch-ignite sources, no dependencies) into
``benchmarks/.corpus-speed/`` (git-ignored), then times, each as the median of ``--runs``:

- bare: ``libcst.parse_module`` of every file in a process pool on all cores (pool start included);
- cold: ``memlint check --no-cache`` on the same files (the real CLI, a subprocess);
- warm: ``memlint check`` again with a filled cache;
- one file: ``memlint check FILE`` as pre-commit runs it on one changed file (cache miss: new bytes)
  and on an unchanged one (cache hit), interpreter start-up included, without the warm server
  (the default) and with it (opt-in: ``memlint server start``, see ``memlint.server_client``);
  and a changed file that imports no PyTorch (no rule can match it: libcst is never imported);
- where a cold one-file run spends its time: ``python -X importtime`` of the same run, split
  into interpreter start-up, click, memlint's own modules, libcst, and the check itself;

and prints each time with its ratio to the bare parse. ``--instructions`` adds the one-file runs
counted in CPU instructions by valgrind's callgrind, which a busy machine does not change, and
``--baseline SRC`` (another memlint's ``src`` folder, e.g. a checkout of the last release) puts
its counts beside ours: the before/after figures of a change. Its last row is a changed module
inside a project whose other modules were checked before (results and module summaries cached):
what pre-commit pays when one module of a package is edited. ``--index`` instead prints the CPU
time to build the project index of the corpus from cold (every module summarised) beside a cold
check of it. The corpus runs use no server, so that
their CPU time is all in this process's children. Targets (issue 4): cold <= 1.5x,
warm <= 0.1x, one file < 0.3 s with the server.

    python3 benchmarks/speed.py [--runs 5] [--jobs 0] [--instructions [--baseline OTHER/src]]
    python3 benchmarks/speed.py --index
"""

from __future__ import annotations

import argparse
import os
import resource
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


def _cpu() -> float:
    """CPU seconds of this process and its finished children (robust to a busy machine)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


CPU: dict[str, list[float]] = {}


def bare_parse(files: list[str], jobs: int) -> float:
    import libcst  # noqa: F401  (imported before forking, as memlint's workers get it)

    start, cpu = time.perf_counter(), _cpu()
    chunk = max(1, len(files) // (jobs * 4))
    chunks = [files[i:i + chunk] for i in range(0, len(files), chunk)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        assert sum(pool.map(_parse_chunk, chunks)) == len(files)
    CPU.setdefault("bare", []).append(_cpu() - cpu)
    return time.perf_counter() - start


LOCAL_ENV = dict(os.environ, MEMLINT_NO_SERVER="1")
SERVED_ENV: dict[str, str] = {}  # set in main(): a private server folder


def memlint(args: list[str], cwd: str, label: str = "", served: bool = False) -> tuple[float, subprocess.CompletedProcess]:
    start, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(
        [sys.executable, "-m", "memlint", "check", *args], cwd=cwd, capture_output=True, text=True,
        env=SERVED_ENV if served else LOCAL_ENV,
    )
    elapsed = time.perf_counter() - start
    if label:
        CPU.setdefault(label, []).append(_cpu() - cpu)
    # 2: some file not checked; the summary line shows that memlint itself ran.
    if done.returncode not in (0, 1, 2) or "Traceback" in done.stderr or "checked" not in done.stdout:
        sys.exit(f"memlint failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return elapsed, done


def start_server(work: str, one: str) -> str:
    folder = os.path.join(work, "server")
    os.mkdir(folder, 0o700)
    SERVED_ENV.update({k: v for k, v in os.environ.items() if k not in ("CI", "MEMLINT_NO_SERVER")})
    SERVED_ENV["MEMLINT_SERVER_DIR"] = folder
    SERVED_ENV["MEMLINT_SERVER"] = "1"  # the server is opt-in
    memlint([one], work, served=True)  # finds no server: starts one
    deadline = time.monotonic() + 60
    while not any(name.endswith(".sock") for name in os.listdir(folder)):
        if time.monotonic() > deadline:
            sys.exit("the memlint server did not start")
        time.sleep(0.05)
    return folder


def stop_server(folder: str) -> int:
    """Stop the server; return how many runs it served."""
    served = 0
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name.endswith(".log"):
            served += Path(path).read_text().count("run: memlint")
        if name.endswith(".lock"):
            try:
                os.kill(int(Path(path).read_text().split()[0]), 15)
            except (OSError, ValueError, IndexError):
                pass
    return served


def median(values: list[float]) -> float:
    return statistics.median(values)


# Where a cold one-file run's time goes: the import time of each package's own modules, as
# ``-X importtime`` reports it (self microseconds, summed over the package's modules); the rest
# of the run is start-up, the standard library's imports, and the check itself.
BREAKDOWN = (("click", "click"), ("libcst", "libcst"), ("memlint (own modules)", "memlint"))


def cold_breakdown(path: str, work: str) -> dict[str, float]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "memlint", "check", "--no-cache", path],
                          cwd=work, capture_output=True, text=True, env=LOCAL_ENV)
    total = time.perf_counter() - start
    seconds = {label: 0.0 for label, _ in BREAKDOWN}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        own, _, name = (part.strip() for part in line[len("import time:"):].split("|"))
        if not own.isdigit():
            continue
        for label, package in BREAKDOWN:
            if name == package or name.startswith(package + "."):
                seconds[label] += int(own) / 1e6
    seconds["total"] = total
    return seconds


def instructions(args: list[str], cwd: str, source_root: str, before=None) -> int | None:
    """CPU instructions of ``memlint check ARGS`` (no server), counted by callgrind; None
    without valgrind. ``before``: called between the uncounted warm-up run and the counted one
    (to edit a file, so that the counted run sees it changed)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    # As installs run it: with Python's bytecode cache (pip writes it at install time), warmed by
    # one uncounted run. Without it (PYTHONDONTWRITEBYTECODE), the count is mostly the compiling
    # of memlint's own source, and every new line of rule code reads as a slowdown.
    env = {key: value for key, value in LOCAL_ENV.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = source_root
    subprocess.run([sys.executable, "-m", "memlint", "check", *args], cwd=cwd, capture_output=True, env=env)
    if before is not None:
        before()
    done = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           "-m", "memlint", "check", *args], cwd=cwd, capture_output=True, text=True, env=env)
    for line in done.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    return None


def instruction_table(work: str, one: str, baseline: str | None) -> None:
    """One-file runs in instructions: ours and, with ``baseline``, another memlint's."""
    ours = str(Path(__file__).resolve().parents[1] / "src")
    versions = [("this memlint", ours)] + ([("baseline", baseline)] if baseline else [])
    plain_source = Path(statistics.__file__).read_text(encoding="utf-8")
    cases = (("changed torch module (cache miss)", Path(one).read_text(encoding="utf-8"), True),
             ("changed module, no PyTorch", plain_source, True),
             ("unchanged torch module (cache hit)", Path(one).read_text(encoding="utf-8"), False))
    print("one file, CPU instructions (callgrind: the same on a busy machine), millions:")
    print(f"{'':36}" + "".join(f"{name:>16}" for name, _ in versions))
    for label, text, changed in cases:
        row = []
        for index, (_, root) in enumerate(versions):
            path = os.path.join(work, f"instr_{index}_{len(row)}_{label[:7].replace(' ', '_')}.py")
            Path(path).write_text(text + ("\n# changed\n" if changed else ""), encoding="utf-8")
            if changed:
                count = instructions(["--no-cache", path], work, root)
            else:
                subprocess.run([sys.executable, "-m", "memlint", "check", path], cwd=work, capture_output=True,
                               env=dict(LOCAL_ENV, PYTHONPATH=root))
                count = instructions([path], work, root)
            row.append(f"{count / 1e6:16,.0f}" if count else f"{'n/a':>16}")
        print(f"{'  ' + label:36}" + "".join(row))
    # A changed file inside a project whose other modules were all checked before (their
    # results and summaries are cached): what pre-commit pays on an edit of one module.
    row = []
    for index, (_, root) in enumerate(versions):
        project = os.path.join(work, f"project_{index}")
        shutil.copytree(SITE / "ignite", os.path.join(project, "ignite"))
        Path(project, "pyproject.toml").write_text("")
        env = dict(LOCAL_ENV, PYTHONPATH=root)
        subprocess.run([sys.executable, "-m", "memlint", "check", "ignite"], cwd=project, capture_output=True, env=env)
        edited = Path(project, ONE_FILE)

        def edit() -> None:
            edited.write_text(edited.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")

        count = instructions([ONE_FILE], project, root, before=edit)
        row.append(f"{count / 1e6:16,.0f}" if count else f"{'n/a':>16}")
    print(f"{'  changed module of a warm project':36}" + "".join(row))


def index_cost(files: list[str]) -> None:
    """CPU seconds to summarise every module of a cold project (the index), beside a cold check
    of the same files, in this process: the index must cost at most one cold check."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from memlint.config import Config
    from memlint.static import project as project_module
    from memlint.static.runner import check_paths

    project_module._projects.clear()
    start = time.process_time()
    for path in files:
        project = project_module.project_for(path)
        project.summary(project.file_of_path(path))
    index = time.process_time() - start
    project_module._projects.clear()
    start = time.process_time()
    check_paths(files, Config(), use_cache=False, jobs=1)
    check = time.process_time() - start
    print(f"index of a cold project: {index:.2f} s CPU for {len(files)} modules; a cold check: {check:.2f} s "
          f"({index / check:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=0, help="0: all cores")
    parser.add_argument("--instructions", action="store_true",
                        help="also count the one-file runs in CPU instructions (valgrind; slow)")
    parser.add_argument("--baseline", metavar="SRC", help="with --instructions: another memlint's src folder")
    parser.add_argument("--index", action="store_true",
                        help="only: CPU time to build the project index of the corpus, beside a cold check of it")
    options = parser.parse_args()
    jobs = options.jobs or os.cpu_count() or 1

    install()
    files = corpus_files()
    lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    print(f"corpus: {len(files)} files, {lines} lines ({', '.join(PINNED)}); {jobs} processes")
    if options.index:
        index_cost(files)
        return

    # Run from a scratch folder (no pyproject.toml above it) so the cache is ours alone.
    work = tempfile.mkdtemp(prefix="memlint-speed-")
    try:
        jobs_args = ["-j", str(options.jobs)]
        bare_runs, cold_runs, warm_runs, ratios = [], [], [], []
        outputs = set()
        for _ in range(options.runs):  # interleaved, so that a busy moment hits both
            bare_runs.append(bare_parse(files, jobs))
            elapsed, done = memlint(["--no-cache", *jobs_args, *files], work, "cold")
            cold_runs.append(elapsed)
            ratios.append(elapsed / bare_runs[-1])
            outputs.add(done.stdout)
        shutil.rmtree(os.path.join(work, ".memlint_cache"), ignore_errors=True)
        memlint([*jobs_args, *files], work)  # fill the cache
        for _ in range(options.runs):
            elapsed, done = memlint([*jobs_args, *files], work, "warm")
            warm_runs.append(elapsed)
            outputs.add(done.stdout)
        # One changed file as pre-commit passes it: a copy with new bytes each run (cache miss).
        one = str(SITE / ONE_FILE)
        source = Path(one).read_text(encoding="utf-8")
        one_file: dict[str, list[float]] = {}
        one_file_outputs = set()
        server_folder = start_server(work, one)
        try:
            for served in (True, False):
                kind = "served" if served else "local"
                for i in range(options.runs):
                    changed = os.path.join(work, f"changed_{kind}_{i}.py")
                    Path(changed).write_text(source + f"\n# edit {i} {time.time()}\n", encoding="utf-8")
                    elapsed, done = memlint([changed], work, f"miss {kind}", served)
                    one_file.setdefault(f"miss {kind}", []).append(elapsed)
                    one_file_outputs.add(done.stdout.replace(changed, "FILE"))
                memlint([one], work, served=served)
                for _ in range(options.runs):
                    elapsed, done = memlint([one], work, f"hit {kind}", served)
                    one_file.setdefault(f"hit {kind}", []).append(elapsed)
        finally:
            served_count = stop_server(server_folder)
        # A changed file that imports no PyTorch: no rule can match, Python's parser checks it.
        plain_source = Path(statistics.__file__).read_text(encoding="utf-8")
        for i in range(options.runs):
            plain = os.path.join(work, f"plain_{i}.py")
            Path(plain).write_text(plain_source + f"\n# edit {i} {time.time()}\n", encoding="utf-8")
            elapsed, _ = memlint([plain], work, "miss plain")
            one_file.setdefault("miss plain", []).append(elapsed)
        breakdowns = [cold_breakdown(one, work) for _ in range(options.runs)]
        if options.instructions:
            instruction_table(work, one, options.baseline)
        if served_count < 2 * options.runs + 1:
            sys.exit(f"only {served_count} runs reached the server; the served timings are not what they say")
        start = time.perf_counter()
        for _ in range(options.runs):
            subprocess.run([sys.executable, "-c", "pass"], check=True)
        python_start = (time.perf_counter() - start) / options.runs
    finally:
        shutil.rmtree(work, ignore_errors=True)

    bare, cold, warm = median(bare_runs), median(cold_runs), median(warm_runs)
    cpu = {label: median(values) for label, values in CPU.items()}
    print(f"{'':32}{'wall':>9}{'ratio':>9}{'cpu':>9}{'cpu ratio':>11}")
    print(f"{'bare libcst parse (pool)':32}{bare:8.3f}s{1:8.2f}x{cpu['bare']:8.2f}s{1:10.2f}x")
    for label, wall, target in (("cold", cold, "<= 1.5x"), ("warm", warm, "<= 0.1x")):
        name = "memlint check --no-cache" if label == "cold" else "memlint check, warm cache"
        print(f"{name:32}{wall:8.3f}s{wall / bare:8.2f}x{cpu[label]:8.2f}s{cpu[label] / cpu['bare']:10.2f}x"
              f"   target {target}")
    print(f"{'  cold/bare ratio, median of runs':32}{'':9}{median(ratios):8.2f}x")
    print(f"one file ({ONE_FILE}, {source.count(chr(10))} lines), interpreter start-up included:")
    rows = (("changed (cache miss)", "miss local", ""),
            ("unchanged (cache hit)", "hit local", ""),
            ("changed, imports no torch", "miss plain", ""),
            ("changed, warm server", "miss served", "   target < 0.3 s"),
            ("unchanged, warm server", "hit served", ""))
    for name, key, note in rows:
        # A served run's CPU is spent in the server's worker, not in a child of this process.
        cpu_text = f"{cpu[key]:8.2f}s" if not key.endswith("served") else f"{'':9}"
        print(f"{'  ' + name:32}{median(one_file[key]):8.3f}s{'':9}{cpu_text}{note}")
    print(f"{'python3 -c pass (floor)':32}{python_start:8.3f}s")
    total = median([b["total"] for b in breakdowns])
    print(f"where a cold changed-file run (no server) spends {total:.3f}s (python -X importtime, medians):")
    accounted = python_start
    print(f"{'  interpreter start-up':32}{python_start:8.3f}s")
    for label, _ in BREAKDOWN:
        value = median([b[label] for b in breakdowns])
        accounted += value
        print(f"{'  import ' + label:32}{value:8.3f}s")
    print(f"{'  the rest: stdlib, I/O, checking':32}{max(0.0, total - accounted):8.3f}s")
    if len(one_file_outputs) != 1:
        print("WARNING: served and local one-file runs printed different findings", file=sys.stderr)
        sys.exit(1)
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if len(outputs) != 1:
        print("WARNING: cold and warm runs printed different findings", file=sys.stderr)
        sys.exit(1)
    findings = next(iter(outputs)).count("\n")
    print(f"findings: {findings} output lines, identical across cold and warm runs")


if __name__ == "__main__":
    main()
