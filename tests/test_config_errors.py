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
        ('[tool.memlint]\nselect = 3\n',
         ["pyproject.toml: [tool.memlint] select = 3: expected a list of strings", "got a number"]),
        ('[tool.memlint]\nselect = [1, 2]\n', ["select = [1, 2]: expected a list of strings", "got a list"]),
        ('[tool.memlint]\nexclude = ["data/[abc"]\n', ["exclude", "[abc"]),
        ('[tool.memlint]\nexclude = [""]\n', ["exclude", "not a glob"]),
        ('[tool.memlint]\nper-file-ignores = {"tests/[x" = ["ML1"]}\n', ["per-file-ignores"]),
        ('[tool.memlint]\nper-file-ignores = ["ML1"]\n', ["per-file-ignores"]),
        ('[tool]\nmemlint = 3\n', ["pyproject.toml: [tool] memlint = 3: expected a table"]),
        ('[tool.memlint]\nverify = 3\n', ["[tool.memlint] verify = 3: expected a table"]),
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


@pytest.mark.parametrize(
    "toml, expected",
    [
        # a string where a list is expected is refused, not read as a list of one
        ('[tool.memlint]\nselect = "ML1"\n',
         'pyproject.toml: [tool.memlint] select = "ML1": expected a list of strings, such as select = ["ML1"], '
         'got a string'),
        ('[tool.memlint]\nignore = "ML101,ML102"\n',
         '[tool.memlint] ignore = "ML101,ML102": expected a list of strings, such as ignore = ["ML1"], got a string'),
        ('[tool.memlint]\nexclude = "generated"\n', '[tool.memlint] exclude = "generated": expected a list of strings'),
        ('[tool.memlint]\nper-file-ignores = {"tests/*" = "ML201"}\n',
         '[tool.memlint.per-file-ignores] "tests/*" = "ML201": expected a list of codes, such as ["ML201"], '
         'got a string'),
        ('[tool.memlint]\nserver = "yes"\n', '[tool.memlint] server = "yes": expected true or false, got a string'),
        ('[tool.memlint.verify]\nsteps = "twenty"\n',
         'pyproject.toml: [tool.memlint.verify] steps = "twenty": expected a whole number of at least 2, '
         'got a string'),
        ('[tool.memlint.verify]\nsteps = 1\n', '[tool.memlint.verify] steps = 1: expected a whole number of at least 2'),
        ('[tool.memlint.verify]\nwarmup = 2.5\n', '[tool.memlint.verify] warmup = 2.5: expected a whole number'),
        ('[tool.memlint.verify]\nthreshold = "1KiB"\n',
         '[tool.memlint.verify] threshold = "1KiB": expected a number of bytes per step (at least 0), got a string'),
        ('[tool.memlint.verify]\ntimeout = true\n',
         '[tool.memlint.verify] timeout = true: expected a number of seconds above 0, got true/false'),
        ('[tool.memlint.verify]\ndevice = "gpu"\n',
         '[tool.memlint.verify] device = "gpu": expected one of "auto", "cpu", "cuda", got a string'),
        ('[tool.memlint.verify]\nstep-on = ["optimizer"]\n',
         '[tool.memlint.verify] step-on = ["optimizer"]: expected one of "optimizer", "dataloader", "module", '
         '"marker", got a list'),
        ('[tool.memlint.verify]\ngpu-memory = [24]\n', '[tool.memlint.verify] gpu-memory = [24]: expected a size'),
    ],
    ids=["select-string", "ignore-string", "exclude-string", "per-file-string", "server-string", "steps-string",
         "steps-too-few", "warmup-float", "threshold-string", "timeout-bool", "device-unknown", "step-on-list",
         "gpu-memory-list"],
)
def test_a_wrong_value_names_the_file_the_key_what_was_given_and_what_is_expected(project, toml, expected):
    (project / "pyproject.toml").write_text(toml)
    assert_one_line_error(run_in(project, "train.py"), expected)


def test_memlint_verify_reports_a_wrong_value_in_its_table_as_check_does(project):
    """verify reads [tool.memlint.verify] through the same loader: the same one line, exit 2,
    before any script is run (torch is not needed to say it)."""
    (project / "pyproject.toml").write_text('[tool.memlint.verify]\nsteps = "twenty"\n')
    result = CliRunner().invoke(main, ["verify", "train.py"], catch_exceptions=True)
    assert_one_line_error(result, 'pyproject.toml: [tool.memlint.verify] steps = "twenty": expected a whole number '
                                  'of at least 2, got a string')


def test_the_verify_schema_knows_the_choices_verify_offers():
    """config.py checks [tool.memlint.verify] without importing the verify half: its lists of
    choices must be verify's own."""
    from memlint.config import VERIFY_DEVICES, VERIFY_KEYS, VERIFY_STEP_ON
    from memlint.dynamic.options import CONFIG_FIELDS, DEVICES, STEP_ON_CHOICES

    assert VERIFY_DEVICES == DEVICES
    assert VERIFY_STEP_ON == STEP_ON_CHOICES
    assert VERIFY_KEYS == set(CONFIG_FIELDS)
