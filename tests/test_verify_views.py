"""Holders found by storage: what a loop keeps is often a view of what the model made.

Each case is a real tiny training script (fixtures/verify/) that keeps, with its autograd graph,
a tensor that is neither the one the tracker saw made nor the last view taken of it: a
``squeeze``, a slice, one of ``chunk(3)``, a view of a ``torch.compile``'d module's output, a
field of a Hugging Face model's output. The report must read growth, name the container of the
view and the line that stored it, and confirm the static finding on that line.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from verify_helpers import fixture, line_of, plan, verify_json

pytestmark = pytest.mark.slow

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # inherited by the verify child: no hub lookups
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

RUN = ("--steps", "6", "--warmup", "2")
HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None

# (script, its arguments) -> (the holder's name, its kind, text of the line that stores the view)
CASES = {
    ("leak_kept_view.py", "squeeze"): ("predictions", "variable", "predictions.append(outputs.squeeze(-1))"),
    ("leak_kept_view.py", "slice"): ("first_states", "variable", "first_states.append(h[:, 0])"),
    ("leak_kept_view.py", "chunk"): ("queries", "variable", "queries.append(q)"),
    ("leak_compiled_output_view.py", None): ("history", "variable", "history.append(scores.squeeze(1))"),
    ("leak_hf_output_attribute.py", None): ("last_logits", "variable", "last_logits.append(out.logits[:, -1])"),
    ("leak_hf_trainer_scores.py", None): ("KeepScores.positive_scores", "instance",
                                          "self.positive_scores.append(out.logits[:, 1])"),
}
NEEDS_TRANSFORMERS = {"leak_hf_output_attribute.py", "leak_hf_trainer_scores.py"}


def _args(script: str, view: str | None) -> tuple[str, ...]:
    return (fixture(script), *RUN, *(("--", "--view", view) if view else ()))


def _params():
    for script, view in CASES:
        skip = script in NEEDS_TRANSFORMERS and not HAS_TRANSFORMERS
        marks = [pytest.mark.skip(reason="transformers is not installed")] if skip else []
        yield pytest.param(script, view, marks=marks, id=f"{script[:-3]}-{view}" if view else script[:-3])


for _script, _view in CASES:
    if _script not in NEEDS_TRANSFORMERS or HAS_TRANSFORMERS:
        plan("--format", "json", *_args(_script, _view))


@pytest.mark.parametrize("script, view", list(_params()))
def test_the_container_of_a_kept_view_is_its_holder(script, view):
    name, kind, stored = CASES[script, view]
    code, report = verify_json(*_args(script, view))
    assert code == 1 and report["verdict"] == "growth", report["reason"]
    held = [site for site in report["sites"] if site["holder"] and site["holder"]["name"] == name]
    assert held, [(site["line"], site["holder"]) for site in report["sites"]]
    holder = held[0]["holder"]
    assert holder["kind"] == kind and os.path.samefile(holder["path"], fixture(script))
    assert holder["line"] == line_of(script, stored) and holder["action"] == "appended"
    assert any(site["bytes_per_step"] > 0 for site in held)  # the view keeps the tensor's storage alive
    findings = [f for f in report["findings"] if f["line"] == line_of(script, stored)]
    assert findings and all(f["code"] == "ML101" and f["confirmed"] for f in findings), report["findings"]
