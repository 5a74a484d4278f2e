"""``memlint verify`` beside other jobs: verdicts when runs share the machine.

Run by hand (not by CI):  python benchmarks/verify_stress.py [--rounds 3] [--concurrent 4] [--burners 2]

Each round runs every script of SCRIPTS in three settings and checks the verdict each
gets against the one it should get:

- ``quiet``: one run at a time, nothing else on the machine (the baseline);
- ``concurrent``: ``--concurrent`` runs at once;
- ``loaded``: as many at once, beside ``--burners`` processes that keep a core busy each and
  one that writes and reads files without pause (an install, a checkpoint being saved).

Every run is printed with its verdict, exit code and time; a run whose verdict is not the
expected one is printed with its reason, so an ``inconclusive`` shows the cause it names.
The summary counts right verdicts per setting.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "verify"
# script -> the verdict it must get
SCRIPTS = {
    "leak_outputs_kept.py": "growth",
    "leak_graph_accumulation.py": "growth",
    "leak_lightning_module_state.py": "growth",
    "clean_adam_state.py": "stable",
    "clean_lbfgs_closure.py": "stable",
    "clean_dataloader_workers_scheduler.py": "stable",
}
CPU_BURNER = "while True:\n    pass\n"
IO_BURNER = """
import os, sys
path = os.path.join(sys.argv[1], "churn.bin")
block = os.urandom(1 << 20)
while True:
    with open(path, "wb") as fh:
        for _ in range(64):
            fh.write(block)
        fh.flush()
        os.fsync(fh.fileno())
    with open(path, "rb") as fh:
        while fh.read(1 << 20):
            pass
"""


def available(script: str) -> bool:
    needs = {"leak_lightning_module_state.py": "lightning"}.get(script)
    if needs is None:
        return True
    import importlib.util

    return importlib.util.find_spec(needs) is not None


def run_one(script: str, window: list[str], timeout: float) -> dict:
    command = [sys.executable, "-m", "memlint", "verify", str(FIXTURES / script), *window, "--format", "json",
               "--timeout", str(timeout)]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    try:
        report = json.loads(proc.stdout)
        verdict, reason = report["verdict"], report["reason"]
    except (json.JSONDecodeError, KeyError):  # memlint itself failed: its last line says why
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        verdict, reason = "error", lines[-1] if lines else "no output"
    return {"script": script, "verdict": verdict, "code": proc.returncode, "seconds": elapsed, "reason": reason}


def start_burners(count: int, folder: str) -> list[subprocess.Popen]:
    burners = [subprocess.Popen([sys.executable, "-c", CPU_BURNER]) for _ in range(count)]
    burners.append(subprocess.Popen([sys.executable, "-c", IO_BURNER, folder]))
    return burners


def stop(burners: list[subprocess.Popen]) -> None:
    for proc in burners:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=4)
    parser.add_argument("--burners", type=int, default=2, help="processes that keep a core busy each")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    scripts = [s for s in SCRIPTS if available(s)]
    window = ["--steps", str(args.steps), "--warmup", str(args.warmup)]
    print(f"{len(scripts)} scripts x {args.rounds} rounds; {args.concurrent} at once; {args.burners} CPU burners "
          f"and a file writer when loaded; {os.cpu_count()} cores")
    tally: dict[str, Counter] = {}
    with tempfile.TemporaryDirectory() as folder:
        for round_index in range(1, args.rounds + 1):
            for setting in ("quiet", "concurrent", "loaded"):
                burners = start_burners(args.burners, folder) if setting == "loaded" else []
                try:
                    width = 1 if setting == "quiet" else args.concurrent
                    with ThreadPoolExecutor(max_workers=width) as pool:
                        results = list(pool.map(lambda s: run_one(s, window, args.timeout), scripts))
                finally:
                    stop(burners)
                for result in results:
                    expected = SCRIPTS[result["script"]]
                    right = result["verdict"] == expected
                    tally.setdefault(setting, Counter())["right" if right else result["verdict"]] += 1
                    line = (f"round {round_index} {setting:<10} {result['script']:<40} {result['verdict']:<12} "
                            f"exit {result['code']}  {result['seconds']:6.1f} s")
                    print(line + ("" if right else f"  expected {expected}: {result['reason']}"), flush=True)
    print()
    for setting, counts in tally.items():
        total = sum(counts.values())
        others = ", ".join(f"{verdict} {n}" for verdict, n in counts.items() if verdict != "right")
        print(f"{setting:<10} {counts['right']}/{total} right" + (f" ({others})" if others else ""))


if __name__ == "__main__":
    main()
