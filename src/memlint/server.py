"""The warm server behind ``memlint check``, for those who ask for it (the client and the
opt-in are :mod:`memlint.server_client`).

``python -m memlint.server SOCKET IDLE_SECONDS`` imports libcst, every rule and the report
formats once, then listens on ``SOCKET``. Each connection is one ``memlint check`` run: the
server forks a worker, which takes over the client's stdin/stdout/stderr (passed as file
descriptors), working folder, environment and argv, runs the ordinary CLI, and reports the
exit code. The server itself never runs a check, so one run cannot leak state into the next.

Lifetime: one server per socket (a lock file guards it); it stops after IDLE_SECONDS without
a connection, when its socket file is removed or replaced, or, before serving a run, when
any module file it loaded has changed on disk (memlint or libcst upgraded or edited), in
which case it declines the run (the client then checks in its own process) and exits.
Everything it does is written to ``SOCKET`` with ``.log`` instead of ``.sock``.
"""

from __future__ import annotations

import codecs
import fcntl
import io
import json
import os
import signal
import socket
import sys
import time
import traceback

from memlint.cli import main as cli_main
from memlint.static import module_check  # noqa: F401  (libcst and the engine, warm for every run)
from memlint.static.rules import all_rules

_MAX_REQUEST = 16 * 1024 * 1024


def _log(path: str, message: str) -> None:
    try:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} [{os.getpid()}] {message}\n")
    except OSError:
        pass


def _preload() -> None:
    """Import what any check may need (every rule; the CLI, libcst and the report formats are
    imported with this module), without running anything that depends on a folder."""
    all_rules()


def loaded_files() -> dict[str, int]:
    """The source files of every loaded module, with their modification times."""
    files = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not path:
            continue
        try:
            files[path] = os.stat(path).st_mtime_ns
        except OSError:
            continue
    return files


def changed_files(files: dict[str, int]) -> list[str]:
    changed = []
    for path, mtime in files.items():
        try:
            if os.stat(path).st_mtime_ns != mtime:
                changed.append(path)
        except OSError:
            changed.append(path)
    return changed


def _same_file(path: str, identity: tuple[int, int]) -> bool:
    try:
        info = os.stat(path)
    except OSError:
        return False
    return (info.st_dev, info.st_ino) == identity


def serve(path: str, idle_seconds: float) -> int:
    log_path = path[: -len(".sock")] + ".log" if path.endswith(".sock") else path + ".log"
    lock = open(path + ".lock", "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server holds this socket
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n")  # who to signal to stop it
    lock.flush()
    started = time.monotonic()
    try:
        open(log_path, "w").close()  # one log per server: it never grows past one lifetime
    except OSError:
        pass
    _preload()
    files = loaded_files()
    try:
        os.unlink(path)  # a socket left by a server that died: nobody is listening on it
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    listener.settimeout(min(idle_seconds, 30.0))
    identity = (os.stat(path).st_dev, os.stat(path).st_ino)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped by the kernel

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    _log(log_path, f"started in {time.monotonic() - started:.2f} s, python {sys.executable}, "
                   f"{len(files)} module files watched, idle limit {idle_seconds:g} s")
    last_run = time.monotonic()
    reason = "idle"
    try:
        while True:
            try:
                connection, _ = listener.accept()
            except socket.timeout:
                if not _same_file(path, identity):
                    reason = "its socket file was removed or replaced"
                    break
                if time.monotonic() - last_run >= idle_seconds:
                    break
                continue
            last_run = time.monotonic()
            changed = changed_files(files)
            if changed:
                connection.close()  # the client checks in its own process
                reason = f"a loaded module changed on disk ({changed[0]})"
                break
            worker = os.fork()
            if worker == 0:
                listener.close()
                lock.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _work(connection, log_path)  # never returns
            connection.close()
    except SystemExit:
        reason = "stopped by SIGTERM"
    finally:
        if _same_file(path, identity):
            try:
                os.unlink(path)
            except OSError:
                pass
        _log(log_path, f"stopping: {reason}")
    return 0


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _flags, _address = socket.recv_fds(connection, 8, 3)
    while len(head) < 8:
        more = connection.recv(8 - len(head))
        if not more:
            raise OSError("short request")
        head += more
    size = int.from_bytes(head, "big")
    if size > _MAX_REQUEST or len(fds) != 3:
        raise OSError("bad request")
    body = bytearray()
    while len(body) < size:
        more = connection.recv(min(1 << 20, size - len(body)))
        if not more:
            raise OSError("short request")
        body += more
    return json.loads(body.decode("utf-8", "surrogateescape")), fds


def _adopt_stdio(fds: list[int], streams: list) -> None:
    """Make the client's stdin/stdout/stderr this process's, with the client's encodings."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)

    def text_stream(fd: int, mode: str) -> io.TextIOWrapper:
        encoding, errors = (list(streams[fd]) + [None, None])[:2]
        try:
            codecs.lookup(encoding or "")
        except LookupError:
            encoding = "utf-8"
        raw = io.FileIO(fd, mode, closefd=False)
        interactive = raw.isatty()
        buffered = io.BufferedWriter(raw) if mode == "w" else io.BufferedReader(raw)
        return io.TextIOWrapper(buffered, encoding=encoding, errors=errors or "strict",
                                line_buffering=interactive or fd == 2, write_through=fd == 2)

    sys.stdin = text_stream(0, "r")
    sys.stdout = text_stream(1, "w")
    sys.stderr = text_stream(2, "w")


def _work(connection: socket.socket, log_path: str) -> None:
    """The forked worker: one ``memlint`` run with the client's stdio, folder and env."""
    code = 2
    try:
        try:
            request, fds = _receive(connection)
            argv = [str(arg) for arg in request["argv"]]
            os.chdir(request["cwd"])
            here = os.stat(".")
            if [here.st_dev, here.st_ino] != request["cwd_id"]:
                raise OSError("the client's folder is not this one (another mount namespace?)")
            os.umask(int(request["umask"]))
            os.environ.clear()
            os.environ.update({str(k): str(v) for k, v in request["env"].items()})
            _adopt_stdio(fds, request["streams"])
            connection.sendall(b"R %d\n" % os.getpid())
        except Exception as exc:  # declined before anything ran: the client runs it itself
            _log(log_path, f"declined a run: {type(exc).__name__}: {exc}")
            os._exit(0)
        _log(log_path, "run: memlint " + " ".join(argv))
        sys.argv = ["memlint", *argv]
        try:
            cli_main(args=argv, prog_name="memlint")
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            code = 130
        except BaseException:
            traceback.print_exc()
            code = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        connection.sendall(b"X %d\n" % code)
    finally:
        os._exit(0)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.stderr.write("usage: python -m memlint.server SOCKET IDLE_SECONDS\n")
        sys.exit(2)
    try:
        idle = max(1.0, float(sys.argv[2]))
    except ValueError:
        idle = 900.0
    sys.exit(serve(sys.argv[1], idle))
