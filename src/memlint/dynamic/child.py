"""Entry point of the child process: ``python -m memlint.dynamic.child``.

Runs the user's script (``runpy``, ``__name__ == "__main__"``, its folder on
``sys.path``, its own argv) under a :class:`memlint.dynamic.runtime.Session`.
The configuration comes as a JSON file named by ``MEMLINT_VERIFY_CONFIG`` so that
it passes unchanged through ``torch.distributed.run`` to every rank.

Kept separate from :mod:`memlint.dynamic.runtime` so that the runtime is
imported under its own name: ``memlint.step()`` looks it up in ``sys.modules``.
"""

from __future__ import annotations

import faulthandler
import json
import os
import runpy
import sys
import traceback

CONFIG_ENV = "MEMLINT_VERIFY_CONFIG"
TRACEBACK_FRAMES = 8


def _run_target(config: dict) -> None:
    args = list(config.get("args", []))
    if config.get("module"):
        sys.path.insert(0, os.getcwd())
        sys.argv = [config["module"], *args]
        runpy.run_module(config["module"], run_name="__main__", alter_sys=True)
    else:
        script = os.path.abspath(config["script"])
        sys.path.insert(0, os.path.dirname(script))
        sys.argv = [script, *args]
        runpy.run_path(script, run_name="__main__")


def user_traceback(exc: BaseException, is_user) -> str:
    """The traceback from the first frame of the user's code, last frames only."""
    frames = traceback.extract_tb(exc.__traceback__)
    first = next((i for i, f in enumerate(frames) if is_user(f.filename)), 0)
    frames = frames[first:][-TRACEBACK_FRAMES:]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "".join(lines).rstrip("\n")


def headline(exc: BaseException) -> str:
    """``ValueError: the first line of the message``, as a traceback's last line would start."""
    name = type(exc).__qualname__
    if type(exc).__module__ not in ("builtins", "__main__"):
        name = f"{type(exc).__module__}.{name}"
    lines = str(exc).strip().splitlines()
    return f"{name}: {lines[0]}" if lines else name


def _failed_to_start(config: dict, rank: int, exc: BaseException) -> None:
    """memlint's own start failed (torch could not be imported, say): leave a result that says so."""
    data = {"rank": rank, "status": "raised", "stage": "start", "step": 0, "device": None, "samples": [],
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip("\n"),
            "headline": headline(exc)}
    path = os.path.join(config["result_dir"], f"result-{rank}.json")
    with open(path, "w") as fh:
        json.dump(data, fh)


def main() -> None:
    faulthandler.enable()  # a segfault still leaves the Python stack in the captured output
    with open(os.environ[CONFIG_ENV]) as fh:
        config = json.load(fh)
    rank = int(os.environ.get("RANK", "0"))
    try:
        import memlint.dynamic.runtime as runtime  # torch: imported once the crash handler is on

        session = runtime.start_session(config, rank)
    except Exception as exc:  # reported by the parent, with its cause
        _failed_to_start(config, rank, exc)
        return
    if session.device_error:
        session.record_end("raised", traceback=session.device_error, headline=session.device_error)
        return
    try:
        _run_target(config)
    except runtime.StopVerify:
        pass
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) or exc.code is None else 1
        session.record_end("exited", exit_code=code or 0)
    except BaseException as exc:  # the user's error, reported by the parent
        session.record_end("raised", traceback=user_traceback(exc, session.is_user), headline=headline(exc))
    else:
        session.record_end("finished")
    sys.stdout.flush()
    sys.stderr.flush()


if __name__ == "__main__":
    main()
