"""Notebooks through the real CLI: code cells checked as one module, magics blanked
without moving positions, findings at ``path:cell N:line:col``, broken notebooks as ML901."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main
from memlint.static.notebook import blank_magics

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["check", "--no-cache", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def code(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": source.splitlines(keepends=True)}


def markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def notebook(*cells: dict, language: str = "python") -> str:
    return json.dumps({
        "cells": list(cells),
        "metadata": {"kernelspec": {"display_name": "k", "language": language, "name": "k"}},
        "nbformat": 4, "nbformat_minor": 5,
    }, indent=1)


TRAINING = [
    markdown("# Training\nSome prose with `total += loss`.\n"),
    code("%matplotlib inline\n!pip install -q torch\nimport torch\nfrom torch import nn\n"),
    code("model = nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nlosses = []\n"),
    code(
        "%%time\n"
        "for step in range(10):\n"
        "    x = torch.randn(8, 4)\n"
        "    loss = model(x).pow(2).mean()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    %time opt.step()\n"
        "    files = !ls\n"
        "    losses.append(loss)"  # no trailing newline on the last line of a cell
    ),
    code("%%bash\nfor f in *; do echo $f; done\n"),
    code("model?\nmodel.eval()\npreds = model(torch.randn(2, 4))\n"),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.ipynb").write_text(notebook(*TRAINING))
    return tmp_path


def test_findings_report_cell_and_line_in_text(project):
    result = run("train.ipynb", "--format", "concise", cwd=project)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("train.ipynb:cell 4:9:5: ML101 ")  # losses.append(loss), the cell's 9th line
    assert lines[1].startswith("train.ipynb:cell 6:3:9: ML201 ")  # model(...) in the 6th cell (markdown counts)
    assert "Found 2 problems" in lines[-2] and "[*] 2 fixable" in lines[-1]


def test_findings_report_cell_in_json(project):
    data = json.loads(run("--format", "json", "train.ipynb", cwd=project).stdout)
    assert [(d["code"], d["cell"], d["line"], d["column"]) for d in data] == [
        ("ML101", 4, 9, 5), ("ML201", 6, 3, 9)]
    assert data[0]["end_line"] == 9 and data[0]["end_column"] == 24
    # fixes are positioned in the cell, like the finding
    assert data[0]["fix"]["edits"] == [{"line": 9, "column": 19, "end_line": 9, "end_column": 23,
                                        "content": "loss.detach()"}]
    assert data[1]["fix"]["edits"][0]["line"] == 3


def test_fix_rewrites_only_the_fixed_cells(project):
    before = json.loads((project / "train.ipynb").read_text())
    result = run("--fix", "--unsafe-fixes", "train.ipynb", cwd=project)
    assert result.exit_code == 0, result.output
    assert "Fixed 2 problems in 1 file" in result.stderr
    text = (project / "train.ipynb").read_text()
    after = json.loads(text)
    assert text == json.dumps(after, indent=1)  # written as it was laid out
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [3, 5]
    cell4, cell6 = "".join(after["cells"][3]["source"]), "".join(after["cells"][5]["source"])
    assert cell4 == "".join(before["cells"][3]["source"]).replace("losses.append(loss)", "losses.append(loss.detach())")
    assert "%%time\n" in cell4 and "    %time opt.step()\n" in cell4 and "files = !ls" in cell4  # magics kept
    assert cell6 == "model?\nmodel.eval()\nwith torch.no_grad():\n    preds = model(torch.randn(2, 4))\n"
    assert isinstance(after["cells"][3]["source"], list)
    assert run("train.ipynb", cwd=project).exit_code == 0


def test_diff_shows_cells_and_writes_nothing(project):
    before = (project / "train.ipynb").read_bytes()
    result = run("--diff", "--unsafe-fixes", "train.ipynb", cwd=project)
    assert result.exit_code == 1
    assert "--- a/train.ipynb:cell 4" in result.stdout and "+    losses.append(loss.detach())" in result.stdout
    assert "+++ b/train.ipynb:cell 6" in result.stdout
    assert (project / "train.ipynb").read_bytes() == before


def test_a_notebook_laid_out_otherwise_is_not_reformatted(project):
    document = json.loads((project / "train.ipynb").read_text())
    odd = json.dumps(document, indent=3, separators=(",", " : "))
    (project / "train.ipynb").write_text(odd)
    result = run("--fix", "--unsafe-fixes", "train.ipynb", cwd=project)
    assert result.exit_code == 1
    assert "left train.ipynb unfixed" in result.stderr and "reformat" in result.stderr
    assert (project / "train.ipynb").read_text() == odd


def test_no_fix_reaches_outside_its_cell_or_onto_a_magic_line():
    from memlint.findings import Edit, Fix
    from memlint.static.notebook import CellSpan, _fix_in_cell

    span = CellSpan(cell=3, first_line=11, line_count=4, magic_lines=frozenset({2}))
    fix = Fix(False, (Edit(13, 5, 13, 9, "x.detach()"),))
    assert _fix_in_cell(fix, span).edits == (Edit(3, 5, 3, 9, "x.detach()"),)
    assert _fix_in_cell(Fix(False, (Edit(12, 1, 12, 4, "y"),)), span) is None  # the magic line
    assert _fix_in_cell(Fix(False, (Edit(1, 1, 1, 1, "import torch\n"), Edit(13, 5, 13, 9, "z"))), span) is None


def test_directories_include_notebooks_but_not_checkpoints(project):
    (project / ".ipynb_checkpoints").mkdir()
    (project / ".ipynb_checkpoints" / "train-checkpoint.ipynb").write_text(notebook(*TRAINING))
    result = run(".", cwd=project)
    assert "train.ipynb:cell 4:" in result.stdout and "checkpoint" not in result.stdout
    assert "1 file checked" in result.stdout


def test_clean_notebook_and_suppression_in_a_cell(project):
    cells = [dict(c) for c in TRAINING]
    cells[3] = code("".join(TRAINING[3]["source"]).replace("losses.append(loss)", "losses.append(loss)  # noqa: ML101"))
    cells[5] = code("with torch.no_grad():\n    model.eval()\n    preds = model(torch.randn(2, 4))\n")
    (project / "clean.ipynb").write_text(notebook(*cells))
    result = run("clean.ipynb", cwd=project)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("content, message", [
    ('{"cells": [', "invalid JSON"),
    ("[1, 2]", "not a notebook"),
    ('{"metadata": {}}', "no 'cells' list"),
    (b"\xff\xfe{}", "not UTF-8"),
])
def test_broken_notebook_is_ml901_not_a_crash(project, content, message):
    path = project / "broken.ipynb"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = run("broken.ipynb", "train.ipynb", cwd=project)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert any(line.startswith("broken.ipynb:") and "ML901" in line and message in line
               for line in result.stdout.splitlines()), result.stdout
    assert "train.ipynb:cell 4:9:5: ML101" in result.stdout  # the other file is still checked


def test_syntax_error_in_a_cell_points_at_the_cell(project):
    (project / "bad.ipynb").write_text(notebook(code("import torch\n"), markdown("x"), code("x = 1\ndef f(:\n")))
    result = run("bad.ipynb", cwd=project)
    assert result.exit_code == 2
    assert "bad.ipynb:cell 3:2:" in result.stdout and "ML901 syntax error" in result.stdout


def test_weird_cells_are_tolerated(project):
    cells = [
        {"cell_type": "code", "source": "import torch\nfrom torch import nn\nm = nn.Linear(1, 1)\nm.eval()\n"},
        {"cell_type": "code"},  # no source
        {"cell_type": "raw", "source": "total += loss"},
        "not a cell",
        {"cell_type": "code", "source": ["y = m(torch.ones(1))"]},
    ]
    (project / "odd.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))
    result = run("odd.ipynb", cwd=project)
    assert result.exit_code == 1, result.output
    assert "odd.ipynb:cell 5:1:5: ML201" in result.stdout


def test_notebooks_of_other_languages_and_empty_notebooks_are_skipped(project):
    (project / "r.ipynb").write_text(notebook(code("x <- 1\n%%%\n"), language="R"))
    (project / "empty.ipynb").write_text(notebook(markdown("nothing")))
    result = run("r.ipynb", "empty.ipynb", cwd=project)
    assert result.exit_code == 0, result.output


def test_blank_magics_keeps_positions():
    source = "import os\n%time f()\n  !ls -l\nx = %env HOME\nos?\nprint('%s' % 1)\n# %comment\n"
    blanked = blank_magics(source)
    assert blanked.splitlines() == [
        "import os", "pass", "  pass", "pass", "pass", "print('%s' % 1)", "# %comment"]
    assert blank_magics("%%bash\necho hi\nls") == "\n\n"
    assert blank_magics("%%timeit -n 3\nf()\n") == "\nf()\n"
    assert blank_magics("!echo a \\\n  b\nx = 1") == "pass\n\nx = 1"


def test_operators_and_strings_that_look_like_magics_are_python():
    source = (
        "loss = (\n    a\n    % b\n)\nif (a\n        != b):\n    !ls\n"
        "s = \"\"\"\n!not a magic\n\"\"\"\ny = 1 + \\\n    2\n!echo \"(\"\nw = 3\n"
    )
    blanked = blank_magics(source).splitlines()
    assert blanked[2] == "    % b" and blanked[5] == "        != b):"
    assert blanked[6] == "    pass" and blanked[8] == "!not a magic"
    assert blanked[12] == "pass" and blanked[13] == "w = 3"
    compile(blank_magics(source), "cell", "exec")


def test_pre_commit_hooks_cover_notebooks():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    hooks = _parse_hooks(text)
    assert set(hooks) == {"memlint", "memlint-fix"}
    for hook in hooks.values():
        assert hook["types_or"] == "[python, jupyter]"
        assert hook["language"] == "python"
        assert hook["require_serial"] == "false"
    assert hooks["memlint"]["entry"] == "memlint check --force-exclude"
    assert hooks["memlint-fix"]["entry"] == "memlint check --fix --force-exclude"


def _parse_hooks(text: str) -> dict[str, dict[str, str]]:
    """The flat `key: value` lines of each `- id:` entry (no YAML library needed)."""
    hooks: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- id:"):
            current = hooks.setdefault(stripped.split(":", 1)[1].strip(), {})
        elif current is not None and ":" in stripped:
            key, value = stripped.split(":", 1)
            current[key.strip()] = value.strip().strip("'\"")
    return hooks
