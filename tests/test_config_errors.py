"""A bad ``[tool.memlint]`` or command line is one clear line on stderr and exit code 2,
never a traceback (issue 6)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from memlint.cli import main


def run_in(folder, *args):
    result = CliRunner().invoke(main, ["check", "--no-cache", "-j", "1", *args], catch_exceptions=True)
    return result


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(3)\n")
    return tmp_path


def assert_one_line_error(result, *expected: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    for text in expected:
        assert text in lines[0], lines[0]


@pytest.mark.parametrize(
    "toml, expected",
    [
        ('[tool.memlint\nselect = ["ML1"]\n', ["pyproject.toml", "invalid TOML"]),
        ('[tool.memlint]\nselect = ["ML1"\n', ["invalid TOML"]),
        ('[tool.memlint]\nselect = "ML1"\nselect = "ML2"\n', ["invalid TOML"]),
        ('[tool.memlint]\nslect = ["ML1"]\n', ["unknown key", "slect"]),
        ('[tool.memlint]\nselect = ["ML1"]\n[tool.memlint.verify]\nstepz = 3\n', ["unknown key", "stepz"]),
        ('[tool.memlint]\nselect = ["ML999"]\n', ["unknown rule code", "ML999"]),
        ('[tool.memlint]\nignore = ["XYZ"]\n', ["unknown rule code", "XYZ"]),
        ('[tool.memlint]\nextend-select = ["ML9999"]\n', ["unknown rule code"]),
        ('[tool.memlint]\nper-file-ignores = {"tests/*" = ["NOPE1"]}\n', ["unknown rule code", "NOPE1"]),
        ('[tool.memlint]\nselect = 3\n', ["select", "list of strings"]),
        ('[tool.memlint]\nselect = [1, 2]\n', ["select"]),
        ('[tool.memlint]\nexclude = ["data/[abc"]\n', ["exclude", "[abc"]),
        ('[tool.memlint]\nexclude = [""]\n', ["exclude", "not a glob"]),
        ('[tool.memlint]\nper-file-ignores = {"tests/[x" = ["ML1"]}\n', ["per-file-ignores"]),
        ('[tool.memlint]\nper-file-ignores = ["ML1"]\n', ["per-file-ignores"]),
        ('[tool]\nmemlint = 3\n', ["[tool.memlint] must be a table"]),
        ('[tool.memlint]\nverify = 3\n', ["verify"]),
    ],
    ids=["bad-header", "unclosed-list", "duplicate-key", "unknown-key", "unknown-verify-key",
         "unknown-select", "unknown-ignore", "unknown-extend-select", "unknown-per-file-code",
         "select-not-list", "select-not-strings", "unbalanced-glob", "empty-glob", "bad-per-file-glob",
         "per-file-not-table", "memlint-not-table", "verify-not-table"],
)
def test_bad_pyproject(project, toml, expected):
    (project / "pyproject.toml").write_text(toml)
    assert_one_line_error(run_in(project, "train.py"), *expected)


def test_undecodable_pyproject(project):
    (project / "pyproject.toml").write_bytes(b"[tool.memlint]\nselect = ['\xff']\n")
    assert_one_line_error(run_in(project, "train.py"), "pyproject.toml")


def test_pyproject_found_from_a_subfolder(project, monkeypatch):
    (project / "pyproject.toml").write_text('[tool.memlint]\nselect = ["ML999"]\n')
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")
    assert_one_line_error(run_in(project, "."), "ML999")


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--select", "ML999"], ["--select", "ML999"]),
        (["--ignore", "FOO"], ["--ignore", "FOO"]),
        (["--extend-select", "ML1,NOPE"], ["NOPE"]),
    ],
)
def test_bad_command_line_codes(project, args, expected):
    assert_one_line_error(run_in(project, *args, "train.py"), *expected)


def test_config_option_pointing_at_bad_files(project):
    (project / "bad.toml").write_text("[tool.memlint\n")
    assert_one_line_error(run_in(project, "--config", "bad.toml", "train.py"), "invalid TOML")


def test_good_config_still_works(project):
    (project / "pyproject.toml").write_text(
        '[tool.memlint]\nselect = ["ML1", "ML2"]\nignore = ["ML201"]\nexclude = ["data/*"]\n'
        'per-file-ignores = {"tests/*" = ["ML1"]}\n\n[tool.memlint.verify]\nsteps = 20\n'
    )
    result = run_in(project, ".")
    assert result.exit_code == 0, result.output
