"""The parent side: start the child (or torchrun), wait, and always clean up.

The child runs in its own session (process group) with its output captured to a
file; the parent never imports torch. On timeout, Ctrl-C or after the child
exits, every process the child started is killed: the child's process group
plus every descendant found in /proc (torchrun starts each worker in a session
of its own, so the group alone is not enough).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from memlint.dynamic.child import CONFIG_ENV
from memlint.dynamic.options import VerifyOptions
from memlint.dynamic.system import descendants, is_running

# The folder holding the memlint package (src/ in a checkout, site-packages when installed).
_SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

POLL_SECONDS = 0.1
# Starting processes from several threads at once failed with EFAULT ("Bad address") on a
# sandboxed kernel; callers that run verifies in threads (the test suite) share this lock.
SPAWN_LOCK = threading.Lock()
KILL_WAIT_SECONDS = 5.0
# The profiler writes these on stderr, sometimes in the middle of a line of the script's output.
_USDT = re.compile(r"USDT:[^\n]*(\n|$)")


@dataclass
class ChildOutcome:
    """How the child run ended, and what it left in the result folder."""

    returncode: int | None
    timed_out: bool = False
    interrupted: bool = False
    results: dict[int, dict] = field(default_factory=dict)  # rank -> result file
    progress: dict[int, int] = field(default_factory=dict)  # rank -> steps reached
    devices: dict[int, str] = field(default_factory=dict)  # rank -> the device it measured ("cpu", "cuda")
    output: str = ""  # the child's stdout and stderr, profiler noise removed


def child_command(options: VerifyOptions) -> list[str]:
    if options.nproc_per_node > 1:
        return [sys.executable, "-m", "torch.distributed.run", "--standalone",
                f"--nproc-per-node={options.nproc_per_node}", "-m", "memlint.dynamic.child"]
    return [sys.executable, "-m", "memlint.dynamic.child"]


def child_environment(options: VerifyOptions, config_path: str) -> dict[str, str]:
    env = dict(os.environ)
    env[CONFIG_ENV] = config_path
    env["PYTHONUNBUFFERED"] = "1"
    # The child must import this very memlint, also from a source tree that is not installed
    # (an installed one is found anyway; its site-packages must not go ahead of the stdlib).
    package_root = _SOURCE_ROOT
    if os.path.basename(package_root) not in ("site-packages", "dist-packages"):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    if options.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def run_child(options: VerifyOptions, workdir: str, on_progress=None) -> ChildOutcome:
    """Run the script under the runtime in ``workdir``; ``on_progress(step)`` as steps end."""
    config = {
        "script": options.script, "module": options.module, "args": options.args,
        "steps": options.steps, "warmup": options.warmup, "device": options.device,
        "result_dir": workdir, "trace_dir": os.path.abspath(options.trace_dir) if options.trace_dir else None,
        "step_on": options.step_on,
    }
    config_path = os.path.join(workdir, "config.json")
    with open(config_path, "w") as fh:
        json.dump(config, fh)
    log_path = os.path.join(workdir, "output.log")
    outcome = ChildOutcome(returncode=None)
    with open(log_path, "wb") as log:
        with SPAWN_LOCK:
            proc = subprocess.Popen(
                child_command(options), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=child_environment(options, config_path), start_new_session=True,
            )
        deadline = time.monotonic() + options.timeout
        last_step = -1
        try:
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    outcome.timed_out = True
                    break
                time.sleep(POLL_SECONDS)
                if on_progress is not None:
                    step = min(_progress(workdir).values(), default=0)
                    if step != last_step:
                        on_progress(step)
                        last_step = step
        except KeyboardInterrupt:
            outcome.interrupted = True
        finally:
            kill_tree(proc)
        outcome.returncode = proc.returncode
    outcome.progress = _progress(workdir)
    outcome.devices = _devices(workdir)
    outcome.results = _results(workdir)
    outcome.output = _clean_output(log_path)
    return outcome


def kill_tree(proc: subprocess.Popen) -> None:
    """Kill the child, its process group and every descendant; reap the child."""
    family = descendants(proc.pid)
    if proc.poll() is None:
        family.append(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group id is the child's pid (new session)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in family:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    proc.wait()
    deadline = time.monotonic() + KILL_WAIT_SECONDS  # SIGKILL is asynchronous: see them gone
    while any(is_running(pid) for pid in family) and time.monotonic() < deadline:
        time.sleep(0.01)


def _progress(workdir: str) -> dict[int, int]:
    return _per_rank(workdir, "progress-", lambda text: int(text or 0))


def _devices(workdir: str) -> dict[int, str]:
    return _per_rank(workdir, "device-", str.strip)


def _per_rank(workdir: str, prefix: str, parse) -> dict:
    """rank -> ``parse(text)`` of each ``<prefix><rank>`` file the child wrote (one being written is skipped)."""
    out = {}
    for name in os.listdir(workdir):
        if name.startswith(prefix):
            try:
                with open(os.path.join(workdir, name)) as fh:
                    out[int(name[len(prefix):])] = parse(fh.read())
            except (OSError, ValueError):
                continue
    return out


def _results(workdir: str) -> dict[int, dict]:
    out = {}
    for name in os.listdir(workdir):
        if name.startswith("result-") and name.endswith(".json"):
            with open(os.path.join(workdir, name)) as fh:
                data = json.load(fh)
            out[int(data["rank"])] = data
    return out


def _clean_output(log_path: str) -> str:
    """The captured output without torch.profiler's ``USDT:`` trace lines."""
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        return _USDT.sub("", fh.read())
