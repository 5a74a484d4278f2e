"""memlint verify's text report (memlint.report.verify_text), drawn from constructed reports:
no script runs here. The snapshots are in tests/snapshots/verify_*.txt."""

from __future__ import annotations

import textwrap

import pytest

from memlint.dynamic.memory import Composition, Fit, Lever, MemoryReport, StepPeak
from memlint.dynamic.report import Holder, RankReport, Site, VerifiedFinding, VerifyReport
from memlint.findings import Finding
from memlint.report.verify_text import render_text
from snapshot import assert_snapshot

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

TRAIN = textwrap.dedent("""\
    import torch
    from torch import nn


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            return self.fc(x) * 1.0


    def main():
        model = Classifier()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        all_logits = []
        for step in range(500):
            logits = model(torch.randn(256, 64))
            loss = logits.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            all_logits.append(logits)  # for the confusion matrix
        evaluate(model)


    def evaluate(model):
        scores = [model(torch.randn(8, 64)) for _ in range(4)]
        return torch.cat(scores).mean().item()
""")
SOURCES = {"train.py": TRAIN}


def _line(text: str) -> int:
    return next(i for i, line in enumerate(TRAIN.splitlines(), 1) if text in line)


def _ml101() -> Finding:
    line = _line("all_logits.append(logits)")
    return Finding("train.py", line, 9, line, 34, "ML101", "graph-accumulation", "error",
                   "'all_logits' keeps every step's autograd graph", help="append logits.detach() to keep a tensor")


def _ml201() -> Finding:
    line = _line("scores = [")
    return Finding("train.py", line, 15, line, 38, "ML201", "grad-enabled-inference", "warning",
                   "evaluation runs with autograd on", help="wrap evaluate() in torch.no_grad()")


def _memory(measured_steps: int = 20) -> MemoryReport:
    at_peak = Composition(parameters=8 * MiB, gradients=8 * MiB, optimizer_state=16 * MiB,
                          activations=42 * MiB, other=2 * MiB)
    high = Composition(parameters=8 * MiB, gradients=8 * MiB, optimizer_state=16 * MiB,
                       activations=43 * MiB, other=10 * MiB)
    peak = StepPeak(4, "forward", 76 * MiB, at_peak, high,
                    {"forward": 76 * MiB, "backward": 72 * MiB, "optimizer": 37 * MiB}, batch=1024)
    fit = Fit(capacity_bytes=24 * GiB, capacity_label="RTX4090 (24.00 GiB)", projected_bytes=596 * MiB, fits=True,
              headroom_bytes=24 * GiB - 596 * MiB, max_batch=468_293, batch=1024, allocator_factor=1.1,
              allocator_measured=False, foreach_bytes=5 * MiB, context_bytes=512 * MiB)
    levers = [Lever("activation checkpointing of the 4 Block blocks in ResidualMLP.blocks", 26 * MiB),
              Lever("gradient accumulation: 2 micro-batches of 512 instead of one of 1024", 21 * MiB)]
    return MemoryReport(76 * MiB, 4, "forward", at_peak, high, fit, levers, [peak], measured_steps)


def growth_report() -> VerifyReport:
    append = _line("all_logits.append(logits)")
    holder = Holder("all_logits", "main", "train.py", append, "variable", "list", 22, "appended")
    tensor_site = Site("train.py", _line("return self.fc(x) * 1.0"), "forward", 10 * KiB, 1.0, holder)
    graph_site = Site("train.py", append, "main", 0, 6.0, holder)
    confirmed = VerifiedFinding(_ml101(), True, [tensor_site, graph_site])
    return VerifyReport(
        "train.py", "cpu", 20, 3, "growth",
        "live tensor memory grows 10.0 KiB/step; the autograd graph grows 6 nodes/step (held by all_logits)",
        10 * KiB, 6.0, 34 * KiB, sites=[tensor_site, graph_site], findings=[confirmed],
        step_boundary="optimizer")


def stable_report() -> VerifyReport:
    steady = Site("train.py", _line("scores = ["), "evaluate", 512.0, 1.0,
                  Holder("scores", "evaluate", "train.py", None, "graph", "list", 4, None))
    return VerifyReport(
        "train.py", "cpu", 20, 3, "stable",
        "no signal grows over 20 steps: tensors 512 B/step (threshold 1.0 KiB), graph 0 nodes/step (threshold 1), "
        "RSS 520.0 KiB/step", 512.0, 0.0, 520 * KiB, sites=[steady],
        findings=[VerifiedFinding(_ml201(), False)], memory=_memory(), step_boundary="dataloader",
        step_owner="ShardDataset")


def raised_report() -> VerifyReport:
    traceback = textwrap.dedent("""\
        Traceback (most recent call last):
          File "/home/me/project/train.py", line 26, in <module>
            main()
          File "/home/me/project/train.py", line 9, in load_batch
            raise ValueError(f"corrupt record in shard 3 at batch {step}")
        ValueError: corrupt record in shard 3 at batch 5
    """)
    return VerifyReport("train.py", "cpu", 8, 2, "inconclusive",
                        "the script raised after 5 of 10 steps (2 warmup + 8 measured): ValueError: corrupt record "
                        "in shard 3 at batch 5", details=traceback, step_boundary="optimizer")


def test_growth_with_a_holder_and_a_confirmed_finding():
    assert_snapshot("verify_growth.txt", render_text(growth_report(), sources=SOURCES))


def test_stable_with_the_peak_table():
    assert_snapshot("verify_stable.txt", render_text(stable_report(), sources=SOURCES))


def test_inconclusive_when_the_script_raised():
    assert_snapshot("verify_inconclusive_raised.txt", render_text(raised_report(), sources=SOURCES))


def test_the_verdict_is_the_first_line_coloured_by_what_it_means():
    for report, colour in ((growth_report(), "31"), (stable_report(), "32"), (raised_report(), "33")):
        text = render_text(report, colour=True, sources=SOURCES)
        assert text.startswith(f"\x1b[1;{colour}m{report.verdict}\x1b[0m: ")
        assert "\x1b[" not in render_text(report, sources=SOURCES)


def test_each_rank_has_a_line_under_the_verdict():
    report = growth_report()
    report.reason = "rank 1: " + report.reason
    report.ranks = [RankReport(0, "stable", "no signal grows over 20 steps"),
                    RankReport(1, "growth", "the autograd graph grows 6 nodes/step (held by all_logits)",
                               sites=report.sites)]
    lines = render_text(report, sources=SOURCES).splitlines()
    assert lines[0].startswith("growth: rank 1: live tensor memory grows")
    # the figures and sites shown are the worst rank's
    assert lines[2:5] == ["  per step (rank 1): tensors +10.0 KiB, graph +6 nodes, RSS +34.0 KiB",
                          "  rank 0: stable: no signal grows over 20 steps",
                          "  rank 1: growth: the autograd graph grows 6 nodes/step (held by all_logits)"]
    assert lines[6] == "where the surviving memory comes from (rank 1):"


def test_a_run_that_printed_and_died_shows_its_last_output():
    report = VerifyReport("train.py", "cpu", 8, 2, "inconclusive", "the script crashed with SIGSEGV after 3 of 10 "
                          "steps (2 warmup + 8 measured)", details="loading shard 3\nFatal Python error: Segmentation "
                          "fault\n\x1b[31m", step_boundary=None)
    lines = render_text(report).splitlines()
    assert lines[1] == "  train.py (cpu, 2 warmup + 8 measured steps)"
    # the script's output cannot send escape codes to the terminal
    assert lines[2:] == ["", "the script's last output:", "  loading shard 3",
                         "  Fatal Python error: Segmentation fault", "  \ufffd[31m"]


@pytest.mark.parametrize("line, underlined", [
    ('    x = f("# not a comment")  # a comment\n', 'x = f("# not a comment")'),
    ("    total = (a +\n", "total = (a +"),  # the first line of a longer statement
    ("\tkept.append(y)\n", "kept.append(y)"),
])
def test_the_underline_covers_the_code_not_its_indentation_or_comment(line, underlined):
    report = VerifyReport("t.py", "cpu", 4, 1, "growth", "because", 2048.0, 0.0, 0.0,
                          sites=[Site("t.py", 1, "f", 2048.0, 1.0)])
    lines = render_text(report, sources={"t.py": line}).splitlines()
    at = next(i for i, text in enumerate(lines) if text.startswith("1 |"))
    shown, carets = lines[at], lines[at + 1]
    start = carets.index("^")
    assert shown[start:start + len(underlined)] == underlined.replace("\t", "    ")
    assert carets[start:] == "^" * len(underlined) + " allocated here"


def test_a_site_whose_file_cannot_be_read_is_named_without_source(tmp_path):
    missing = str(tmp_path / "gone.py")
    report = VerifyReport(missing, "cpu", 4, 1, "growth", "because", 2048.0, 0.0, 0.0,
                          sites=[Site(missing, 7, "step", 2048.0, 1.0)])
    lines = render_text(report).splitlines()
    at = next(i for i, text in enumerate(lines) if "gone.py:7:" in text)
    assert lines[at].endswith("gone.py:7: +2.0 KiB/step in step() (1 allocation/step)")
    assert at == len(lines) - 1


def test_a_holder_in_another_file_is_drawn_under_its_path():
    report = growth_report()
    holder = Holder("HISTORY", "log", "metrics.py", 4, "global", "list", 22, "appended")
    report.sites = [Site("train.py", _line("return self.fc(x) * 1.0"), "forward", 10 * KiB, 1.0, holder)]
    report.findings = []
    metrics = "HISTORY = []\n\ndef log(x):\n    HISTORY.append(x)\n"
    text = render_text(report, sources={**SOURCES, "metrics.py": metrics})
    assert ("   |\n"
            "11 |         return self.fc(x) * 1.0\n"
            "   |         ^^^^^^^^^^^^^^^^^^^^^^^ allocated here\n"
            "  ::: metrics.py:4\n"
            "   |\n"
            " 4 |     HISTORY.append(x)\n"
            "   |     ----------------- appended to 'HISTORY' here\n") in text


@pytest.mark.parametrize("environ, coloured", [
    ({}, False),  # not a terminal
    ({"FORCE_COLOR": "1"}, True),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
])
def test_the_verify_command_colours_as_memlint_check_does(monkeypatch, tmp_path, environ, coloured):
    from click.testing import CliRunner

    import memlint.dynamic.api
    from memlint.cli import main

    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    report = growth_report()
    report.script = str(script)
    monkeypatch.setattr(memlint.dynamic.api, "run_verify", lambda options, on_progress=None: report)
    for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(main, ["verify", str(script)], env=environ)
    assert result.exit_code == 1
    assert result.output.startswith("\x1b[1;31mgrowth\x1b[0m: " if coloured else "growth: ")
    assert ("\x1b[" in result.output) == coloured


def test_a_holder_line_above_the_allocation_is_drawn_first():
    report = VerifyReport("t.py", "cpu", 4, 1, "growth", "because", 2048.0, 0.0, 0.0, sites=[
        Site("t.py", 4, "step", 2048.0, 1.0, Holder("cache", "step", "t.py", 2, "variable", "dict", 3, "stored"))])
    source = "def step(x, cache):\n    cache[len(cache)] = y = g(x)\n    h(y)\n    return f(y)\n"
    text = render_text(report, sources={"t.py": source})
    assert ("  |\n"
            "2 |     cache[len(cache)] = y = g(x)\n"
            "  |     ---------------------------- stored in 'cache' here\n"
            "...\n"
            "4 |     return f(y)\n"
            "  |     ^^^^^^^^^^^ allocated here\n") in text


def test_a_traceback_names_files_under_here_as_the_report_does(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    report = raised_report()
    report.details = (f'Traceback (most recent call last):\n  File "{tmp_path}/src/train.py", line 26, in <module>\n'
                      '  File "/usr/lib/python3/runpy.py", line 3, in run\nValueError: bad')
    lines = render_text(report).splitlines()
    assert lines[5:8] == ['    File "src/train.py", line 26, in <module>',
                          '    File "/usr/lib/python3/runpy.py", line 3, in run', "  ValueError: bad"]


def test_a_growing_line_that_no_static_finding_explains_says_so():
    report = growth_report()
    report.findings, report.static_checked = [], True
    text = render_text(report, sources=SOURCES)
    assert text.count("= no static rule covers this line") == 2  # the tensor site and the graph site
    report.static_checked = False  # no static check ran: nothing to say
    assert "no static rule covers" not in render_text(report, sources=SOURCES)
    assert "no static rule covers" not in render_text(growth_report(), sources=SOURCES)  # confirmed: covered


def test_numbers_read_as_people_read_them():
    report = stable_report()
    report.verdict, report.graph_nodes_per_step, report.tensor_bytes_per_step = "growth", -5.14706, 312.5
    report.sites[0].count_per_step = 0.166667
    report.memory = None
    text = render_text(report, sources=SOURCES)
    assert "per step: tensors +313 B, graph -5.1 nodes, RSS +520.0 KiB" in text
    assert "(1 allocation every 6 steps)" in text and "0.166667" not in text
    report.sites = [Site("train.py", _line("all_logits.append"), "main", 0, 312.96, None)]
    assert "autograd graph +313 nodes/step" in render_text(report, sources=SOURCES)


def test_notes_come_under_the_run_line():
    report = stable_report()
    report.notes = ["the 23 steps ran training only; `evaluate()` was never reached — run with more steps or "
                    "--step-on"]
    lines = render_text(report, sources=SOURCES).splitlines()
    assert lines[2] == "  note: " + report.notes[0]


def test_a_multi_line_exception_is_quoted_by_its_first_line_without_terminal_escapes():
    from memlint.dynamic.assess import assess
    from memlint.dynamic.child import headline
    from memlint.dynamic.launcher import ChildOutcome
    from memlint.dynamic.options import build_options

    error = RuntimeError("Weights only load failed.\n\x1b[1mIn PyTorch 2.6\x1b[0m the default changed.\n"
                         "Check the documentation of torch.load to learn more about types accepted by default.")
    trace = f"Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nRuntimeError: {error}"
    result = {"rank": 0, "status": "raised", "step": 0, "device": "cpu", "traceback": trace,
              "headline": headline(error)}
    [rank] = assess(ChildOutcome(0, results={0: result}), build_options(script="train.py"))
    assert rank.reason == ("the script raised before the first of 23 steps (3 warmup + 20 measured): "
                           "RuntimeError: Weights only load failed.")
    assert "\x1b" not in rank.details and "In PyTorch 2.6 the default changed." in rank.details
