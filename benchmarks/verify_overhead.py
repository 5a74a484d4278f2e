"""Time of ``memlint verify`` against a plain run of the same steps.

Run by hand (not by CI):  python benchmarks/verify_overhead.py [--repeats 5] [--profiler]

For a tiny and a medium MLP, each clean and keeping every loss with its graph (so that verify
ends with the holder search), it writes a training script that stops by itself after exactly
``warmup + steps`` optimizer steps, then times ``python script.py`` and ``memlint verify
script.py`` (and, with ``--profiler``, ``--trace-dir``, which adds torch.profiler). Both sides
pay Python start-up and the torch import. The runs are interleaved (plain, verify, plain,
verify, ...), so that a machine shared with other jobs slows both alike; each repeat gives a
ratio, and the median and the spread (lowest-highest) of the ratios are printed, for wall time
and for CPU time (the command and its children). The target is <= 1.25x on the medium model
with the holder search.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = '''\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(*[layer for _ in range({layers}) for layer in (nn.Linear({width}, {width}), nn.ReLU())],
                      nn.Linear({width}, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
kept = []
for step in range({total}):
    x = torch.randn({batch}, {width})
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if {keep}:
        kept.append(loss)  # a leak: verify ends with the holder search
'''

TINY = dict(layers=2, width=32, batch=16)
MEDIUM = dict(layers=4, width=1024, batch=256)
MODELS = {
    "tiny MLP (2x32, batch 16)": dict(TINY, keep=False),
    "tiny MLP keeping every loss (holder search)": dict(TINY, keep=True),
    "medium MLP (4x1024, batch 256)": dict(MEDIUM, keep=False),
    "medium MLP keeping every loss (holder search)": dict(MEDIUM, keep=True),
}
TARGET = 1.25


def timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and all its child processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1):  # verify exits 1 on growth, which is still a measurement
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def ratio_text(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=47)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profiler", action="store_true", help="also time verify --trace-dir")
    args = parser.parse_args()
    memlint = [sys.executable, "-m", "memlint", "verify"]
    window = ["--steps", str(args.steps), "--warmup", str(args.warmup)]
    print(f"{args.warmup} + {args.steps} steps; {args.repeats} interleaved repeats; "
          "ratio to the plain run: median (lowest-highest)")
    with tempfile.TemporaryDirectory() as tmp:
        for label, sizes in MODELS.items():
            script = Path(tmp) / "bench_train.py"
            script.write_text(SCRIPT.format(total=args.warmup + args.steps, **sizes))
            runs = {"plain": [sys.executable, str(script)], "verify": [*memlint, str(script), *window]}
            if args.profiler:
                runs["verify --trace-dir"] = [*memlint, str(script), *window, "--trace-dir", str(Path(tmp) / "trace")]
            measured: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
            for _ in range(args.repeats):
                for name, command in runs.items():
                    measured[name].append(timed(command))
            for index, unit in ((0, "wall"), (1, "CPU")):
                plain = [m[index] for m in measured["plain"]]
                parts = [f"plain {statistics.median(plain):.2f} s"]
                for name in runs:
                    if name != "plain":
                        ratios = [m[index] / p for m, p in zip(measured[name], plain)]
                        parts.append(f"{name} {ratio_text(ratios)}")
                print(f"{label}, {unit}: " + ", ".join(parts))
            if label.startswith("medium") and "holder search" in label:
                ratios = [v[1] / p[1] for v, p in zip(measured["verify"], measured["plain"])]
                verdict = "within" if statistics.median(ratios) <= TARGET else "ABOVE"
                print(f"  {verdict} the {TARGET}x target (median CPU ratio)")


if __name__ == "__main__":
    main()
