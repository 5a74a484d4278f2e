"""``memlint check --add-noqa`` through the real CLI: a ``# noqa`` for every finding, merged into
existing lists, on a line a comment can stand on, in notebook cells too; nothing else changes,
the check then passes, and a second run changes nothing."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main
from memlint.findings import Finding
from memlint.static.noqa import noqa_edits

ROOT = Path(__file__).resolve().parents[1]

LOOP = textwrap.dedent("""\
    import torch

    def train(model, loader, opt, crit):
        total = 0
        for x, y in loader:
            loss = crit(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    {body}
        return total
""")


def run(*args: str, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["check", "--no-cache", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def loop(*body_lines: str) -> str:
    return LOOP.format(body="\n".join("        " + line for line in body_lines))


def add_noqa_to(tmp_path: Path, text: str, name: str = "train.py") -> tuple[str, object]:
    (tmp_path / name).write_bytes(text.encode())
    result = run("--add-noqa", name, cwd=tmp_path)
    return (tmp_path / name).read_bytes().decode(), result


@pytest.mark.parametrize("line, expected", [
    ("total += loss", "total += loss  # noqa: ML101"),
    ("total += loss  # running sum", "total += loss  # running sum  # noqa: ML101"),
    ("total += loss ", "total += loss  # noqa: ML101"),  # trailing spaces count towards the two
    ("total += loss   # sum ", "total += loss   # sum  # noqa: ML101"),
    ("total += loss  # noqa: E501", "total += loss  # noqa: E501, ML101"),
    ("total += loss  # noqa:E501,W291", "total += loss  # noqa:E501,W291,ML101"),
    ("total += loss  # NOQA: E501 the URL is long", "total += loss  # NOQA: E501, ML101 the URL is long"),
    ("total += loss  # type: ignore[operator]", "total += loss  # type: ignore[operator]  # noqa: ML101"),
    ("total += loss  # noqa: ML102", "total += loss  # noqa: ML102, ML101"),
    ("total += loss  # memlint: disable=ML2", "total += loss  # memlint: disable=ML2  # noqa: ML101"),
])
def test_comment_added_or_merged_keeping_the_rest_of_the_line(tmp_path, line, expected):
    text, result = add_noqa_to(tmp_path, loop(line))
    assert text == loop(expected)
    assert result.exit_code == 0, result.output
    assert "Added 1 noqa directive to 1 file." in result.stderr


def test_several_codes_on_one_line_share_one_comment(tmp_path):
    source = textwrap.dedent("""\
        import torch

        def train(model, loader, opt, crit, history):
            total = 0
            for x, y in loader:
                loss = crit(model(x), y)
                loss.backward()
                opt.step()
                total += loss; history.append(loss)
            return total
    """)
    text, result = add_noqa_to(tmp_path, source)
    assert "total += loss; history.append(loss)  # noqa: ML101\n" in text
    assert result.exit_code == 0


def test_a_line_ending_inside_a_string_or_a_backslash_gets_the_comment_on_the_statements_last_line(tmp_path):
    source = "import os\nimport torch.distributed\nRANK = os.environ['LOCAL_RANK']\n" + loop(
        "total += \\",
        "    loss",
        'state = torch.load("""',
        'checkpoint.pt""")',
    )
    text, result = add_noqa_to(tmp_path, source)
    assert text == "import os\nimport torch.distributed\nRANK = os.environ['LOCAL_RANK']\n" + loop(
        "total += \\",
        "    loss  # noqa: ML101",
        'state = torch.load("""',
        'checkpoint.pt""")  # noqa: ML203',
    )
    assert result.exit_code == 0, result.output
    assert "Added 2 noqa directives" in result.stderr


def test_line_endings_encoding_and_bom_are_kept(tmp_path):
    source = "# -*- coding: latin-1 -*-\n" + loop("total += loss  # café")
    path = tmp_path / "train.py"
    path.write_bytes(b"\xef\xbb\xbf" + source.replace("\n", "\r\n").replace("# -*- coding: latin-1 -*-\r\n", "")
                     .encode("utf-8"))
    result = run("--add-noqa", "train.py", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert "total += loss  # café  # noqa: ML101\r\n".encode() in data
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_second_run_changes_nothing_and_memlints_own_diagnostics_are_not_suppressed(tmp_path):
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n")
    (tmp_path / "train.py").write_text(loop("total += loss"))
    result = run("--add-noqa", ".", cwd=tmp_path)
    text = (tmp_path / "train.py").read_text()
    assert "total += loss  # noqa: ML101\n" in text
    assert "broken.py:2:7: ML901" in result.output and result.exit_code == 2
    assert "# noqa" not in (tmp_path / "broken.py").read_text()
    again = run("--add-noqa", "train.py", cwd=tmp_path)
    assert "Added 0 noqa directives to 0 files." in again.stderr and again.exit_code == 0
    assert (tmp_path / "train.py").read_text() == text


def test_unused_suppressions_are_reported_not_suppressed(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nextend-select = ["ML903"]\n')
    text, result = add_noqa_to(tmp_path, loop("total += loss", "x = 1  # noqa: ML102"))
    assert "x = 1  # noqa: ML102\n" in text and "total += loss  # noqa: ML101\n" in text
    assert "ML903" in result.output and result.exit_code == 1


def test_add_noqa_with_fix_is_a_usage_error(tmp_path):
    (tmp_path / "train.py").write_text(loop("total += loss"))
    result = run("--add-noqa", "--fix", "train.py", cwd=tmp_path)
    assert result.exit_code == 2 and "--add-noqa cannot be combined" in result.output


def test_noqa_edits_leave_unplaceable_findings_alone():
    source = "x = 1\n"
    finding = Finding("f.py", 1, 1, 1, 2, "ML101", "graph-accumulation", "error", "m")
    assert noqa_edits("def f(:\n", [finding]) == ([], [finding])  # not tokenizable
    edits, nowhere = noqa_edits(source, [finding])
    assert [(e.line, e.column, e.content) for e in edits] == [(1, 6, "  # noqa: ML101")] and nowhere == []


def notebook(*sources: str) -> str:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]}]
    cells += [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
               "source": source.splitlines(keepends=True)} for source in sources]
    document = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def test_notebook_cells_get_comments_and_the_layout_is_kept(tmp_path):
    setup = "%matplotlib inline\nimport torch\n"
    training = ("losses = []\nfor step in range(3):\n    loss = model(x).sum()\n    loss.backward()\n"
                "    opt.step()\n    %time losses.append(loss)\n    losses.append(loss)  # é")
    path = tmp_path / "train.ipynb"
    path.write_text(notebook(setup, training), encoding="utf-8")
    result = run("--add-noqa", "train.ipynb", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "Added 1 noqa directive to 1 file." in result.stderr
    expected = notebook(setup, training.replace("losses.append(loss)  # é", "losses.append(loss)  # é  # noqa: ML101"))
    assert path.read_text(encoding="utf-8") == expected
    again = run("--add-noqa", "train.ipynb", cwd=tmp_path)
    assert "Added 0" in again.stderr and path.read_text(encoding="utf-8") == expected


def test_notebook_laid_out_otherwise_is_left_alone_and_still_reported(tmp_path):
    path = tmp_path / "train.ipynb"
    text = notebook("import torch\nfor s in range(3):\n    loss = m(x).sum()\n    loss.backward()\n"
                    "    opt.step()\n    losses.append(loss)\n")
    path.write_text(text.replace('\n "', '\n   "'), encoding="utf-8")  # not json.dumps' layout
    before = path.read_bytes()
    result = run("--add-noqa", "train.ipynb", cwd=tmp_path)
    assert path.read_bytes() == before
    assert "no noqa comments added to train.ipynb" in result.stderr and "ML101" in result.output
    assert result.exit_code == 1


def _only_noqa_inserted(old: str, new: str) -> list[str]:
    """Lines changed in any other way than by inserting a noqa comment or codes."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    assert len(old_lines) == len(new_lines)
    bad = []
    for a, b in zip(old_lines, new_lines):
        if a == b:
            continue
        ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
        inserted = b[ops[0][3]:ops[0][4]] if len(ops) == 1 and ops[0][0] == "insert" else ""
        if not (inserted.lstrip(" ").startswith("# noqa: ML") or inserted.startswith(", ML")):
            bad.append(f"{a!r} -> {b!r}")
    return bad


def test_every_fixture_passes_after_add_noqa_with_only_comments_added(tmp_path):
    for path in (ROOT / "fixtures").glob("ML*.py"):
        shutil.copyfile(path, tmp_path / path.name)
    originals = {p: p.read_text() for p in tmp_path.glob("*.py")}
    before = run("--format", "json", ".", cwd=tmp_path)
    assert before.exit_code == 1
    added = run("--add-noqa", ".", cwd=tmp_path)
    assert added.exit_code == 0, added.output
    assert "All checks passed" in added.output
    count = int(added.stderr.split("Added ")[1].split()[0])
    # one code per line: two findings of a rule on one line take one directive
    assert count == len({(f["path"], f["line"], f["code"]) for f in json.loads(before.output)})
    for path, old in originals.items():
        assert _only_noqa_inserted(old, path.read_text()) == [], path.name
    snapshot = {p: p.read_bytes() for p in originals}
    assert run(".", cwd=tmp_path).exit_code == 0
    again = run("--add-noqa", ".", cwd=tmp_path)
    assert "Added 0" in again.stderr
    assert {p: p.read_bytes() for p in originals} == snapshot
