"""Start-up of the ``memlint`` command: hand ``memlint check`` to a warm server, else run here.

A pre-commit hook checks one or two changed files per commit, and a fresh Python process
spends most of that time importing libcst (its ~200 node dataclasses cost 0.25-0.4 s on a
2-core machine, more than parsing and checking a 1,500-line file). So, like the Gradle
daemon or nailgun, ``memlint check`` keeps one warm process per user and interpreter (see
:mod:`memlint.server`) with libcst and every rule already imported. This module is the
client: it imports only the standard library, passes the server its argv, working folder,
environment and its own stdin/stdout/stderr (file descriptors, over a Unix socket), and
exits with the code the server's worker reports. The worker is a fresh ``fork`` of the
server per run, so a run there behaves exactly like a run here.

The server is used only when all of these hold; otherwise the command runs in this process:
- the command is ``check``, on a POSIX system that can pass file descriptors;
- ``MEMLINT_NO_SERVER`` is unset (or empty / ``0``), and ``CI`` is unset (or ``false`` /
  ``0``): a CI job runs once, so a server would only linger;
- the server folder (``$XDG_RUNTIME_DIR`` or ``/tmp``, then ``memlint-<uid>``) is a folder
  of this user that nobody else can open.

The first run that finds no server starts one in the background and checks its files
itself; later runs use it. The server stops after ``MEMLINT_SERVER_IDLE`` seconds (default
900) without a run, and at once when a module it loaded changes on disk (an upgrade).
"""

from __future__ import annotations

import os
import sys

IDLE_SECONDS_DEFAULT = 900
_OFF = ("", "0", "false", "no", "off")


def main() -> None:
    argv = sys.argv[1:]
    if server_wanted(argv):
        try:
            code = run_on_server(argv)
        except KeyboardInterrupt:
            code = 130
        if code is not None:
            sys.exit(code)
    from memlint.cli import main as cli_main

    cli_main()


def server_wanted(argv: list[str], environ: "os._Environ[str] | dict[str, str]" = os.environ) -> bool:
    if not argv or argv[0] != "check":
        return False
    if environ.get("MEMLINT_NO_SERVER", "").strip().lower() not in _OFF:
        return False
    if environ.get("CI", "").strip().lower() not in _OFF:
        return False
    if sys.platform == "win32" or not hasattr(os, "fork"):
        return False
    import socket

    return hasattr(socket, "AF_UNIX") and hasattr(socket, "send_fds")


def server_folder(environ: "os._Environ[str] | dict[str, str]" = os.environ) -> str | None:
    """This user's private folder for server sockets, created if missing; None if unsafe."""
    folder = environ.get("MEMLINT_SERVER_DIR")
    if not folder:
        base = environ.get("XDG_RUNTIME_DIR") or "/tmp"
        folder = os.path.join(base, f"memlint-{os.getuid()}")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None  # someone else's folder, or one others can reach: never trust its sockets
    return folder


def server_key() -> str:
    """One server per interpreter and memlint installation (version and location)."""
    import hashlib

    from memlint import __version__

    identity = "\0".join((sys.executable, os.path.dirname(os.path.abspath(__file__)), __version__))
    return hashlib.sha1(identity.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def socket_path(environ: "os._Environ[str] | dict[str, str]" = os.environ) -> str | None:
    folder = server_folder(environ)
    if folder is None:
        return None
    path = os.path.join(folder, f"{server_key()}.sock")
    return path if len(path.encode()) < 100 else None  # AF_UNIX paths are short (108 bytes)


def run_on_server(argv: list[str]) -> int | None:
    """Run ``memlint <argv>`` on the warm server: its exit code, or None to run here
    (no server, or it declined before running anything)."""
    import json
    import socket

    path = socket_path()
    if path is None:
        return None
    try:
        umask = os.umask(0o022)
        os.umask(umask)
        here = os.stat(".")
        streams = [[getattr(stream, "encoding", None), getattr(stream, "errors", None)]
                   for stream in (sys.stdin, sys.stdout, sys.stderr)]
        request = json.dumps({
            "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask,
            # The server must see the very same folder (not one of that name in another
            # container or mount namespace), and write text as this process would.
            "cwd_id": [here.st_dev, here.st_ino], "streams": streams,
        }).encode("utf-8", "surrogateescape")
    except (OSError, UnicodeError):
        return None
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(path)
        socket.send_fds(client, [len(request).to_bytes(8, "big")], [0, 1, 2])
        client.sendall(request)
        replies = client.makefile("rb")
        started = replies.readline()  # b"R <pid>\n" once the worker holds our stdio
    except OSError as exc:
        client.close()
        if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)):
            start_server(path)  # none is listening (or a dead one's socket is left)
        return None
    if not started.startswith(b"R "):
        client.close()
        return None  # the server declined (stopping, out of date): nothing ran, run here
    worker = int(started.split()[1])
    import signal

    def forward(signum, frame):  # Ctrl-C reaches this process; the worker must stop too
        try:
            os.kill(worker, signum)
        except OSError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    try:
        finished = replies.readline()
    except OSError:
        finished = b""
    if finished.startswith(b"X "):
        return int(finished.split()[1])
    sys.stderr.write(
        "memlint: error: the memlint server's worker ended without finishing this run; "
        "run it again with MEMLINT_NO_SERVER=1 to check in this process\n"
    )
    return 2


def start_server(path: str) -> None:
    """Start the server in the background (its own session, no terminal, stdio to
    /dev/null so a caller reading our output never waits for it)."""
    import subprocess

    idle = os.environ.get("MEMLINT_SERVER_IDLE", str(IDLE_SECONDS_DEFAULT))
    try:
        subprocess.Popen(
            [sys.executable, "-m", "memlint.server", path, idle],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
            # Its own private folder as working folder: ``-m`` puts the working folder first on
            # sys.path, and a project's files must never shadow the modules the server imports.
            cwd=os.path.dirname(path),
        )
    except OSError:
        pass
