"""The ``memlint`` command (console script and ``python -m memlint``): hand ``memlint check`` to
the warm server when one is running or the user asked for one (:mod:`memlint.server_client`),
else run the command here (:mod:`memlint.cli`).
"""

from __future__ import annotations

import gc
import sys

from memlint.server_client import run_on_server, server_allowed, server_requested


def main() -> None:
    argv = sys.argv[1:]
    if argv and argv[0] == "check" and server_allowed():
        try:
            code = run_on_server(argv, start=server_requested)
        except KeyboardInterrupt:
            code = 130
        if code is not None:
            sys.exit(code)
    # Here, not at the top: a served run must not pay for click and the checker.
    from memlint.cli import main as cli_main

    try:
        cli_main()
    finally:
        # Python's exit runs full collections over every object still alive (libcst's node
        # classes, the rules, a parsed module: ~3% of a one-file run). Nothing memlint leaves
        # behind needs a finalizer run by them; frozen objects are skipped.
        gc.freeze()


if __name__ == "__main__":
    main()
