"""Suppression comments through the real CLI: ``# memlint: disable-file``, and ML903
(unused suppression, off by default, like ruff's RUF100)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main
from memlint.static import module_check
from memlint.static.source_check import check_source

SOURCE = """\
import torch

def train(model, loader, opt, crit):
    total = 0
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        total += loss{comment}
    return total

def evaluate(model, loader):
    model.eval()
    return [model(x) for x in loader]{eval_comment}
"""


def source(comment: str = "", eval_comment: str = "", header: str = "") -> str:
    return header + SOURCE.format(comment=comment, eval_comment=eval_comment)


def run(*args: str, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def codes(text: str, *args: str, tmp_path: Path) -> list[tuple[str, int]]:
    (tmp_path / "m.py").write_text(text)
    result = run(*args, "m.py", cwd=tmp_path)
    return [(d["code"], d["line"]) for d in json.loads(result.stdout)]


# ----- disable-file ----------------------------------------------------------------------------------
@pytest.mark.parametrize("header, expected", [
    ("# memlint: disable-file\n", []),
    ("# memlint: disable-file=ML101\n", [("ML201", 15)]),
    ("# memlint: disable-file=ML101, ML201\n", []),
    ("# memlint: disable-file=ML2\n", [("ML101", 10)]),
    ("s = '# memlint: disable-file'\n", [("ML101", 10), ("ML201", 15)]),  # in a string: no effect
])
def test_disable_file(tmp_path, header, expected):
    assert codes(source(header=header), tmp_path=tmp_path) == expected


def test_disable_file_anywhere_in_the_file(tmp_path):
    text = source() + "# memlint: disable-file=ML101\n"
    assert codes(text, tmp_path=tmp_path) == [("ML201", 14)]


def test_disable_file_exit_code_is_clean(tmp_path):
    (tmp_path / "m.py").write_text(source(header="# memlint: disable-file\n"))
    assert run("m.py", cwd=tmp_path).exit_code == 0


# ----- ML903 -----------------------------------------------------------------------------------------------
def test_ml903_is_off_by_default(tmp_path):
    assert codes(source("  # noqa: ML201"), tmp_path=tmp_path) == [("ML101", 9), ("ML201", 14)]


@pytest.mark.parametrize("comment, eval_comment, expected_903", [
    ("  # noqa: ML101", "", []),                          # used
    ("  # noqa: ML1", "", []),                            # a used prefix
    ("  # noqa", "", []),                                 # used blanket noqa
    ("  # noqa: ML201", "", [9]),                         # ML201 is not reported on line 9
    ("  # noqa: ML101, ML201", "", [9]),                  # one of two codes unused
    ("  # noqa: E501", "", []),                           # another tool's code
    ("  # noqa: ML101,E501", "", []),
    ("  # noqa: ML999", "", [9]),                         # unknown code: can never suppress anything
    ("  # memlint: disable=ML101", "  # memlint: disable", []),
    ("", "  # memlint: disable=ML101", [14]),
    ("  # noqa: ML201  # noqa: ML903", "", []),           # ML903 silenced on its own line
])
def test_ml903_unused_line_suppressions(tmp_path, comment, eval_comment, expected_903):
    found = codes(source(comment, eval_comment), "--extend-select", "ML903", tmp_path=tmp_path)
    assert [line for code, line in found if code == "ML903"] == expected_903, found


def test_ml903_bare_noqa_that_suppresses_nothing_is_left_alone(tmp_path):
    text = "import torch\nx = torch.zeros(3)  # noqa\n"
    assert codes(text, "--extend-select", "ML903", tmp_path=tmp_path) == []


def test_ml903_bare_memlint_disable_that_suppresses_nothing(tmp_path):
    text = "import torch\nx = torch.zeros(3)  # memlint: disable\n"
    assert codes(text, "--extend-select", "ML903", tmp_path=tmp_path) == [("ML903", 2)]


def test_ml903_file_wide(tmp_path):
    text = source(header="# memlint: disable-file=ML101,ML205\n")
    found = codes(text, "--extend-select", "ML903", tmp_path=tmp_path)
    assert ("ML903", 1) in found and ("ML201", 15) in found
    (tmp_path / "m.py").write_text(text)
    message = next(d["message"] for d in json.loads(run("--extend-select", "ML903", "m.py", cwd=tmp_path).stdout)
                   if d["code"] == "ML903")
    assert "ML205" in message and "ML101" not in message and "in this file" in message
    assert codes(source(header="# memlint: disable-file=ML903\n# noqa: ML205\n"),
                 "--extend-select", "ML903", tmp_path=tmp_path) == [("ML101", 11), ("ML201", 16)]


def test_ml903_only_judges_codes_checked_in_this_run(tmp_path):
    text = source("  # noqa: ML201")
    assert codes(text, "--select", "ML101,ML903", tmp_path=tmp_path) == [("ML101", 9)]
    assert codes(text, "--select", "ML201,ML903", tmp_path=tmp_path) == [("ML903", 9), ("ML201", 14)]


def test_ml903_in_a_file_without_other_findings(tmp_path):
    text = "import numpy as np\nx = np.zeros(3)  # noqa: ML101\n"
    found = codes(text, "--extend-select", "ML903", tmp_path=tmp_path)
    assert found == [("ML903", 2)]
    (tmp_path / "m.py").write_text(text)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--extend-select", "ML903", str(tmp_path / "m.py")])
    assert result.exit_code == 1
    assert ":2:18: ML903 unused suppression: ML101 is not reported on this line\n" in result.stdout
    assert "2 | x = np.zeros(3)  # noqa: ML101\n  |                  ^^^^^^^^^^^^^ info\n" in result.stdout
    assert "= help: remove it from the comment" in result.stdout


def test_ml903_columns_point_at_the_comment(tmp_path):
    text = "import torch\nx = 1  # keep  # noqa: ML101\n"
    (tmp_path / "m.py").write_text(text)
    data = json.loads(run("--extend-select", "ML903", "m.py", cwd=tmp_path).stdout)
    assert [(d["line"], d["column"], d["end_column"]) for d in data] == [(2, 16, 29)]


def test_ml903_does_not_parse_files_without_suppression_comments(monkeypatch):
    def no_parse(*args):
        raise AssertionError("parsed a file that cannot have findings")

    monkeypatch.setattr(module_check, "check_module", no_parse)
    rules = ["ML101", "ML201", "ML903"]
    assert check_source("import numpy as np\nx = np.zeros(3)\n", "m.py", rules) == []
    # only ML903 can report in this file: the comments are read, the file is not parsed by libcst
    found = check_source("import numpy as np\nx = np.zeros(3)  # noqa: ML101\n", "m.py", rules)
    assert [(f.code, f.line) for f in found] == [("ML903", 2)]
