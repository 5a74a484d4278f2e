"""The text report of ``memlint check``: the ``full`` and ``concise`` shapes on the fixtures
(snapshots, a notebook cell and a multi-line statement included), how source is drawn
(carets, multi-line spans, long lines, tabs, wide and control characters), colour, the
summary, and the help that travels with a finding into JSON, SARIF, GitHub and the cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main
from memlint.findings import CheckResult, Edit, Finding, Fix
from memlint.report.style import colour_wanted
from memlint.report.text import display, render_text, summary
from snapshot import assert_snapshot

ROOT = Path(__file__).resolve().parents[1]
# Fixtures of rules whose messages are in their short form (a hook's store, a whole accumulation
# block as the span), and a notebook whose cell holds a multi-line statement.
SNAPSHOT_FIXTURES = [
    "fixtures/ML202_empty_cache_every_step.py",
    "fixtures/ML203_ddp_resume.py",
    "fixtures/ML301_nccl_without_set_device.py",
    "fixtures/ML104_activation_hooks.py",
    "fixtures/ML302_accelerate_and_chunks.py",
    "fixtures/notebooks/finetune_resume.ipynb",
]
NO_COLOUR_ENV = {"NO_COLOR": None, "FORCE_COLOR": None, "CLICOLOR_FORCE": None}


def check(*args: str, cwd: Path = ROOT, env: dict | None = None):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["check", "--no-cache", *args], catch_exceptions=False,
                                  env={**NO_COLOUR_ENV, **(env or {})})
    finally:
        os.chdir(old)


@pytest.mark.parametrize("shape", ["full", "concise"])
def test_snapshot_of_each_shape_on_the_fixtures(shape):
    result = check("--format", shape, *SNAPSHOT_FIXTURES)
    assert result.exit_code == 1
    assert_snapshot(f"check_{shape}.txt", result.stdout)


def test_text_is_full_and_output_format_is_the_same_option():
    full = check(*SNAPSHOT_FIXTURES[:1]).stdout
    assert check("--format", "text", *SNAPSHOT_FIXTURES[:1]).stdout == full
    assert check("--output-format", "full", *SNAPSHOT_FIXTURES[:1]).stdout == full
    assert check("--output-format", "concise", *SNAPSHOT_FIXTURES[:1]).stdout == \
        check("--format", "concise", *SNAPSHOT_FIXTURES[:1]).stdout
    assert "help:" in full


def test_concise_lines_are_what_a_problem_matcher_reads():
    import re

    lines = check("--format", "concise", *SNAPSHOT_FIXTURES).stdout.splitlines()
    findings = [line for line in lines if re.match(r"^[^:]+(:cell \d+)?:\d+:\d+: ML\d{3} ", line)]
    assert len(findings) == len(lines) - 2  # then the summary's two lines
    assert all(len(line.split(": ", 1)[1]) <= 110 for line in findings)


# Rules whose findings are in the short form: message (what is wrong) + help (what to do).
SHORT_FORM_RULES = ("ML101", "ML102", "ML103", "ML104", "ML105", "ML106", "ML107", "ML108", "ML109", "ML110",
                    "ML114", "ML115", "ML116", "ML117",
                    "ML201", "ML202", "ML203", "ML204", "ML205", "ML206", "ML207", "ML208", "ML209", "ML210",
                    "ML211", "ML212", "ML301", "ML302", "ML303", "ML304")
MAX_MESSAGE = 100


@pytest.mark.parametrize("code", SHORT_FORM_RULES)
def test_short_form_rules_say_what_is_wrong_briefly_and_what_to_do_apart(code):
    from memlint.static.rules import rule_class
    from memlint.static.source_check import check_source

    rule = rule_class(code)
    findings = [f for example in rule.INVALID for f in check_source(example.code, "example.py", [code])
                if f.code == code]
    assert findings
    for f in findings:
        assert len(f.message) <= MAX_MESSAGE and "\n" not in f.message and not f.message.endswith("."), f.message
        assert f.help and len(f.help) <= 2 * MAX_MESSAGE, f.message


# ----- drawing the source ---------------------------------------------------------------------
def finding(path: str, line: int, column: int, end_line: int, end_column: int, message: str = "what is wrong",
            help: str | None = "what to do", code: str = "ML202", fix: Fix | None = None, cell: int | None = None):
    return Finding(path, line, column, end_line, end_column, code, "empty-cache-in-loop", "warning",
                   message, fix=fix, cell=cell, help=help)


def full(*findings: Finding, sources: dict[str, str] | None = None, files: int = 1) -> str:
    return render_text(CheckResult(list(findings), files, sources or {}), "full")


def test_single_line_span_is_underlined_with_its_help_and_fix():
    source = "import torch\nstate = torch.load(path)\n"
    fix = Fix(False, (Edit(2, 24, 2, 24, ", map_location='cpu'"),))
    text = full(finding("m.py", 2, 9, 2, 25, fix=fix), sources={"m.py": source})
    assert text.splitlines()[:7] == [
        "m.py:2:9: ML202 [*] what is wrong",
        "  |",
        "2 | state = torch.load(path)",
        "  |         ^^^^^^^^^^^^^^^^ warning",
        "  |",
        "  = help: what to do",
        "  = unsafe fix available with --fix --unsafe-fixes",
    ]


def test_a_long_span_is_folded_and_drawn_with_a_margin_bar():
    source = "x = f(\n" + "".join(f"    a{i},\n" for i in range(10)) + ")\n"
    lines = full(finding("m.py", 1, 5, 12, 2), sources={"m.py": source}).splitlines()
    assert lines[1:10] == [
        "   |",
        " 1 |   x = f(",
        "   |  _____^",
        " 2 | |     a0,",
        " 3 | |     a1,",
        "...  |",
        "11 | |     a9,",
        "12 | | )",
        "   | |_^ warning",
    ]


def test_a_span_that_starts_its_line_is_marked_with_a_slash():
    source = "if ok:\n    go()\n"
    lines = full(finding("m.py", 1, 1, 2, 9), sources={"m.py": source}).splitlines()
    assert lines[1:5] == ["  |", "1 | / if ok:", "2 | |     go()", "  | |________^ warning"]


def test_a_span_ending_after_a_line_break_ends_on_the_line_before():
    lines = full(finding("m.py", 1, 1, 2, 1), sources={"m.py": "abc\nnext\n"}).splitlines()
    assert lines[2:4] == ["1 | abc", "  | ^^^ warning"]


def test_an_empty_span_gets_one_caret_and_a_column_past_the_end_stays_on_the_line():
    lines = full(finding("m.py", 1, 4, 1, 4), sources={"m.py": "abc\n"}).splitlines()
    assert lines[3] == "  |    ^ warning"
    lines = full(finding("m.py", 1, 9, 1, 12), sources={"m.py": "abc\n"}).splitlines()
    assert lines[3] == "  |    ^ warning"


def test_tabs_wide_and_control_characters_keep_the_carets_under_the_span():
    shown, starts = display("\tx = '漢字'\x1b[31m")
    assert shown == "    x = '漢字'\ufffd[31m" and starts[:6] == [0, 4, 5, 6, 7, 8] and starts[7] == 11
    source = "\tname = '漢字' + loss\n"
    lines = full(finding("m.py", 1, 14, 1, 18), sources={"m.py": source}).splitlines()
    assert lines[2] == "1 |     name = '漢字' + loss"
    assert lines[3] == "  |                   ^^^^ warning"
    assert "\x1b" not in full(finding("m.py", 1, 1, 1, 2), sources={"m.py": "\x1b[2Jx\n"})


def test_a_very_long_line_shows_a_window_around_the_span():
    source = "x = [" + "0, " * 400 + "loss]\n"
    column = source.index("loss") + 1
    lines = full(finding("m.py", 1, column, 1, column + 4), sources={"m.py": source}).splitlines()
    shown, carets = lines[2], lines[3]
    assert shown.startswith("1 | …") and shown.endswith("loss]") and len(shown) == len("1 | …") + 160
    assert shown[carets.index("^"):carets.index("^") + 4] == "loss"
    source = "x = [" + "0, " * 100 + "loss, " + "1, " * 300 + "]\n"
    column = source.index("loss") + 1
    shown, carets = full(finding("m.py", 1, column, 1, column + 4), sources={"m.py": source}).splitlines()[2:4]
    assert shown.startswith("1 | …") and shown.endswith("…") and len(shown) == len("1 | ……") + 160
    assert shown[carets.index("^"):carets.rindex("^") + 1] == "loss"


def test_findings_without_a_place_or_source_show_no_snippet(tmp_path):
    internal = Finding("m.py", 1, 1, 1, 1, "ML902", "internal-error", "error", "internal error in rule ML101",
                       help="a bug in memlint")
    assert full(internal, sources={"m.py": "x = 1\n"}).splitlines()[:4] == [
        "m.py:1:1: ML902 internal error in rule ML101", "  = severity: error", "  = help: a bug in memlint", ""]
    gone = str(tmp_path / "gone.py")
    assert full(finding(gone, 3, 1, 3, 2)).splitlines()[1:3] == ["  = severity: warning", "  = help: what to do"]
    changed = full(finding("m.py", 30, 1, 30, 2), sources={"m.py": "x = 1\n"})  # edited since it was checked
    assert changed.splitlines()[1:3] == ["  = severity: warning", "  = help: what to do"]


def test_messages_and_paths_stay_on_one_line_without_escape_codes():
    odd = Finding("a\nb\x1b[2J.py", 1, 1, 1, 2, "ML902", "internal-error", "error", "boom:\nValueError\x1b[31m",
                  help="report\x07 it")
    for shape in ("full", "concise"):
        text = render_text(CheckResult([odd], 1), shape)
        assert "\x1b" not in text and "\x07" not in text
        assert text.splitlines()[0] == "a b\ufffd[2J.py:1:1: ML902 boom: ValueError\ufffd[31m"


def test_a_long_message_without_help_is_shown_as_is():
    message = "x " * 200
    text = full(finding("m.py", 1, 1, 1, 2, message=message, help=None), sources={"m.py": "x\n"})
    assert text.splitlines()[0].endswith(message) and "help" not in text


def test_a_syntax_error_points_at_its_line(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\n\ndef f(:\n    pass\n")
    lines = check("bad.py", cwd=tmp_path).stdout.splitlines()
    assert lines[0] == "bad.py:3:7: ML901 syntax error: invalid syntax"
    assert lines[2:4] == ["3 | def f(:", "  |       ^ error"]
    assert lines[5].startswith("  = help: memlint checks code that Python parses")


def test_diff_shows_remaining_findings_in_the_text_it_did_not_write(tmp_path):
    # the fix of ML201 adds a line above the ML202 that remains: the report must show the
    # fixed text, which is not on disk
    source = ("import torch\n\n\ndef evaluate(model, x):\n    model.eval()\n    preds = model(x)\n    return preds\n"
              "\n\ndef train(model, loader, opt):\n    for x, y in loader:\n        loss = model(x).sum()\n"
              "        opt.zero_grad()\n        loss.backward()\n        opt.step()\n        torch.cuda.empty_cache()\n")
    (tmp_path / "m.py").write_text(source)
    result = check("--diff", "--unsafe-fixes", "--select", "ML201,ML202", "m.py", cwd=tmp_path)
    assert "+    with torch.no_grad():" in result.stdout and (tmp_path / "m.py").read_text() == source
    assert "m.py:17:9: ML202 " in result.stdout
    assert "17 |         torch.cuda.empty_cache()" in result.stdout


# ----- colour ---------------------------------------------------------------------------------
class Tty:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty, env, wanted", [
    (True, {}, True),
    (False, {}, False),
    (True, {"NO_COLOR": "1"}, False),
    (False, {"FORCE_COLOR": "1"}, True),
    (True, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),  # as ruff: NO_COLOR wins
    (True, {"NO_COLOR": ""}, True),  # set but empty: no-color.org says ignore it
    (True, {"TERM": "dumb"}, False),
    (False, {"CLICOLOR_FORCE": "1"}, True),
    (False, {"CLICOLOR_FORCE": "0"}, False),
])
def test_colour_follows_the_terminal_and_the_environment(tty, env, wanted):
    assert colour_wanted(Tty(tty), env) is wanted


def test_colour_through_the_cli():
    plain = check(*SNAPSHOT_FIXTURES[1:2])
    assert "\x1b[" not in plain.stdout  # not a terminal
    forced = check(*SNAPSHOT_FIXTURES[1:2], env={"FORCE_COLOR": "1"})
    assert "\x1b[1;31mML203\x1b[0m" in forced.stdout and "\x1b[1;36mhelp\x1b[0m" in forced.stdout
    assert "\x1b[" not in check(*SNAPSHOT_FIXTURES[1:2], env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    concise = check("--format", "concise", *SNAPSHOT_FIXTURES[1:2], env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[1mfixtures/ML203_ddp_resume.py\x1b[0m\x1b[36m:\x1b[0m25" in concise
    assert "\x1b[" not in check("--format", "json", *SNAPSHOT_FIXTURES[1:2], env={"FORCE_COLOR": "1"}).stdout


# ----- summary --------------------------------------------------------------------------------
def _with(severity: str, fix: Fix | None = None) -> Finding:
    return Finding("m.py", 1, 1, 1, 2, "ML203", "n", severity, "m", fix=fix)


SAFE, UNSAFE = Fix(True, ()), Fix(False, ())


@pytest.mark.parametrize("findings, files, expected", [
    ([], 3, "All checks passed! (3 files checked)"),
    ([], 1, "All checks passed! (1 file checked)"),
    ([_with("error")], 1, "Found 1 problem (1 error) in 1 file checked."),
    ([_with("error"), _with("warning"), _with("info"), _with("info")], 2,
     "Found 4 problems (1 error, 1 warning, 2 info) in 2 files checked."),
    ([_with("warning", SAFE), _with("warning", UNSAFE), _with("warning", UNSAFE)], 1,
     "Found 3 problems (3 warnings) in 1 file checked.\n[*] 1 fixable with --fix (2 more with --fix --unsafe-fixes)."),
    ([_with("warning", SAFE)], 1, "Found 1 problem (1 warning) in 1 file checked.\n[*] 1 fixable with --fix."),
    ([_with("warning", UNSAFE)], 1,
     "Found 1 problem (1 warning) in 1 file checked.\n[*] 1 fixable with --fix --unsafe-fixes."),
])
def test_summary(findings, files, expected):
    assert summary(CheckResult(findings, files)) == expected


def test_full_names_the_rule_pages_and_concise_does_not():
    text = full(finding("m.py", 1, 1, 1, 2), Finding("m.py", 1, 1, 1, 1, "ML902", "internal-error", "error", "x"),
                sources={"m.py": "x\n"})
    assert text.endswith("Why it matters: memlint rule ML202\n")
    assert "memlint rule" not in render_text(CheckResult([finding("m.py", 1, 1, 1, 2)], 1), "concise")


# ----- the help in the other formats and the cache ---------------------------------------------
def test_help_travels_through_json_sarif_github_and_the_cache(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nimport torch.distributed\ntorch.distributed.init_process_group('nccl')\n"
                                   "model = torch.nn.Linear(2, 2)\nmodel.load_state_dict(torch.load('model.pt'))\n"
                                   "torch.save({'optimizer': opt.state_dict()}, 'last.pt')\n")
    (tmp_path / "pyproject.toml").write_text("[tool.memlint]\n")
    (record,) = json.loads(check("--format", "json", "m.py", cwd=tmp_path).stdout)
    assert record["message"] == "torch.load() without map_location: every rank loads the checkpoint onto cuda:0"
    assert record["help"] == "pass map_location='cpu' (then move what you need), or map_location=f'cuda:{local_rank}'"

    sarif = json.loads(check("--format", "sarif", "m.py", cwd=tmp_path).stdout)
    (result,) = sarif["runs"][0]["results"]
    assert result["message"]["text"] == f"{record['message']}; {record['help']}"
    assert result["properties"]["help"] == record["help"]

    github = check("--format", "github", "m.py", cwd=tmp_path).stdout
    assert github.rstrip().endswith(f"::ML203 {record['message']}%0Ahelp: {record['help']}")

    def cached_run():
        old = os.getcwd()
        os.chdir(tmp_path)
        try:
            return CliRunner().invoke(main, ["check", "--format", "json", "m.py"], env=NO_COLOUR_ENV).stdout
        finally:
            os.chdir(old)

    assert json.loads(cached_run()) == [record]
    assert list((tmp_path / ".memlint_cache" / "v4").rglob("*"))  # the entry this run wrote
    assert json.loads(cached_run()) == [record]  # read back from it


def test_finding_json_round_trip_keeps_help():
    with_help = finding("m.py", 1, 1, 1, 2, fix=Fix(True, (Edit(1, 1, 1, 2, "y"),)), cell=2)
    assert Finding.from_json(with_help.to_json()) == with_help
    assert Finding.from_json({**with_help.to_json(), "help": None}).help is None
    old_entry = with_help.to_json()
    del old_entry["help"]  # written before findings had help
    assert Finding.from_json(old_entry).help is None
