"""The warm server behind `memlint check` (memlint.server_client / memlint.server): a served
run prints, writes and exits exactly as a run in the client's own process would, and the
server starts only when asked, declines and stops as documented."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from memlint import server, server_client

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

pytestmark = pytest.mark.skipif(not hasattr(socket, "send_fds") or sys.platform == "win32",
                                reason="the server needs Unix sockets that pass file descriptors")


class Servers:
    """A private server folder, the environments to run memlint served or local, and cleanup."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="mls-"))  # short: socket paths are limited
        os.chmod(self.folder, 0o700)
        # As a user's shell has it: nothing asks for a server, nothing turns it off.
        self.plain_env = {k: v for k, v in os.environ.items()
                          if k not in ("MEMLINT_NO_SERVER", "MEMLINT_SERVER", "CI")}
        self.plain_env["MEMLINT_SERVER_DIR"] = str(self.folder)
        self.plain_env["MEMLINT_SERVER_IDLE"] = "60"
        self.env = dict(self.plain_env, MEMLINT_SERVER="1")  # the user asked for the server
        self.local_env = dict(self.plain_env, MEMLINT_NO_SERVER="1")

    def run(self, args, cwd, served=True, input=None, env=None):
        env = env if env is not None else self.env if served else self.local_env
        return subprocess.run([sys.executable, "-m", "memlint", *args], cwd=cwd, capture_output=True,
                              text=True, env=env, input=input, timeout=120)

    def logs(self) -> str:
        return "".join(p.read_text() for p in self.folder.glob("*.log"))

    def socket(self) -> Path | None:
        found = list(self.folder.glob("*.sock"))
        return found[0] if found else None

    def wait_until_listening(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            path = self.socket()
            if path is not None and stat.S_ISSOCK(os.lstat(path).st_mode) and "started" in self.logs():
                return
            time.sleep(0.05)
        raise AssertionError(f"no server started; log:\n{self.logs()}")

    def start(self, cwd) -> None:
        self.run(["check", "--select", "ML203", str(FIXTURES / "ML203_ddp_resume.py")], cwd)
        self.wait_until_listening()

    def stop(self) -> None:
        for lock in self.folder.glob("*.lock"):
            try:
                os.kill(int(lock.read_text().split()[0]), signal.SIGTERM)
            except (OSError, ValueError, IndexError):
                pass
        time.sleep(0.2)
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def servers():
    s = Servers()
    yield s
    s.stop()


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(FIXTURES, folder / "src", ignore=shutil.ignore_patterns("verify"))
    return folder


def served_runs(servers: Servers) -> int:
    return servers.logs().count("run: memlint")


@pytest.mark.parametrize("args", [
    ["check", "src"],
    ["check", "--format", "json", "src"],
    ["check", "--statistics", "src"],
    ["check", "--select", "ML2", "--no-cache", "src"],
    ["check", "src/ML201_eval_without_no_grad.py", "-j", "1"],
    ["check", "--select", "ML999", "src"],  # a usage error: exit 2 and a message
    ["check", "src/ML101_clean_train.py"],
    ["check", "--diff", "src/ML101_train_loss_accumulation.py"],
])
def test_a_served_run_prints_and_exits_like_a_local_one(servers, project, args):
    servers.start(project)
    before = served_runs(servers)
    local = servers.run(args, project, served=False)
    served = servers.run(args, project)
    assert served_runs(servers) == before + 1, servers.logs()
    assert (served.returncode, served.stdout, served.stderr) == (local.returncode, local.stdout, local.stderr)


def test_a_served_fix_writes_the_same_files(servers, tmp_path):
    for name in ("local", "served"):
        shutil.copytree(FIXTURES, tmp_path / name, ignore=shutil.ignore_patterns("verify"))
    servers.start(tmp_path)
    local = servers.run(["check", "--fix", "--unsafe-fixes", "."], tmp_path / "local", served=False)
    served = servers.run(["check", "--fix", "--unsafe-fixes", "."], tmp_path / "served")
    assert "run: memlint check --fix" in servers.logs()
    assert (served.returncode, served.stdout) == (local.returncode, local.stdout)
    for path in (tmp_path / "local").rglob("*.py"):
        assert (tmp_path / "served" / path.relative_to(tmp_path / "local")).read_text() == path.read_text()
    assert "[*]" not in served.stdout or "--unsafe-fixes" in served.stdout


def test_a_served_run_reads_the_config_of_its_own_folder(servers, project, tmp_path):
    servers.start(tmp_path)
    (project / "pyproject.toml").write_text('[tool.memlint]\nselect = ["ML203"]\n')
    served = servers.run(["check", "--format", "json", "src"], project)
    assert {f["code"] for f in json.loads(served.stdout)} == {"ML203"}
    (project / "pyproject.toml").write_text('[tool.memlint]\nselect = ["ML9"]\nbogus = 1\n')
    served = servers.run(["check", "src"], project)
    assert served.returncode == 2 and "bogus" in served.stderr


def test_the_first_run_checks_itself_and_starts_the_server(servers, project):
    assert servers.socket() is None
    first = servers.run(["check", "src"], project)
    local = servers.run(["check", "src"], project, served=False)
    assert (first.returncode, first.stdout) == (local.returncode, local.stdout)
    servers.wait_until_listening()
    assert served_runs(servers) == 0  # the first run did not wait for the server


def test_no_server_starts_unless_asked(servers, project):
    for _ in range(2):
        done = servers.run(["check", "src"], project, env=servers.plain_env)
        assert done.returncode == 1 and "ML101" in done.stdout
    time.sleep(1.0)
    assert servers.socket() is None and servers.logs() == ""
    assert not server_client.server_requested(servers.plain_env, str(project))


def test_server_true_in_the_configuration_starts_it(servers, project):
    (project / "pyproject.toml").write_text("[tool.memlint]\nserver = true\n")
    assert server_client.server_requested(servers.plain_env, str(project))
    first = servers.run(["check", "src"], project, env=servers.plain_env)
    local = servers.run(["check", "src"], project, served=False)
    assert (first.returncode, first.stdout) == (local.returncode, local.stdout)
    servers.wait_until_listening()
    (project / "pyproject.toml").write_text("[tool.memlint]\nserver = 1\n")
    done = servers.run(["check", "src"], project, served=False)
    assert done.returncode == 2 and "[tool.memlint] server = 1: expected true or false, got a number" in done.stderr


def test_a_started_server_serves_runs_that_did_not_ask(servers, project):
    started = servers.run(["server", "start"], project, env=servers.plain_env)
    assert "started the memlint server" in started.stdout, started.stdout + started.stderr
    servers.wait_until_listening()
    done = servers.run(["check", "src"], project, env=servers.plain_env)
    assert done.returncode == 1 and served_runs(servers) == 1
    again = servers.run(["server", "start"], project, env=servers.plain_env)
    assert "already running" in again.stdout


def test_no_server_in_ci_or_when_turned_off(servers, project):
    for extra in ({"CI": "true"}, {"MEMLINT_NO_SERVER": "1"}):
        env = dict(servers.env, **extra)  # asked for, and yet not used
        done = subprocess.run([sys.executable, "-m", "memlint", "check", "src"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1
        refused = servers.run(["server", "start"], project, env=env)
        assert refused.returncode == 2 and "not used here" in refused.stderr
    time.sleep(1.0)
    assert servers.socket() is None and servers.logs() == ""
    assert not server_client.server_allowed({"CI": "1"})
    assert server_client.server_allowed({"CI": "false"})


def test_a_dead_servers_socket_file_is_replaced(servers, project):
    path = server_client.socket_path(servers.env)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)  # a socket file nobody listens on, as a killed server leaves it
    dead.close()
    first = servers.run(["check", "src"], project)
    local = servers.run(["check", "src"], project, served=False)
    assert (first.returncode, first.stdout) == (local.returncode, local.stdout)
    servers.wait_until_listening()
    servers.run(["check", "src"], project)
    assert served_runs(servers) == 1


def test_the_server_stops_when_idle(servers, project):
    servers.env["MEMLINT_SERVER_IDLE"] = "1"
    servers.run(["check", "src"], project)  # starts it; it may be gone again before we look
    deadline = time.monotonic() + 60
    while "stopping: idle" not in servers.logs() and time.monotonic() < deadline:
        time.sleep(0.1)
    log = servers.logs()
    assert "started" in log and "stopping: idle" in log, log
    assert servers.socket() is None


def test_only_one_server_per_socket(servers, project):
    procs = [subprocess.Popen([sys.executable, "-m", "memlint", "check", "src"], cwd=project, env=servers.env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(3)]
    for proc in procs:
        proc.wait(timeout=120)
    servers.wait_until_listening()
    time.sleep(1.0)
    assert servers.logs().count("started") == 1


def test_a_folder_others_can_open_is_not_used(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    assert server_client.server_folder({"MEMLINT_SERVER_DIR": str(shared)}) is None
    private = tmp_path / "private"
    assert server_client.server_folder({"MEMLINT_SERVER_DIR": str(private)}) == str(private)
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o700


def test_a_changed_module_file_is_noticed(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("x = 1\n")
    files = {str(module): os.stat(module).st_mtime_ns}
    assert server.changed_files(files) == []
    os.utime(module, ns=(0, os.stat(module).st_mtime_ns + 10**9))
    assert server.changed_files(files) == [str(module)]
    module.unlink()
    assert server.changed_files(files) == [str(module)]


def test_a_served_run_writes_text_in_the_clients_encoding(servers, project):
    (project / "src" / "naïve_ütf.py").write_text(
        (FIXTURES / "ML101_train_loss_accumulation.py").read_text(), encoding="utf-8")
    servers.start(project)
    for extra in ({"PYTHONIOENCODING": "latin-1"}, {"PYTHONIOENCODING": "ascii:backslashreplace"}):
        env_local = dict(servers.local_env, **extra)
        env_served = dict(servers.env, **extra)
        args = [sys.executable, "-m", "memlint", "check", "src"]
        local = subprocess.run(args, cwd=project, env=env_local, capture_output=True, timeout=120)
        served = subprocess.run(args, cwd=project, env=env_served, capture_output=True, timeout=120)
        assert (served.returncode, served.stdout, served.stderr) == (local.returncode, local.stdout, local.stderr)
    assert served_runs(servers) == 2


def test_server_status_and_stop(servers, project):
    def command(*args):
        return subprocess.run([sys.executable, "-m", "memlint", "server", *args], cwd=project, env=servers.env,
                              capture_output=True, text=True, timeout=60)

    assert "no memlint server is running" in command().stdout
    servers.start(project)
    status = command("status").stdout
    assert "memlint server running: pid" in status and str(servers.folder) in status
    assert "stopped the memlint server" in command("stop").stdout
    deadline = time.monotonic() + 30
    while servers.socket() is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert servers.socket() is None and "stopped by SIGTERM" in servers.logs()
    assert "no memlint server is running" in command("stop").stdout
