"""Optimizers that loop inside their step (LBFGS) and scripts with several optimizers, run for real.

LBFGS calls its closure, and so the model, several times per ``step()``: those calls are not
steps, and its history, which fills up to ``history_size``, is not a leak. With several
optimizers a step is one round of them; one optimizer per layer trained in turn still counts
every step, and nothing reported lies beyond the steps counted.
"""

from __future__ import annotations

import os

import pytest

from verify_helpers import fixture, line_of, plan, verify, verify_json

pytestmark = pytest.mark.slow

RUN = ("--steps", "6", "--warmup", "2")
LAYERWISE = (fixture("leak_layerwise_three_optimizers.py"), "--steps", "8", "--warmup", "2")

for _name in ("clean_lbfgs_closure.py", "leak_lbfgs_closure.py", "clean_gan_two_optimizers.py"):
    plan("--format", "json", fixture(_name), *RUN)
plan(fixture("clean_gan_two_optimizers.py"), *RUN)
plan("--format", "json", *LAYERWISE)
plan(*LAYERWISE)


def _in_torch(path: str) -> bool:
    return f"{os.sep}torch{os.sep}" in path


def test_lbfgs_with_a_filling_history_is_stable_and_says_what_it_left_out():
    code, report = verify_json(fixture("clean_lbfgs_closure.py"), *RUN)
    assert code == 0 and report["verdict"] == "stable", report["reason"]
    assert report["step_boundary"] == "optimizer"  # not "a step is one call of Curve"
    assert [s["step"] for s in report["samples"]] == list(range(1, 9))
    assert report["tensor_bytes_per_step"] == 0 and report["graph_nodes_per_step"] == 0
    [note] = report["notes"]
    assert note.startswith("LBFGS's history (old_dirs, old_stps, ro, al) holds ") and "history_size=100" in note
    assert not any(_in_torch(site["path"]) for site in report["sites"])


def test_a_leak_in_an_lbfgs_closure_names_a_short_holder_and_the_line_that_stores_it():
    name = "leak_lbfgs_closure.py"
    code, report = verify_json(fixture(name), *RUN)
    assert code == 1 and report["verdict"] == "growth", report["reason"]
    assert report["step_boundary"] == "optimizer"
    holders = [site["holder"] for site in report["sites"] if site["holder"]]
    assert holders and {h["name"] for h in holders} == {"predictions"}
    assert {h["line"] for h in holders} == {line_of(name, "predictions.append(prediction)")}
    assert {h["action"] for h in holders} == {"appended"}
    sites = [site for site in report["sites"] if site["bytes_per_step"] > 0]
    assert [site["line"] for site in sites] == [line_of(name, "prediction = model(t)")]
    assert not any(_in_torch(site["path"]) or _in_torch(site["holder"]["path"] or "") for site in report["sites"])
    assert report["tensor_bytes_per_step"] >= 1024  # up to 4 closure calls a step, 1 KiB each


def test_two_optimizers_step_in_rounds():
    code, report = verify_json(fixture("clean_gan_two_optimizers.py"), *RUN)
    assert code == 0 and report["verdict"] == "stable", report["reason"]
    assert report["step_boundary"] == "optimizer"
    assert [s["step"] for s in report["samples"]] == list(range(1, 9))
    _, out, _ = verify(fixture("clean_gan_two_optimizers.py"), *RUN)
    assert "a step is one round of the 2 optimizers)" in out.splitlines()[1]


def test_one_optimizer_per_layer_trained_in_turn_counts_every_layer_and_stays_within_its_steps():
    name = "leak_layerwise_three_optimizers.py"
    code, report = verify_json(*LAYERWISE)  # 5 steps per layer: the 10 steps reach the third layer
    assert code == 1 and report["verdict"] == "growth", report["reason"]
    assert [s["step"] for s in report["samples"]] == list(range(1, 11))
    assert report["memory"]["peak_step"] <= 10
    [graph] = [site for site in report["sites"] if site["bytes_per_step"] == 0]
    assert graph["holder"]["name"] == "history" and graph["holder"]["line"] == line_of(name, "history.append(loss)")
    assert any("`evaluate()` was never reached" in note for note in report["notes"]), report["notes"]
    _, out, _ = verify(*LAYERWISE)
    assert "a step is one optimizer step)" in out.splitlines()[1]
