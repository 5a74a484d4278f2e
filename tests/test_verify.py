"""memlint verify end to end: real training scripts from fixtures/verify/ run on CPU."""

from __future__ import annotations

import json
import os
import re

import pytest

from memlint.dynamic.system import is_running
from verify_helpers import FAST, fixture, line_of, plan, verify, verify_json

pytestmark = pytest.mark.slow

# fixture -> (kind of evidence, text on the attributed line, holder, text on the holder's line)
LEAKS = {
    "leak_graph_accumulation.py": ("graph", "total_loss += loss", "total_loss", "total_loss += loss"),
    "leak_outputs_kept.py": ("tensor", "return self.fc2(h) * 1.0", "all_logits", "all_logits.append(logits)"),
    "leak_forward_hook.py": ("tensor", "h = torch.tanh(self.hidden(x))", "activations", "activations.append(output)"),
    "leak_running_stat.py": ("graph", "smoothed = 0.98 * smoothed", "smoothed", "smoothed = 0.98 * smoothed"),
    "leak_memoizing_module.py": ("tensor", "y = torch.relu(self.linear(x))", "model.block.cache",
                                 "self.cache[self.calls] = y"),
}
CLEAN = ["clean_varying_batch.py", "clean_adam_state.py", "clean_eval_no_grad.py", "clean_item_metrics.py",
         "clean_detached_scalar.py", "clean_manual_step.py"]
FAILING = ["fail_raises.py", "fail_sys_exit.py", "fail_os_exit.py", "fail_segfault.py", "fail_never_steps.py",
           "fail_own_profiler.py", "fail_import_error.py"]
DDP = (fixture("ddp_gloo.py"), "--nproc-per-node", "2", "--steps", "6", "--warmup", "2")
PEAK = (fixture("peak_residual_mlp.py"), *FAST, "--gpu-memory", "RTX4090")

# Runs the tests below ask for, started together on all cores at the first request.
plan("--format", "json", *DDP)
plan("--format", "json", *PEAK)
for _name in [*sorted(LEAKS), "leak_average_meter.py", *CLEAN, *FAILING]:
    plan("--format", "json", fixture(_name), *FAST)
for _name in ["leak_graph_accumulation.py", "fail_raises.py", "fail_segfault.py"]:
    plan(fixture(_name), *FAST)
plan(fixture("fail_raises.py"), "--steps", "4", "--warmup", "8")
plan("--format", "json", *FAST, "-m", "clean_item_metrics", cwd=fixture("."))
plan("--format", "json", fixture("leak_batch_inference.py"), *FAST, "--step-on", "module")
plan("--format", "json", fixture("clean_batch_inference.py"), *FAST, "--step-on", "optimizer")


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_leak_reads_growth_at_the_right_line(name):
    kind, site_text, holder, holder_text = LEAKS[name]
    code, report = verify_json(fixture(name), *FAST)
    assert code == 1 and report["verdict"] == "growth", report["reason"]
    site = report["sites"][0]
    assert os.path.samefile(site["path"], fixture(name))
    assert site["line"] == line_of(name, site_text)
    assert site["holder"]["name"] == holder
    assert site["holder"]["line"] == line_of(name, holder_text)
    if kind == "graph":  # tensor bytes stay flat, the graph grows
        assert site["bytes_per_step"] == 0 and report["graph_nodes_per_step"] >= 1
    else:
        assert report["tensor_bytes_per_step"] >= 1024 and site["bytes_per_step"] >= 1024


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_static_findings_on_the_leaking_line_are_confirmed(name):
    _, report = verify_json(fixture(name), *FAST)
    for finding in report["findings"]:
        assert finding["confirmed"], finding
        assert finding["line"] == line_of(name, LEAKS[name][3])


def test_a_meter_leak_grows_inside_the_method_and_confirms_the_finding_at_the_call():
    name = "leak_average_meter.py"
    code, report = verify_json(fixture(name), *FAST)
    assert code == 1 and report["verdict"] == "growth", report["reason"]
    site = report["sites"][0]
    assert (site["line"], site["function"]) == (line_of(name, "self.sum += val * n"), "update")
    assert site["holder"]["name"] == "losses.sum"
    [finding] = report["findings"]
    assert finding["line"] == line_of(name, "losses.update(loss") and finding["confirmed"], finding


@pytest.mark.parametrize("name", CLEAN)
def test_clean_loop_reads_stable(name):
    code, report = verify_json(fixture(name), *FAST)
    assert code == 0 and report["verdict"] == "stable", report["reason"]
    assert report["graph_nodes_per_step"] == 0
    assert not [f for f in report["findings"] if f["confirmed"]]


def test_one_detached_scalar_per_step_is_seen_but_stable():
    _, report = verify_json(fixture("clean_detached_scalar.py"), *FAST)
    assert 0 < report["tensor_bytes_per_step"] < 1024
    assert report["sites"][0]["holder"]["name"] == "losses"


def test_json_has_exactly_the_designed_shape():
    _, report = verify_json(fixture("leak_outputs_kept.py"), *FAST)
    assert set(report) == {"script", "device", "steps", "warmup", "step_boundary", "verdict", "reason",
                           "tensor_bytes_per_step", "graph_nodes_per_step", "rss_bytes_per_step", "samples", "sites",
                           "findings", "memory", "ranks", "notes"}  # notes: added, as the contract allows
    assert set(report["memory"]) == {"peak_bytes", "peak_step", "peak_phase", "peak_by_category",
                                     "high_water_by_category", "fit", "levers", "levers_matter", "warmup_only"}
    assert report["memory"]["fit"] is None  # no --gpu-memory, and no GPU
    assert report["memory"]["levers_matter"] is False  # a 1 MiB peak: no lever matters on any card
    assert report["device"] == "cpu" and report["steps"] == 8 and report["warmup"] == 2
    assert report["step_boundary"] == "optimizer"
    assert [s["step"] for s in report["samples"]] == list(range(1, 11))
    assert set(report["samples"][0]) == {"step", "tensor_bytes", "graph_nodes", "rss_bytes"}
    assert set(report["sites"][0]) == {"path", "line", "function", "bytes_per_step", "count_per_step", "holder"}
    assert report["sites"][0]["holder"] == {
        "name": "all_logits", "function": "main", "path": report["sites"][0]["path"], "kind": "variable",
        "line": line_of("leak_outputs_kept.py", "all_logits.append(logits)"), "container": "list", "items": 9,
        "action": "appended"}
    assert report["findings"] and {"code", "line", "path", "confirmed", "reached"} <= set(report["findings"][0])
    assert report["ranks"] == [] and report["notes"] == []


def test_text_report_names_the_line_and_the_holder():
    code, out, _ = verify(fixture("leak_graph_accumulation.py"), *FAST)
    assert code == 1
    assert out.splitlines()[0].startswith("growth: the autograd graph grows")
    line = line_of("leak_graph_accumulation.py", "total_loss += loss")
    block = out[out.index(f"leak_graph_accumulation.py:{line}:9: autograd graph +"):]
    assert " in train(), kept alive by 'total_loss'" in block.splitlines()[0]
    assert f"{line} |         total_loss += loss" in block and "accumulated into 'total_loss' here" in block
    assert f"confirms ML101 at {os.path.relpath(fixture('leak_graph_accumulation.py'))}:{line}" in block
    assert "[confirmed by this run]" in out


def test_module_mode_runs_like_python_dash_m():
    code, report = verify_json(*FAST, "-m", "clean_item_metrics", cwd=fixture("."))
    assert code == 0 and report["script"] == "-m clean_item_metrics" and report["verdict"] == "stable"


# -- failure modes: always a report, exit 2, a plain reason -------------------------------------

def test_script_that_raises_shows_its_traceback_tail():
    code, out, _ = verify(fixture("fail_raises.py"), *FAST)
    assert code == 2
    assert out.startswith("inconclusive: the script raised after 5 of 10 steps")
    assert "\nthe script's traceback:\n  Traceback (most recent call last):" in out
    assert "ValueError: corrupt record in shard 3 at batch 5" in out
    assert f'fail_raises.py", line {line_of("fail_raises.py", "raise ValueError")}, in load_batch' in out
    assert "memlint/dynamic" not in out and "runpy" not in out


def test_sys_exit_before_the_last_step():
    code, report = verify_json(fixture("fail_sys_exit.py"), *FAST)
    assert code == 2 and report["verdict"] == "inconclusive"
    assert report["reason"] == "the script called sys.exit(3) after 3 of 10 steps (2 warmup + 8 measured)"


def test_os_exit_before_the_last_step():
    code, report = verify_json(fixture("fail_os_exit.py"), *FAST)
    assert code == 2 and report["verdict"] == "inconclusive"
    assert "exit code 0 after 3 of 10 steps" in report["reason"] and "os._exit" in report["reason"]


def test_segfault_is_reported_with_the_python_stack():
    code, out, _ = verify(fixture("fail_segfault.py"), *FAST)
    assert code == 2
    assert out.startswith("inconclusive: the script crashed with SIGSEGV after 3 of 10 steps")
    assert "\nthe script's last output:\n" in out
    assert "in read_native_buffer" in out  # faulthandler's dump of the user's frames


def test_timeout_kills_the_script_and_its_children(tmp_path):
    pid_file = tmp_path / "helper.pid"
    code, report = verify_json(fixture("fail_hangs.py"), *FAST, "--timeout", "15", "--", "--pid-file", str(pid_file))
    assert code == 2 and report["verdict"] == "inconclusive"
    # The script hangs at its third step; on a busy machine it may not have got that far.
    assert re.match(r"timed out after 15 s, (after [12] of|before the first of) 10 steps", report["reason"]), (
        report["reason"])
    assert report["device"] == "cpu"  # what it ran on, even with no result from the script
    assert not is_running(int(pid_file.read_text()))


def test_an_import_error_in_the_script_is_named_as_the_cause():
    code, report = verify_json(fixture("fail_import_error.py"), *FAST)
    assert code == 2 and report["verdict"] == "inconclusive" and report["device"] == "cpu"
    assert report["reason"] == ("the script raised before the first of 10 steps (2 warmup + 8 measured): "
                                "ModuleNotFoundError: No module named 'shard_reader_that_is_not_installed'")


def test_a_peak_of_warmup_steps_only_says_so():
    code, out, _ = verify(fixture("fail_raises.py"), "--steps", "4", "--warmup", "8")  # it raises at step 5
    assert code == 2
    assert re.search(r"^peak memory: .* in step [1-5](, unfinished when the script raised)? \(\w+\), the highest "
                     r"of the 5 warm-up steps that ran: no measured step ran", out, re.M), out


def test_ctrl_c_stops_the_script_and_its_children(tmp_path):
    from memlint.dynamic.launcher import run_child
    from memlint.dynamic.options import build_options

    pid_file = tmp_path / "helper.pid"
    options = build_options(None, script=fixture("fail_hangs.py"), args=["--pid-file", str(pid_file)],
                            steps=8, warmup=2, timeout=60)

    def press_ctrl_c(step):
        if step >= 2:
            raise KeyboardInterrupt

    outcome = run_child(options, str(tmp_path), on_progress=press_ctrl_c)
    assert outcome.interrupted and outcome.progress == {0: 2}
    assert not is_running(int(pid_file.read_text()))


def test_script_that_never_steps():
    code, report = verify_json(fixture("fail_never_steps.py"), *FAST)
    assert code == 2 and report["verdict"] == "inconclusive" and report["step_boundary"] is None
    assert report["reason"].startswith("the script finished without a single step: it never stepped an optimizer, "
                                       "drew batches from a torch.utils.data.DataLoader, called an nn.Module")
    assert "memlint.step()" in report["reason"]


def test_step_on_forces_the_boundary():
    code, report = verify_json(fixture("leak_batch_inference.py"), *FAST, "--step-on", "module")
    assert code == 1 and report["step_boundary"] == "module_call", report["reason"]
    code, report = verify_json(fixture("clean_batch_inference.py"), *FAST, "--step-on", "optimizer")
    assert code == 2 and report["verdict"] == "inconclusive" and report["step_boundary"] is None
    assert report["reason"] == ("the script finished without a single step: it never called an optimizer's "
                                "step() (--step-on optimizer)")


def test_script_with_its_own_profiler_is_inconclusive_never_stable():
    code, report = verify_json(fixture("fail_own_profiler.py"), *FAST)
    assert code == 2 and report["verdict"] == "inconclusive"
    assert "another torch.profiler was active" in report["reason"]


def test_missing_script_is_a_usage_error():
    from click.testing import CliRunner

    from memlint.cli import main

    result = CliRunner().invoke(main, ["verify", fixture("no_such_script.py")])
    assert result.exit_code == 2 and "no such script" in result.stderr


def test_missing_torch_says_how_to_install_it(monkeypatch):
    import importlib.util

    from click.testing import CliRunner

    from memlint.cli import main

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real_find_spec(name, *a))
    result = CliRunner().invoke(main, ["verify", fixture("clean_adam_state.py")])
    assert result.exit_code == 2
    assert "pip install 'torch-memlint[verify]'" in result.stderr


# -- distributed, trace, plot, API, config -------------------------------------------------------

def test_two_ranks_on_gloo_report_each_rank_and_the_worst():
    code, report = verify_json(*DDP)
    assert code == 1 and report["verdict"] == "growth"
    ranks = {r["rank"]: r for r in report["ranks"]}
    assert sorted(ranks) == [0, 1]
    assert ranks[0]["verdict"] == "growth" and ranks[1]["verdict"] == "stable"
    assert report["reason"].startswith("rank 0: the autograd graph grows")
    graph_site = [s for s in report["sites"] if s["bytes_per_step"] == 0][0]
    assert graph_site["line"] == line_of("ddp_gloo.py", "logged_losses.append(loss)")


def test_each_rank_measures_its_own_peak_and_the_report_shows_the_highest():
    _, report = verify_json(*DDP)
    params = (16 * 64 + 64 + 64 + 1) * 4
    memories = [rank["memory"] for rank in report["ranks"]]
    for memory in memories:
        assert memory["high_water_by_category"]["parameters"] == params
        assert memory["high_water_by_category"]["gradients"] == params
        assert memory["high_water_by_category"]["optimizer_state"] == 0  # SGD without momentum
        assert memory["high_water_by_category"]["activations"] >= (32 * 16 + 32 * 64) * 4  # input, ReLU output
        assert any("FSDP (full sharding over the 2 ranks)" in lever["what"] for lever in memory["levers"])
    assert report["memory"] == max(memories, key=lambda m: m["peak_bytes"])


# -- the step's peak, its composition and the fit ------------------------------------------------

PEAK_PARAMETERS = 8_690_728  # worked out in the fixture's docstring


def test_peak_of_an_adamw_step_is_made_of_what_the_model_and_optimizer_hold():
    code, report = verify_json(*PEAK)
    assert code == 0, report["reason"]
    memory = report["memory"]
    high = memory["high_water_by_category"]
    assert high["parameters"] == pytest.approx(PEAK_PARAMETERS, rel=0.02)
    assert high["gradients"] == pytest.approx(PEAK_PARAMETERS, rel=0.02)
    assert high["optimizer_state"] == pytest.approx(2 * PEAK_PARAMETERS, rel=0.02)
    # Saved for backward: the stem's input, per block the norm's input and output, up's and gelu's outputs
    # (and the norm's mean and rstd), the head's input, cross_entropy's log-probabilities and target.
    saved = 128 * 256 * 4 + 4 * (128 * (256 + 256 + 1024 + 1024) * 4 + 2 * 128 * 4) + 128 * 256 * 4 + 128 * 10 * 4
    assert high["activations"] == pytest.approx(saved, rel=0.02)
    assert memory["peak_step"] > 2 and memory["peak_phase"] in ("forward", "backward", "optimizer", "other")
    assert sum(memory["peak_by_category"].values()) == memory["peak_bytes"]
    fit = memory["fit"]
    assert fit["capacity_bytes"] == int(23.64 * 2**30) and fit["fits"] is True
    assert fit["projected_bytes"] > memory["peak_bytes"] + 512 * 2**20
    assert fit["headroom_bytes"] == fit["capacity_bytes"] - fit["projected_bytes"]
    assert fit["max_batch"] > 128
    [eight_bit] = [lever for lever in memory["levers"] if lever["what"].startswith("8-bit optimizer state")]
    assert "AdamW8bit" in eight_bit["what"] and 0 < eight_bit["saves_bytes"] <= 0.75 * high["optimizer_state"]
    assert any("4 Block blocks in ResidualMLP.blocks" in lever["what"] for lever in memory["levers"])


def test_text_report_has_the_memory_table_the_fit_and_the_plot_stacks_it(tmp_path):
    svg = tmp_path / "memory.svg"
    # a small card, so that the levers matter: on a 24 GiB card this model is too small for any
    code, out, _ = verify(fixture("peak_residual_mlp.py"), *FAST, "--gpu-memory", "2GiB", "--plot", str(svg))
    assert code == 0
    assert re.search(r"^peak memory: [\d.]+ MiB in step \d+ \((forward|backward|optimizer|other)\)", out, re.M)
    assert re.search(r"^  optimizer state +16\.6 MiB +16\.6 MiB", out, re.M)
    assert "fit on 2GiB, a projection:" in out and ": fits, " in out and "largest batch that would fit" in out
    assert "levers on the peak (estimated from this measurement):" in out
    text = svg.read_text()
    assert "peak by class" in text and text.count("optimizer state ") >= 10  # one bar segment per step


def test_bad_gpu_memory_is_a_usage_error():
    from click.testing import CliRunner

    from memlint.cli import main

    result = CliRunner().invoke(main, ["verify", fixture("clean_adam_state.py"), "--gpu-memory", "A100"])
    assert result.exit_code == 2 and "say which, A100-40GB or A100-80GB" in result.stderr


def test_trace_dir_and_plot(tmp_path):
    trace_dir, svg = tmp_path / "trace", tmp_path / "memory.svg"
    code, out, err = verify(fixture("leak_outputs_kept.py"), "--steps", "4", "--warmup", "1",
                            "--trace-dir", str(trace_dir), "--plot", str(svg))
    assert code == 1
    traces = list(trace_dir.glob("rank0.*.pt.trace.json"))
    assert len(traces) == 1
    events = json.loads(traces[0].read_text())["traceEvents"]
    assert any(e.get("name") == "[memory]" for e in events)
    assert "USDT" not in out + err
    text = svg.read_text()
    assert text.startswith("<svg") and "<polyline" in text and "stroke-dasharray" in text


def test_html_plot_is_self_contained(tmp_path):
    page = tmp_path / "memory.html"
    code, _, _ = verify(fixture("clean_adam_state.py"), *FAST, "--plot", str(page))
    text = page.read_text()
    assert code == 0 and "<svg" in text and "<script" not in text and "stable" in text


def test_python_api_returns_the_report_dataclass():
    import memlint
    from memlint.dynamic.report import VerifyReport

    report = memlint.verify_script(fixture("leak_graph_accumulation.py"), steps=6, warmup=2, static_check=False)
    assert isinstance(report, VerifyReport)
    assert report.verdict == "growth" and report.exit_code == 1 and report.findings == []
    assert report.sites[0].holder.name == "total_loss"


def test_thresholds_come_from_pyproject(tmp_path, monkeypatch):
    import memlint

    (tmp_path / "pyproject.toml").write_text("[tool.memlint.verify]\nthreshold = 64\nsteps = 6\nwarmup = 2\n")
    monkeypatch.chdir(tmp_path)
    report = memlint.verify_script(fixture("clean_detached_scalar.py"), static_check=False)
    assert report.steps == 6 and report.verdict == "growth"  # 128 B/step is above 64 B
