"""The client side of the warm server (:mod:`memlint.server`): find this user's server, hand
it a ``memlint check`` run, start one when asked.

A fresh Python process spends more time importing libcst (0.25-0.4 s on a 2-core machine)
than parsing and checking a 1,500-line file. For large repositories and editors, like the
Gradle daemon or nailgun, ``memlint check`` can use one warm process per user and interpreter
with libcst and every rule already imported. The client passes the server its argv, working folder, environment and its own
stdin/stdout/stderr (file descriptors, over a Unix socket), and exits with the code the
server's worker reports. The worker is a fresh ``fork`` of the server per run, so a run there
behaves exactly like a run here.

The server is **opt-in**: nothing starts it unless the user asks, with ``memlint server
start``, ``MEMLINT_SERVER=1``, or ``server = true`` in ``[tool.memlint]`` (linters do not
leave processes behind unasked, and a CI system that does not set ``CI`` would collect
them). A running server is used by every ``memlint check`` of this user and interpreter, when:
- the command is ``check``, on a POSIX system that can pass file descriptors;
- ``MEMLINT_NO_SERVER`` is unset (or empty / ``0``), and ``CI`` is unset (or ``false`` / ``0``);
- the server folder (``$XDG_RUNTIME_DIR`` or ``/tmp``, then ``memlint-<uid>``) is a folder
  of this user that nobody else can open.

A run that asked for a server and finds none starts one in the background and checks its
files itself; later runs use it. The server stops after ``MEMLINT_SERVER_IDLE`` seconds
(default 900) without a run, and at once when a module it loaded changes on disk (an upgrade).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from typing import Callable

from memlint.config import ConfigError, server_in_config
from memlint.version import __version__

IDLE_SECONDS_DEFAULT = 900
_OFF = ("", "0", "false", "no", "off")


def server_requested(environ: "os._Environ[str] | dict[str, str]" = os.environ, folder: str = ".") -> bool:
    """Did the user ask for the warm server (``MEMLINT_SERVER=1``, or ``server = true`` in the
    ``[tool.memlint]`` that governs ``folder``)?"""
    if environ.get("MEMLINT_SERVER", "").strip().lower() not in _OFF:
        return True
    try:
        return server_in_config(folder)
    except ConfigError:
        return False  # the run itself reports the broken configuration


def server_allowed(environ: "os._Environ[str] | dict[str, str]" = os.environ) -> bool:
    """May ``memlint check`` use a server here (not in CI, not turned off, Unix sockets)?"""
    if environ.get("MEMLINT_NO_SERVER", "").strip().lower() not in _OFF:
        return False
    if environ.get("CI", "").strip().lower() not in _OFF:
        return False
    # Unix sockets that pass file descriptors (socket.send_fds: every POSIX Python >= 3.9)
    return sys.platform != "win32" and hasattr(os, "fork")


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
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None  # someone else's folder, or one others can reach: never trust its sockets
    return folder


def server_key() -> str:
    """One server per interpreter and memlint installation (version and location)."""
    identity = "\0".join((sys.executable, os.path.dirname(os.path.abspath(__file__)), __version__))
    return hashlib.sha1(identity.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def socket_path(environ: "os._Environ[str] | dict[str, str]" = os.environ) -> str | None:
    folder = server_folder(environ)
    if folder is None:
        return None
    path = os.path.join(folder, f"{server_key()}.sock")
    return path if len(path.encode()) < 100 else None  # AF_UNIX paths are short (108 bytes)


def run_on_server(argv: list[str], start: Callable[[], bool] = lambda: False) -> int | None:
    """Run ``memlint <argv>`` on the warm server: its exit code, or None to run here (no
    server, or it declined before running anything). When none is listening and ``start()``
    says the user asked for one, a server is started in the background."""
    path = socket_path()
    if path is None:
        return None
    if not os.path.exists(path):  # no server, as in most runs: nothing more to import or try
        if start():
            start_server(path)
        return None
    # sockets only when a server is there: a run without one does not pay for them
    import signal
    import socket

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
        if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)) and start():
            start_server(path)  # none is listening (or a dead one's socket is left)
        return None
    if not started.startswith(b"R "):
        client.close()
        return None  # the server declined (stopping, out of date): nothing ran, run here
    worker = int(started.split()[1])

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
    import subprocess  # only to start a server, which the user asked for
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
