"""``memlint check`` on bad inputs: every problem is reported, the other files are still
checked, the exit code is 2 when a file could not be checked (1 for findings alone), and
the checked code is never imported or run (issue 6)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

# A file with one ML101 finding on line 8, to prove neighbours of a broken file are still checked.
FINDING = """\
import torch

def train(model, loader, optimizer):
    losses = []
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        losses.append(loss)
        optimizer.step()
    return losses
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", "-j", "1", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.py").write_text(FINDING)
    return tmp_path


def assert_reported(output: str, path: str, text: str) -> None:
    lines = [line for line in output.splitlines() if line.startswith(path + ":")]
    assert any(" ML901 " in line and text in line for line in lines), output


def assert_neighbour_checked(output: str) -> None:
    assert "good.py:8:" in output and "ML101" in output, output


def test_clean_file_with_only_findings_exits_1(project):
    code, out, err = run(".")
    assert code == 1 and err == ""
    assert_neighbour_checked(out)


@pytest.mark.parametrize(
    "content, message, where",
    [
        ("import torch\ndef f(:\n    pass\n", "syntax error:", "bad.py:2:"),
        ("import torch\nprint 'python 2'\n", "syntax error:", "bad.py:2:"),
        ("import torch\nexec 'x = 1'\nraise ValueError, 'x'\n", "syntax error:", "bad.py:2:"),
    ],
    ids=["syntax-error", "python2-print", "python2-exec"],
)
def test_syntax_errors(project, content, message, where):
    (project / "bad.py").write_text(content)
    code, out, err = run(".")
    assert code == 2 and "Traceback" not in out + err
    assert_reported(out, "bad.py", message)
    assert any(line.startswith(where) for line in out.splitlines()), out
    assert_neighbour_checked(out)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00", "binary file"),
        (b"import torch\nname = '\xff\xfe caf\xe9'\n", "cannot decode as utf-8"),
        (b"# -*- coding: no-such-codec -*-\nimport torch\n", "cannot decode"),
        (b"\xef\xbb\xbf# coding: latin-1\nimport torch\n", "cannot decode"),
        (b"# coding: utf-8\nimport torch\nx = '\xe9'\n", "cannot decode as utf-8"),
    ],
    ids=["binary", "latin1-without-cookie", "unknown-cookie", "bom-with-other-cookie", "utf8-cookie-bad-bytes"],
)
def test_undecodable_files(project, data, message):
    (project / "bad.py").write_bytes(data)
    code, out, err = run(".")
    assert code == 2 and "Traceback" not in out + err
    assert_reported(out, "bad.py", message)
    assert_neighbour_checked(out)


def test_latin1_with_cookie_is_checked(project):
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + FINDING
    (project / "good.py").write_bytes(source.encode("latin-1"))
    code, out, _ = run(".")
    assert code == 1 and "good.py:10:" in out and "ML901" not in out, out


def test_bom_is_checked_with_right_lines(project):
    (project / "good.py").write_bytes(b"\xef\xbb\xbf" + FINDING.encode())
    code, out, _ = run(".")
    assert code == 1 and "good.py:8:" in out and "ML901" not in out, out
    (project / "good.py").write_bytes(b"\xef\xbb\xbf# -*- coding: utf-8 -*-\n" + FINDING.encode())
    code, out, _ = run(".")
    assert code == 1 and "good.py:9:" in out, out


def test_empty_and_blank_files(project):
    (project / "empty.py").write_bytes(b"")
    (project / "blank.py").write_bytes(b"\n\n   \n")
    (project / "comment.py").write_bytes(b"# import torch")
    code, out, _ = run(".")
    assert code == 1 and "ML901" not in out and "ML902" not in out
    assert "5 files checked" in out or "4 files checked" in out, out


def test_huge_file(project):
    # 200k lines, most in one string (a parse of 200k statements would take a minute here);
    # the finding after them must still carry the right line number.
    text = 'DATA = """\n' + "a line of text\n" * 200_000 + '"""\n' + FINDING
    (project / "huge.py").write_text(text)
    code, out, err = run(".")
    assert code == 1 and "ML901" not in out and "Traceback" not in out + err, out
    assert "huge.py:200010:" in out, out
    assert_neighbour_checked(out)


def test_deeply_nested_expression(project):
    (project / "deep.py").write_text("import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    (project / "deep_list.py").write_text("import torch\nx = " + "[" * 3000 + "]" * 3000 + "\n")
    code, out, err = run(".")
    assert code in (1, 2) and "Traceback" not in out + err
    assert "ML902" not in out, out
    assert_neighbour_checked(out)


def test_an_operator_chain_too_long_for_python_is_refused_without_libcst(project, monkeypatch):
    # libcst needs ~20 s for this line (quadratic in the chain); CPython refuses it outright,
    # so libcst must never be asked.
    import libcst

    real_parse = libcst.parse_module

    def parse_module(source, *args, **kwargs):
        assert " + a + a + a" not in source, "libcst was asked to parse the 6,000-term chain"
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", parse_module)
    (project / "chain.py").write_text("import torch\nx = " + " + ".join(["a"] * 6000) + "\n")
    code, out, err = run(".")
    assert code == 2 and "Traceback" not in out + err
    assert "chain.py:1:1: ML901" in out and "too deeply nested" in out, out
    assert_neighbour_checked(out)


def test_permission_denied(project, monkeypatch):
    # Tests run as root here, where chmod 000 stops nothing: refuse the open instead.
    (project / "secret.py").write_text(FINDING)
    real_open = os.open

    def fake_open(path, flags, *args, **kwargs):
        if os.fspath(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    code, out, err = run(".")
    assert code == 2 and "Traceback" not in out + err
    assert_reported(out, "secret.py", "cannot read: Permission denied")
    assert_neighbour_checked(out)


def test_fifo_and_directory_named_py(project):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(project / "pipe.py")
    (project / "folder.py").mkdir()
    (project / "folder.py" / "inner.py").write_text(FINDING)
    code, out, err = run(".")  # a FIFO opened for reading would block forever
    assert code == 2 and "Traceback" not in out + err
    assert_reported(out, "pipe.py", "not a regular file")
    assert "folder.py/inner.py:8:" in out.replace(os.sep, "/"), out
    code, out, _ = run("pipe.py", "good.py")
    assert code == 2
    assert_reported(out, "pipe.py", "not a regular file")
    assert_neighbour_checked(out)


def test_symlink_loops(project):
    os.symlink("loop.py", project / "loop.py")  # a file symlink pointing at itself
    (project / "pkg").mkdir()
    (project / "pkg" / "mod.py").write_text(FINDING)
    os.symlink("..", project / "pkg" / "up")  # a folder loop
    os.symlink("missing.py", project / "dangling.py")  # dangling: nothing to check, skipped
    code, out, err = run(".")
    assert code == 2 and "Traceback" not in out + err
    assert_reported(out, "loop.py", "cannot read")
    assert "pkg/mod.py:8:" in out.replace(os.sep, "/")
    assert "dangling.py" not in out
    assert_neighbour_checked(out)


def test_directory_vanishes_mid_run(project, monkeypatch):
    import shutil

    import memlint.static.runner as runner

    (project / "gone").mkdir()
    (project / "gone" / "a.py").write_text(FINDING)
    real_discover = runner.discover

    def discover_then_vanish(*args, **kwargs):
        found = real_discover(*args, **kwargs)
        shutil.rmtree(project / "gone")
        return found

    monkeypatch.setattr(runner, "discover", discover_then_vanish)
    code, out, err = run(".")
    assert code == 2 and "Traceback" not in out + err
    assert_reported(out, os.path.join("gone", "a.py"), "cannot read")
    assert_neighbour_checked(out)


def test_missing_path(project):
    code, out, _ = run("nowhere.py", "good.py")
    assert code == 2
    assert_reported(out, "nowhere.py", "no such file")
    assert_neighbour_checked(out)


def test_broken_notebook(project):
    if importlib.util.find_spec("memlint.static.notebook") is None:
        pytest.skip("the notebook reader is not there yet")
    (project / "broken.ipynb").write_text('{"cells": [ {"cell_type": "code", "source": ')
    (project / "wrong.ipynb").write_text('["not", "a", "notebook"]')
    code, out, err = run(".")
    assert code == 2 and "Traceback" not in out + err
    assert_reported(out, "broken.ipynb", "")
    assert_neighbour_checked(out)


def test_rule_crash_becomes_ml902_naming_the_rule(project, monkeypatch):
    import dataclasses

    from memlint.catalogue import BY_CODE
    from memlint.static.rules import rule_class

    rule = rule_class("ML201")

    def explode(self, node):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(rule, "visit_Call", explode, raising=False)
    monkeypatch.setitem(BY_CODE, "ML201", dataclasses.replace(BY_CODE["ML201"], triggers=()))  # run on every file
    (project / "other.py").write_text("x = 1\n")
    code, out, err = run(".")
    assert code == 2 and "Traceback" not in out + err
    crash = [line for line in out.splitlines() if " ML902 " in line]
    assert crash and all(line.startswith("good.py:") for line in crash), out
    assert "ML201" in crash[0] and "ZeroDivisionError" in crash[0] and "boom" in crash[0]
    assert "= help: a bug in memlint: please report it" in out and "--ignore ML201" in out
    assert_neighbour_checked(out)  # ML101 still checked the same file


def test_engine_crash_on_one_file_becomes_ml902(project, monkeypatch):
    import memlint.static.file_check as file_check

    real = file_check.check_source

    def crash_on_bad(source, path, *args, **kwargs):
        if path.endswith("bad.py"):
            raise KeyError("engine bug")
        return real(source, path, *args, **kwargs)

    monkeypatch.setattr(file_check, "check_source", crash_on_bad)
    (project / "bad.py").write_text(FINDING)
    code, out, err = run(".")
    assert code == 2 and "Traceback" not in out + err
    assert any(line.startswith("bad.py:") and " ML902 " in line for line in out.splitlines()), out
    assert_neighbour_checked(out)


# ----- never execute ---------------------------------------------------------------------------
# (behind a test the linter cannot decide: an unconditional raise would end the module's code
# for memlint too, and leave no finding to check for)
EXECUTED = """\
import pathlib
pathlib.Path({marker!r}).write_text("executed: {name}")
if __name__ != "memlint":
    raise SystemExit("{name} was executed by the linter")
"""


def test_checked_code_is_never_imported_or_run(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "executed.txt"
    names = ["conftest.py", "setup.py", "train.py", "torch.py", "click.py", "libcst.py", "json.py",
             "sitecustomize.py", "usercustomize.py", "__main__.py", "pkg/__init__.py", "pkg/conftest.py"]
    for name in names:
        path = project / name
        path.parent.mkdir(exist_ok=True)
        path.write_text("import torch\n" + EXECUTED.format(marker=str(marker), name=name) + FINDING)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.memlint]\nselect = ["ML1", "ML2"]\nper-file-ignores = {"setup.py" = ["ML2"]}\n'
    )
    (project / "setup.cfg").write_text("[options]\npackages = find:\n")
    # As a user runs it: the console script (no checked folder on sys.path), from that folder.
    command = [sys.executable, "-c", "import sys; del sys.path[0]; from memlint.cli import main; main()"]
    for args in (["check", "--no-cache", "."], ["check", "setup.py", "conftest.py"], ["check", "."]):
        done = subprocess.run(command + args, cwd=project, capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "ML101" in done.stdout and "Traceback" not in done.stderr
        assert not marker.exists(), marker.read_text()


# ----- fuzzing (bounded; benchmarks/fuzz.py runs the long version) -----------------------------
def test_no_exception_escapes_check_source_on_generated_programs():
    hypothesmith = pytest.importorskip("hypothesmith")
    import warnings

    from hypothesis import HealthCheck, given, settings

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        from fuzz import check, fuzz_rules
    finally:
        sys.path.pop(0)
    rules = fuzz_rules()

    @settings(max_examples=200, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_grammar())
    def run(source: str) -> None:
        findings = check(source, rules)  # raises if anything but ML901 escapes
        crashed = [f.message for f in findings if f.code == "ML902"]
        assert not crashed, (crashed, source)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # hypothesmith compiles odd programs
        run()


def test_syntax_newer_than_this_python_is_no_syntax_error(tmp_path):
    """A file in Python 3.12's syntax (``type`` statements, generic functions) checked by an older
    Python: libcst reads it, so it is checked, not reported as a syntax error."""
    import sys

    from memlint.static.file_check import check_file

    (tmp_path / "types.py").write_text("type FeatureDict = dict[str, int]\n\ndef first[T](xs: list[T]) -> T:\n"
                                       "    return xs[0]\n")
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    assert [f.code for f in check_file(str(tmp_path / "types.py"), ["ML101", "ML901"])] == []
    assert [f.code for f in check_file(str(tmp_path / "broken.py"), ["ML101", "ML901"])] == ["ML901"]
    assert sys.version_info >= (3, 10)
