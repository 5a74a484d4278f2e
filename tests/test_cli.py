"""The `memlint check` contract through the real CLI: output, exit codes, selection,
suppression comments and configuration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

LEAK = textwrap.dedent("""\
    import torch

    def train(model, loader, opt, crit):
        total = 0
        for x, y in loader:
            loss = crit(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss
        return total
""")
EVAL = textwrap.dedent("""\
    import torch

    def evaluate(model, loader):
        model.eval()
        return [model(x) for x in loader]
""")


def run(*args: str, cwd: Path | None = None):
    runner = CliRunner()
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "leak.py").write_text(LEAK)
    (tmp_path / "clean.py").write_text(LEAK.replace("total += loss", "total += loss.item()"))
    return tmp_path


def test_findings_exit_1_with_ruff_style_lines(project):
    result = run("check", "--no-cache", "leak.py", "clean.py", cwd=project)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("leak.py:10:9: ML101 ")
    assert "'total' accumulates 'loss'" in lines[0] and any("help: use loss.item()" in line for line in lines)
    assert "Found 1 problem (1 error) in 2 files checked." in lines


def test_clean_exit_0_and_exit_zero_flag(project):
    assert run("check", "--no-cache", "clean.py", cwd=project).exit_code == 0
    assert run("check", "--no-cache", "--exit-zero", "leak.py", cwd=project).exit_code == 0


def test_directory_default_and_sorting(project):
    (project / "a_eval.py").write_text(EVAL)
    result = run("check", "--no-cache", cwd=project)
    assert result.exit_code == 1
    paths = [line.split(":")[0] for line in result.output.splitlines() if ": ML" in line]
    assert paths == sorted(paths) and len(paths) == 2


def test_json_shape(project):
    result = run("check", "--no-cache", "--format", "json", "leak.py", cwd=project)
    assert result.exit_code == 1
    (finding,) = json.loads(result.output)
    assert set(finding) == {"path", "line", "column", "end_line", "end_column", "code", "name",
                            "severity", "message", "help", "fix"}
    assert (finding["line"], finding["column"], finding["code"], finding["severity"]) == (10, 9, "ML101", "error")
    assert finding["name"] == "graph-accumulation"


def test_select_ignore_extend_select_prefixes(project):
    (project / "eval.py").write_text(EVAL)
    codes = lambda r: {line.split(": ")[1].split()[0] for line in r.output.splitlines() if ": ML" in line}
    assert codes(run("check", "--no-cache", cwd=project)) == {"ML101", "ML201"}
    assert codes(run("check", "--no-cache", "--select", "ML1", cwd=project)) == {"ML101"}
    assert codes(run("check", "--no-cache", "--ignore", "ML101", cwd=project)) == {"ML201"}
    assert codes(run("check", "--no-cache", "--select", "ML2", "--extend-select", "ML101", cwd=project)) == {"ML101", "ML201"}


def test_unknown_code_is_a_usage_error(project):
    result = run("check", "--no-cache", "--select", "ML999", cwd=project)
    assert result.exit_code == 2
    assert "ML999" in result.output and "Traceback" not in result.output


def test_missing_path_and_syntax_error_exit_2_but_others_checked(project):
    (project / "broken.py").write_text("import torch\ndef f(:\n")
    result = run("check", "--no-cache", "leak.py", "broken.py", "nope.py", cwd=project)
    assert result.exit_code == 2
    assert "broken.py:2:" in result.output and "ML901 syntax error" in result.output
    assert "nope.py:1:1: ML901" in result.output
    assert "leak.py:10:9: ML101" in result.output


@pytest.mark.parametrize("comment, suppressed", [
    ("  # noqa", True),
    ("  # noqa: ML101", True),
    ("  # NOQA:ML101,ML201", True),
    ("  # noqa: ML1", True),
    ("  # noqa: ML201", False),
    ("  # memlint: disable=ML101", True),
    ("  # memlint: disable=ML201", False),
])
def test_noqa_on_the_reported_line(project, comment, suppressed):
    (project / "leak.py").write_text(LEAK.replace("total += loss", "total += loss" + comment))
    result = run("check", "--no-cache", "leak.py", cwd=project)
    assert (result.exit_code == 0) is suppressed, result.output


def test_noqa_on_first_or_last_line_of_a_multiline_statement(project):
    multi = LEAK.replace("total += loss", "losses.append(\n            loss\n        )").replace("total = 0", "losses = []")
    first = multi.replace("losses.append(\n", "losses.append(  # noqa: ML101\n")
    last = multi.replace("\n        )", "\n        )  # noqa: ML101")
    for text, code in ((multi, 1), (first, 0), (last, 0)):
        (project / "leak.py").write_text(text)
        assert run("check", "--no-cache", "leak.py", cwd=project).exit_code == code, text


def test_noqa_inside_a_string_does_not_suppress(project):
    (project / "leak.py").write_text(LEAK.replace("total += loss", "total += loss; print('# noqa')"))
    assert run("check", "--no-cache", "leak.py", cwd=project).exit_code == 1


def test_file_without_torch_gets_no_findings(project):
    (project / "leak.py").write_text(LEAK.replace("import torch", "import numpy as np"))
    assert run("check", "--no-cache", "leak.py", cwd=project).exit_code == 0


def test_torch_alias_and_framework_imports_count(project):
    (project / "leak.py").write_text(LEAK.replace("import torch", "import lightning.pytorch as pl"))
    assert run("check", "--no-cache", "leak.py", cwd=project).exit_code == 1


def write_config(folder: Path, body: str) -> None:
    (folder / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.memlint]\n" + textwrap.dedent(body))


def test_config_select_ignore_and_per_file_ignores(project):
    (project / "eval.py").write_text(EVAL)
    write_config(project, 'ignore = ["ML201"]\n')
    assert "ML201" not in run("check", "--no-cache", cwd=project).output
    write_config(project, 'select = ["ML2"]\n')
    assert "ML101" not in run("check", "--no-cache", cwd=project).output
    write_config(project, '[tool.memlint.per-file-ignores]\n"leak.py" = ["ML101"]\n')
    output = run("check", "--no-cache", cwd=project).output
    assert "leak.py" not in output and "eval.py" in output


def test_config_exclude_and_cli_overrides(project):
    (project / "generated").mkdir()
    (project / "generated" / "leak_copy.py").write_text(LEAK)
    write_config(project, 'exclude = ["generated"]\nselect = ["ML2"]\n')
    result = run("check", "--no-cache", "--select", "ML101", cwd=project)
    assert "generated" not in result.output
    assert "leak.py:10:9: ML101" in result.output  # the command line wins over the config


def test_each_file_gets_the_nearest_pyproject_above_it(project):
    # as ruff does: the closest [tool.memlint] governs a file, wherever memlint runs from
    write_config(project, 'ignore = ["ML101"]\nexclude = ["skipped_*.py"]\n')
    sub = project / "sub"
    sub.mkdir()
    (sub / "leak.py").write_text(LEAK)
    (sub / "skipped_leak.py").write_text(LEAK)
    write_config(sub, 'select = ["ML1"]\n')
    assert run("check", "--no-cache", "leak.py", cwd=sub).exit_code == 1
    result = run("check", "--no-cache", cwd=project)
    assert "sub/leak.py:10:9: ML101" in result.output and "sub/skipped_leak.py:10:9: ML101" in result.output
    assert "\nleak.py" not in "\n" + result.output  # the root's own file: ML101 ignored there
    assert run("check", "--no-cache", "leak.py", cwd=project).exit_code == 0
    # --config gives one configuration for every file
    result = run("check", "--no-cache", "--config", "pyproject.toml", cwd=project)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("body, words", [
    ('selct = ["ML1"]\n', ["unknown key", "selct"]),
    ('select = ["ML1", "XX9"]\n', ["unknown rule code", "XX9"]),
    ('select = "ML1\n', ["invalid TOML"]),
    ('[tool.memlint.verify]\nstepz = 3\n', ["unknown key", "stepz"]),
])
def test_config_errors_name_the_problem(project, body, words):
    write_config(project, body)
    result = run("check", "--no-cache", cwd=project)
    assert result.exit_code == 2
    assert all(word in result.output for word in words), result.output
    assert "Traceback" not in result.output


def test_rules_and_rule_pages():
    listing = run("rules")
    assert listing.exit_code == 0
    assert "ML101" in listing.output and "graph-accumulation" in listing.output
    page = run("rule", "ML101")
    assert page.exit_code == 0
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead",
                    "## Fix safety", "## References", "## How to confirm with verify"):
        assert heading in page.output
    assert run("rule", "ML000").exit_code == 2


def test_check_never_imports_torch(project):
    code = (
        "import sys\n"
        "from memlint.cli import main\n"
        "try:\n"
        f"    main(['check', '--no-cache', {str(project)!r}])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 1, exc.code\n"
        "assert 'torch' not in sys.modules, 'memlint check imported torch'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")


def test_diff_exits_1_when_it_would_change_something_and_writes_nothing(project):
    before = (project / "leak.py").read_text()
    result = run("check", "--no-cache", "--diff", "--unsafe-fixes", "leak.py", cwd=project)
    assert result.exit_code == 1
    assert "loss.item()" in result.output
    assert (project / "leak.py").read_text() == before
    assert run("check", "--no-cache", "--diff", "--unsafe-fixes", "clean.py", cwd=project).exit_code == 0


def test_pre_commit_hooks_and_core_dependencies_leave_torch_out():
    root = Path(__file__).resolve().parents[1]
    hooks = (root / ".pre-commit-hooks.yaml").read_text()
    assert "- id: memlint\n" in hooks and "- id: memlint-fix\n" in hooks
    assert "entry: memlint check" in hooks and "language: python" in hooks
    import tomllib

    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert not any(dep.split(">")[0].split("=")[0].strip() == "torch" for dep in project["dependencies"])
    assert any(dep.startswith("torch") for dep in project["optional-dependencies"]["verify"])


# ----- rule codes in any case, everywhere ------------------------------------------------------
def test_rule_codes_are_accepted_in_any_case_on_the_command_line_in_config_and_in_comments(project):
    (project / "eval.py").write_text(EVAL)
    codes = lambda r: {line.split(": ")[1].split()[0] for line in r.output.splitlines() if ": ML" in line}
    assert codes(run("check", "--no-cache", "--select", "ml1", cwd=project)) == {"ML101"}
    assert codes(run("check", "--no-cache", "--ignore", "Ml101", cwd=project)) == {"ML201"}
    assert codes(run("check", "--no-cache", "--select", "ml2", "--extend-select", "ml101", cwd=project)) == {
        "ML101", "ML201"}
    assert codes(run("check", "--no-cache", "--select", "all", cwd=project)) >= {"ML101", "ML201"}
    write_config(project, 'select = ["ml2"]\n[tool.memlint.per-file-ignores]\n"eval.py" = ["ml201"]\n')
    assert run("check", "--no-cache", cwd=project).exit_code == 0
    write_config(project, "")
    (project / "leak.py").write_text(LEAK.replace("total += loss", "total += loss  # noqa: ml101"))
    assert codes(run("check", "--no-cache", "leak.py", cwd=project)) == set()
    (project / "leak.py").write_text(LEAK.replace("total += loss", "total += loss  # memlint: disable=ml1"))
    assert codes(run("check", "--no-cache", "leak.py", cwd=project)) == set()
    assert run("rule", "ml101").output == run("rule", "ML101").output


def test_an_unknown_code_says_what_a_code_looks_like(project):
    result = run("check", "--no-cache", "--select", "ML1O1", cwd=project)
    assert result.exit_code == 2
    assert "--select: unknown rule code 'ML1O1' (expected a code or prefix such as ML1 or ML203" in result.output


# ----- nothing to check ---------------------------------------------------------------------------
def test_a_named_folder_with_no_python_file_is_an_error_not_a_pass(project):
    (project / "docs").mkdir()
    (project / "docs" / "index.md").write_text("# docs\n")
    for output_format in ("full", "json"):
        result = run("check", "--no-cache", "--format", output_format, "docs", cwd=project)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""  # no report, not even "[]": nothing was checked
        assert "All checks passed" not in result.output
        assert result.stderr.startswith("memlint: error: no Python files or notebooks to check in docs (")


def test_a_named_folder_whose_files_are_all_ignored_is_an_error(project):
    (project / "generated").mkdir()
    (project / "generated" / "model.py").write_text(LEAK)
    (project / ".gitignore").write_text("generated/*.py\n")
    (project / ".git").mkdir()
    result = run("check", "--no-cache", "generated", cwd=project)
    assert result.exit_code == 2
    assert "no Python files or notebooks to check in generated" in result.stderr
    assert ".gitignore" in result.stderr and "name a file to check it anyway" in result.stderr
    assert run("check", "--no-cache", "generated/model.py", cwd=project).exit_code == 1


def test_an_empty_folder_beside_files_that_were_checked_is_a_warning(project):
    (project / "empty").mkdir()
    result = run("check", "--no-cache", "leak.py", "empty", cwd=project)
    assert result.exit_code == 1  # the findings of leak.py decide
    assert "memlint: warning: no Python files or notebooks to check in empty" in result.stderr
    assert "in 1 file checked" in result.stdout


def test_no_path_named_and_nothing_here_is_a_warning_as_with_ruff(tmp_path):
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    result = run("check", "--no-cache", cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stdout == "Nothing was checked: no Python files or notebooks found.\n"
    assert "memlint: warning: no Python files or notebooks to check here" in result.stderr


def test_a_pattern_that_matches_nothing_is_a_missing_file_that_says_patterns_are_not_expanded(project):
    result = run("check", "--no-cache", "src/*.py", cwd=project)
    assert result.exit_code == 2
    assert "src/*.py:1:1: ML901 no such file or directory" in result.stdout
    assert "memlint does not expand patterns" in result.stdout
    assert "All checks passed" not in result.stdout


def test_files_that_pre_commit_names_and_force_exclude_leaves_out_are_no_error(project):
    write_config(project, 'exclude = ["generated"]\n')
    (project / "generated").mkdir()
    (project / "generated" / "model.py").write_text(LEAK)
    result = run("check", "--no-cache", "--force-exclude", "generated/model.py", cwd=project)
    assert result.exit_code == 0, result.output
    assert "nothing to check: every path given is excluded (--force-exclude)" in result.stderr
    assert "All checks passed" not in result.stdout


# ----- severity in the full output ----------------------------------------------------------------
DDP_LOAD = textwrap.dedent("""\
    import torch
    import torch.distributed as dist

    def resume(model, path):
        dist.init_process_group("nccl")
        state = torch.load(path)
        model.load_state_dict(state)

    def save(model):
        torch.save(model.state_dict(), "last.pt")
""")


DATA_PARALLEL = textwrap.dedent("""\
    import torch
    from torch import nn

    class FullModel(nn.Module):
        def __init__(self, model, criterion):
            super().__init__()
            self.model, self.criterion = model, criterion

        def forward(self, inputs, targets):
            return self.criterion(self.model(inputs), targets).unsqueeze(0)

    def build(model, criterion):
        return nn.DataParallel(FullModel(model, criterion).cuda())
""")


def test_full_output_labels_each_finding_with_its_severity_and_says_why_one_was_lowered(project):
    (project / "ddp.py").write_text(DDP_LOAD)
    (project / "replicas.py").write_text(DATA_PARALLEL)
    result = run("check", "--no-cache", "ddp.py", "replicas.py", "leak.py", cwd=project)
    out = result.stdout
    assert "Found 3 problems (2 errors, 1 info)" in out or "Found 3 problems (2 errors, 1 hint)" in out, out
    ddp, leak, replicas = out.split("\n\n")[:3]  # sorted by path
    assert ddp.splitlines()[3].endswith("^^^^^^^^^^^^^^^^ error") and "usual" not in ddp
    assert "info" in replicas.splitlines()[3]
    assert ("= info here, not the usual warning: the loss is computed in forward, so nothing piles up on the "
            "first GPU") in " ".join(replicas.split())
    assert leak.splitlines()[3].endswith("^ error")
    concise = run("check", "--no-cache", "--format", "concise", "ddp.py", cwd=project).stdout
    assert "error" not in concise.splitlines()[0]  # the one-line form is unchanged


def test_a_finding_without_source_lines_shows_its_severity_as_a_note(project):
    result = run("check", "--no-cache", "nope.py", cwd=project)
    assert result.stdout.splitlines()[:2] == ["nope.py:1:1: ML901 no such file or directory", "  = severity: error"]


def test_every_severity_a_rule_gives_instead_of_its_own_says_why():
    """A detector that raises or lowers its rule's severity for a finding must give the reason
    in its catalogue entry (``other_severities``), which the full output shows."""
    from memlint.catalogue import BY_CODE
    from memlint.static.file_check import check_file
    from memlint.static.rules import all_rules
    from memlint.static.source_check import check_source

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    findings = [f for path in sorted(fixtures.rglob("*.py")) for f in check_file(str(path), list(BY_CODE))]
    for rule in all_rules():
        for example in rule.INVALID:
            findings.extend(check_source(example.code, "example.py", [rule.code]))
    changed = {(f.code, f.severity) for f in findings if f.code in BY_CODE and f.severity != BY_CODE[f.code].severity}
    assert changed, "no rule changes a severity any more: drop this test's premise"
    for code, severity in sorted(changed):
        assert BY_CODE[code].why_severity(severity), (
            f"{code} reports some findings as {severity}: say why in its catalogue entry's other_severities")


# ----- fix counts agree with the summary --------------------------------------------------------
def test_fixed_counts_the_fixes_the_summary_offered_and_reports_findings_cleared_with_them(tmp_path):
    """On the fixtures, the findings with a fix are fixed and others (ML102 on a line an ML101 fix
    detaches) go away with them: "Fixed" must count the fixes "[*] N fixable" counted, and "more
    went away" the other findings that were there before and are not after."""
    import shutil

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    shutil.copytree(fixtures, tmp_path / "fixtures")
    before = run("check", "--no-cache", "--format", "json", "fixtures", cwd=tmp_path)
    findings = json.loads(before.stdout)
    fixable = sum(1 for f in findings if f["fix"])
    summary = run("check", "--no-cache", "--format", "concise", "fixtures", cwd=tmp_path).stdout
    assert f"[*] {fixable} fixable with --fix --unsafe-fixes." in summary
    fixed = run("check", "--no-cache", "--fix", "--unsafe-fixes", "--format", "json", "fixtures", cwd=tmp_path)
    after = json.loads(fixed.stdout)
    assert not [f for f in after if f["fix"]]
    # A fix may also bring a finding of its own (ML203's map_location="cpu" shows ML215's checkpoint
    # kept in host memory): what went away is counted among the findings that were there before.
    before_keys = {(f["path"], f["code"], f["message"]) for f in findings}
    kept = [f for f in after if (f["path"], f["code"], f["message"]) in before_keys]
    cleared = len(findings) - len(kept) - fixable
    assert cleared > 0  # the case the message has to account for
    files = len({f["path"] for f in findings if f["fix"]})
    assert f"Fixed {fixable} problems in {files} files ({cleared} more went away with them)." in fixed.stderr


def test_check_help_says_the_exit_codes_and_the_case_of_codes():
    text = run("check", "--help").output
    assert "Rule codes are accepted in any case (ml101 is ML101)." in text
    assert "0  no findings (or findings, with --exit-zero)" in text
    assert "or paths named that hold no Python file or notebook (nothing was checked)" in text
