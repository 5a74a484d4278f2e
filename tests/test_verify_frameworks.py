"""memlint verify on scripts built on the frameworks users train with, leaky and clean.

Each case is a pair of fixtures in fixtures/verify/ (leak_<case>.py, clean_<case>.py) run by
the real framework on CPU: tiny models built from configs, nothing downloaded. A leak must
read growth and name its line as a holder (the path a user recognises, and the line that
grows it), the clean twin must read stable, and both must say which step boundary was used.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from verify_helpers import fixture, line_of, plan, verify, verify_json

pytestmark = pytest.mark.slow

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # inherited by the verify child: no hub lookups
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

RUN = ("--steps", "6", "--warmup", "2")


class Case:
    def __init__(self, needs, boundary, holder, kind, holder_text, site_text=None):
        self.needs = needs  # the framework's import name (None: torch only)
        self.boundary = boundary
        self.holder = holder  # the holder's name in the report
        self.kind = kind  # where that name starts (report.Holder.kind)
        self.holder_text = holder_text  # text of the line that grows the holder
        self.site_text = site_text  # text of the line that allocated what survives, when checked


CASES = {
    # The model is passed inline to trainer.fit(): Lightning holds it, no variable of the script does.
    "lightning_module_state": Case("lightning", "optimizer", "Regressor.step_losses", "instance",
                                   "self.step_losses.append(loss)"),
    # Allocated at model(**inputs) inside transformers' forward, held by a class-level list.
    "hf_trainer_subclass": Case("transformers", "optimizer", "KeepLogits.seen", "class_attribute",
                                "self.seen.append(out.logits)", site_text="out = model(**inputs)"),
    # bf16 autocast + gradient accumulation: the optimizer steps every 4 batches; only the graph grows.
    "accelerate_bf16_accumulation": Case("accelerate", "optimizer", "running_loss", "variable",
                                         "running_loss += loss"),
    # The handler is a closure registered inside the Engine.
    "ignite_handler": Case("ignite", "optimizer", "outputs", "closure", "outputs.append(engine.state.output[0])"),
    "compiled_model": Case(None, "optimizer", "LOSS_HISTORY", "global", "LOSS_HISTORY.append(loss)"),
    "dataloader_workers_scheduler": Case(None, "optimizer", "lr_log", "variable", "lr_log.append("),
    # No optimizer: one step per batch.
    "batch_inference": Case(None, "dataloader", "scores", "variable", "scores.append(model(features))"),
    # No optimizer, no DataLoader: one step per call of the outermost module.
    "serving_loop": Case(None, "module_call", "Server.responses", "variable",
                         "self.responses[request_id] = scores", site_text="return self.score(self.embed(tokens))"),
}


def _available(case: Case) -> bool:
    return case.needs is None or importlib.util.find_spec(case.needs) is not None


def _params():
    for name, case in CASES.items():
        marks = [] if _available(case) else [pytest.mark.skip(reason=f"{case.needs} is not installed")]
        yield pytest.param(name, marks=marks, id=name)


for _name, _case in CASES.items():
    if _available(_case):
        plan("--format", "json", fixture(f"leak_{_name}.py"), *RUN)
        plan("--format", "json", fixture(f"clean_{_name}.py"), *RUN)
if _available(CASES["lightning_module_state"]):
    plan(fixture("leak_lightning_module_state.py"), *RUN)


@pytest.mark.parametrize("name", list(_params()))
def test_leak_reads_growth_and_names_its_holder_and_line(name):
    case, script = CASES[name], f"leak_{name}.py"
    code, report = verify_json(fixture(script), *RUN)
    assert code == 1 and report["verdict"] == "growth", report["reason"]
    assert report["step_boundary"] == case.boundary
    held = [s for s in report["sites"] if s["holder"] and s["holder"]["name"] == case.holder]
    assert held, [(s["line"], s["holder"]) for s in report["sites"]]
    holder = held[0]["holder"]
    assert holder["kind"] == case.kind and os.path.samefile(holder["path"], fixture(script))
    assert holder["line"] == line_of(script, case.holder_text)
    if case.site_text:
        assert any(s["line"] == line_of(script, case.site_text) and s["bytes_per_step"] > 0 for s in held)
    for finding in report["findings"]:  # every static finding on a leak is explained by the run
        assert finding["confirmed"], finding


@pytest.mark.parametrize("name", list(_params()))
def test_clean_twin_reads_stable(name):
    case = CASES[name]
    code, report = verify_json(fixture(f"clean_{name}.py"), *RUN)
    assert code == 0 and report["verdict"] == "stable", report["reason"]
    assert report["step_boundary"] == case.boundary
    assert report["graph_nodes_per_step"] == 0 and report["findings"] == []


@pytest.mark.skipif(not _available(CASES["lightning_module_state"]), reason="lightning is not installed")
def test_lightning_text_report_shows_boundary_holder_and_confirmation():
    code, out, _ = verify(fixture("leak_lightning_module_state.py"), *RUN)
    line = line_of("leak_lightning_module_state.py", "self.step_losses.append(loss)")
    assert code == 1
    assert out.splitlines()[0].startswith("growth: the autograd graph grows")
    assert "(held by Regressor.step_losses)" in out.splitlines()[0]
    assert out.splitlines()[1].endswith("(cpu, 2 warmup + 6 measured steps; a step is one optimizer step)")
    assert (f"kept alive by 'Regressor.step_losses' (list, 8 items, appended at "
            f"{os.path.relpath(fixture('leak_lightning_module_state.py'))}:{line})") in out
    assert f"confirms ML101 at {os.path.relpath(fixture('leak_lightning_module_state.py'))}:{line}" in out
    assert "[confirmed by this run]" in out
