"""Autofix through the real CLI: --fix (safe only), --unsafe-fixes, --diff; fixes keep
formatting and comments, fixed files still parse and no longer trigger the fixed finding."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner

from memlint.cli import main
from memlint.static.text_edits import apply_edits
from memlint.static.rules import all_rules
from memlint.static.source_check import check_source

ROOT = Path(__file__).resolve().parents[1]

LEAK = textwrap.dedent("""\
    import torch

    def train(model, loader, opt, crit):
        total = 0
        losses = []
        for x, y in loader:
            loss = crit(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total  +=  loss   # running sum, keep this comment
            losses.append(
                loss  # per step
            )
        return total
""")
EVAL = textwrap.dedent("""\
    \"\"\"Evaluation.\"\"\"
    from __future__ import annotations

    import torch as t

    def evaluate(model, loader):
        model.eval()
        correct = 0
        for x, y in loader:
            # predictions
            preds = model(
                x,
            ).argmax(1)  # top-1
            correct += (preds == y).sum().item()
        return correct
""")


def run(*args: str, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["check", "--no-cache", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "leak.py").write_text(LEAK)
    (tmp_path / "evaluate.py").write_text(EVAL)
    return tmp_path


def test_unsafe_fixes_rewrite_files_keeping_formatting(project):
    result = run("--fix", "--unsafe-fixes", cwd=project)
    assert result.exit_code == 0, result.output
    assert "Fixed 3 problems in 2 files." in result.stderr
    assert "All checks passed" in result.stdout
    fixed = (project / "leak.py").read_text()
    assert fixed == LEAK.replace("total  +=  loss   #", "total  +=  loss.item()   #").replace(
        "loss  # per step", "loss.detach()  # per step")
    assert (project / "evaluate.py").read_text() == EVAL.replace(
        "        preds = model(\n            x,\n        ).argmax(1)  # top-1\n",
        "        with t.no_grad():\n            preds = model(\n                x,\n"
        "            ).argmax(1)  # top-1\n",
    )
    assert run(cwd=project).exit_code == 0


def test_fix_alone_applies_only_safe_fixes(project):
    result = run("--fix", cwd=project)
    assert result.exit_code == 1
    assert "3 unsafe fixes available with --unsafe-fixes" in result.stderr
    assert (project / "leak.py").read_text() == LEAK
    assert "[*]" in result.stdout


def test_diff_prints_and_writes_nothing(project):
    result = run("--diff", "--unsafe-fixes", "leak.py", cwd=project)
    assert (project / "leak.py").read_text() == LEAK
    assert "--- a/leak.py\n+++ b/leak.py\n" in result.stdout
    assert "-        total  +=  loss   # running sum, keep this comment\n" in result.stdout
    assert "+        total  +=  loss.item()   # running sum, keep this comment\n" in result.stdout
    assert "Would fix 2 problems in 1 file." in result.stderr
    assert result.exit_code == 1  # like ruff: --diff fails when it would change something


def test_json_output_after_fix_lists_what_remains(project):
    (project / "leak.py").write_text(LEAK + textwrap.dedent("""\

        def more(model, loader, opt, crit):
            extra = []
            for x, y in loader:
                parts = [crit(model(x), y)]
                parts[0].backward()
                opt.step()
                extra.extend(parts)
    """))
    result = run("--fix", "--unsafe-fixes", "--format", "json", "leak.py", cwd=project)
    data = json.loads(result.stdout)  # the summary went to stderr
    assert [d["code"] for d in data] == [] or all(d["fix"] is None for d in data)


def test_no_grad_fix_adds_the_import_when_torch_is_not_imported_by_name(tmp_path):
    source = textwrap.dedent("""\
        \"\"\"Docstring.\"\"\"
        from torch import nn

        net = nn.Linear(2, 2)
        net.eval()
        out = net(x)
    """)
    (tmp_path / "m.py").write_text(source)
    result = run("--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m.py").read_text() == textwrap.dedent("""\
        \"\"\"Docstring.\"\"\"
        import torch
        from torch import nn

        net = nn.Linear(2, 2)
        net.eval()
        with torch.no_grad():
            out = net(x)
    """)


def test_crlf_line_endings_and_tabs_are_kept(tmp_path):
    source = "import torch\r\ndef ev(model, xs):\r\n\tmodel.eval()\r\n\tfor x in xs:\r\n\t\ty = model(x)\r\n"
    (tmp_path / "m.py").write_bytes(source.encode())
    result = run("--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m.py").read_bytes().decode() == (
        "import torch\r\ndef ev(model, xs):\r\n\tmodel.eval()\r\n\tfor x in xs:\r\n"
        "\t\twith torch.no_grad():\r\n\t\t\ty = model(x)\r\n")


def test_form_feed_and_unicode_line_separators_do_not_shift_lines(tmp_path):
    source = LEAK.replace("import torch\n", "import torch\n\x0c\ns = 'a\u2028b'\n")
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    result = run("--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    fixed = (tmp_path / "m.py").read_text(encoding="utf-8")
    assert "total  +=  loss.item()   #" in fixed and "\x0c\ns = 'a\u2028b'\n" in fixed


def test_no_wrap_fix_around_yield_or_await(tmp_path):
    source = textwrap.dedent("""\
        import torch
        def predict(model, loader):
            model.eval()
            for x in loader:
                yield model(x)
    """)
    (tmp_path / "m.py").write_text(source)
    data = json.loads(run("--format", "json", "m.py", cwd=tmp_path).stdout)
    assert [d["code"] for d in data] == ["ML201"] and data[0]["fix"] is None


def test_two_findings_in_one_statement_are_fixed_in_passes(tmp_path):
    source = textwrap.dedent("""\
        import torch
        def ev(a, b, xs):
            a.eval()
            b.eval()
            outs = [a(x) + b(x) for x in xs]
            return outs
    """)
    (tmp_path / "m.py").write_text(source)
    result = run("--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    fixed = (tmp_path / "m.py").read_text()
    assert fixed.count("with torch.no_grad():") == 1
    cst.parse_module(fixed)


def test_one_line_suite_gets_no_fix(tmp_path):
    source = "import torch\ndef ev(m, xs):\n    m.eval()\n    for x in xs: m(x)\n"
    (tmp_path / "m.py").write_text(source)
    data = json.loads(run("--format", "json", "m.py", cwd=tmp_path).stdout)
    assert [d["code"] for d in data] == ["ML201"] and data[0]["fix"] is None
    assert "[*]" not in run("m.py", cwd=tmp_path).stdout


def _fix_all(source: str, rule) -> str:
    for _ in range(8):
        fixes = [f.fix for f in check_source(source, "example.py", [rule.code]) if f.code == rule.code and f.fix]
        if not fixes:
            break
        source, _applied = apply_edits(source, fixes)
    return source


def _fixable_examples():
    for rule in all_rules():
        if rule.fixable:
            for index, example in enumerate(rule.INVALID):
                yield pytest.param(rule, example, id=f"{rule.code}-invalid-{index}")


@pytest.mark.parametrize("rule, example", list(_fixable_examples()))
def test_fixing_invalid_examples_parses_and_clears_the_fixed_findings(rule, example):
    before = [f for f in check_source(example.code, "example.py", [rule.code]) if f.code == rule.code]
    fixed = _fix_all(example.code, rule)
    cst.parse_module(fixed)
    compile(fixed, "example.py", "exec")
    after = [f for f in check_source(fixed, "example.py", [rule.code]) if f.code == rule.code]
    assert not [f for f in after if f.fix is not None], fixed
    assert len(after) == len([f for f in before if f.fix is None]), fixed
    if example.fixed is not None:
        assert example.fixed in fixed, fixed


def test_fixes_on_the_fixtures_leave_code_that_parses_and_is_clean(tmp_path):
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures")
    before = json.loads(run("--format", "json", "--exit-zero", "-j", "1", "fixtures", cwd=tmp_path).stdout)
    fixable = [d for d in before if d["fix"] is not None]
    result = run("--fix", "--unsafe-fixes", "--format", "json", "--exit-zero", "-j", "1", "fixtures", cwd=tmp_path)
    after = json.loads(result.stdout)
    for path in (tmp_path / "fixtures").rglob("*.py"):
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
    assert not [d for d in after if d["fix"] is not None]
    assert not [d for d in after if d["code"] in ("ML901", "ML902")]
    assert len(after) <= len(before) - len(fixable)
    # a fresh check agrees with what --fix reported as remaining
    again = json.loads(run("--format", "json", "--exit-zero", "-j", "1", "fixtures", cwd=tmp_path).stdout)
    assert again == after
