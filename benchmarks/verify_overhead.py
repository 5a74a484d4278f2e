"""Wall time of ``memlint verify`` against a plain run of the same steps.

Run by hand (not by CI):  python benchmarks/verify_overhead.py [--repeats 3]

For a tiny and a medium MLP (and the medium one keeping every loss with its graph, so
that verify ends with the holder search) it writes a training script that stops by itself
after exactly ``warmup + steps`` optimizer steps, then times ``python script.py`` and
``memlint verify script.py`` (default mode, and with ``--trace-dir``, which adds
the torch.profiler) and prints the ratios. Both sides pay Python start-up and the
torch import; the target is <= 1.3x on the medium model in the default mode.
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

MODELS = {
    "tiny MLP (2x32, batch 16)": dict(layers=2, width=32, batch=16, keep=False),
    "medium MLP (4x1024, batch 256)": dict(layers=4, width=1024, batch=256, keep=False),
    "medium MLP keeping every loss (holder search at the end)": dict(layers=4, width=1024, batch=256, keep=True),
}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=47)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    memlint = [sys.executable, "-c", "from memlint.cli import main; main()", "verify"]
    window = ["--steps", str(args.steps), "--warmup", str(args.warmup)]
    print(f"{args.warmup} + {args.steps} steps, median of {args.repeats} runs")
    with tempfile.TemporaryDirectory() as tmp:
        for label, sizes in MODELS.items():
            script = Path(tmp) / "bench_train.py"
            script.write_text(SCRIPT.format(total=args.warmup + args.steps, **sizes))
            runs = {"plain": [sys.executable, str(script)],
                    "verify": [*memlint, str(script), *window],
                    "verify --trace-dir": [*memlint, str(script), *window, "--trace-dir", str(Path(tmp) / "trace")]}
            measured = {name: [timed(cmd) for _ in range(args.repeats)] for name, cmd in runs.items()}
            for index, unit in ((0, "wall"), (1, "CPU")):
                times = {name: statistics.median(m[index] for m in ms) for name, ms in measured.items()}
                plain = times["plain"]
                print(f"{label}, {unit}: plain {plain:.2f} s, verify {times['verify']:.2f} s "
                      f"({times['verify'] / plain:.2f}x), verify --trace-dir {times['verify --trace-dir']:.2f} s "
                      f"({times['verify --trace-dir'] / plain:.2f}x)")


if __name__ == "__main__":
    main()
