"""benchmarks/recall/ and its sealed parts (sealed/ to sealed5/): every case is well formed (a thread, a
confirmed cause, a class, markers naming real codes, valid Python), every twin has its case, no
thread is reconstructed twice across the parts, and score.py classifies findings as its
docstring says. The recall numbers themselves are measured by hand (score.py), not here; the
sealed part is scored once, at the end, by the lead."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from memlint.catalogue import all_codes

RECALL = Path(__file__).resolve().parents[1] / "benchmarks" / "recall"


def _load_score():
    spec = importlib.util.spec_from_file_location("recall_score", RECALL / "score.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class is built
    spec.loader.exec_module(module)
    return module


score = _load_score()
CASES = score.discover(RECALL)
SEALED = score.discover(RECALL / "sealed")
SEALED2 = score.discover(RECALL / "sealed2")  # the second sealed part, written after the first was spent
SEALED3 = score.discover(RECALL / "sealed3")  # the third, written blind at the start of the next round
SEALED4 = score.discover(RECALL / "sealed4")  # the fourth, written blind after the third was scored
SEALED5 = score.discover(RECALL / "sealed5")  # the fifth, written blind after the fourth was scored


def test_collection_is_big_enough():
    assert len(CASES) >= 30
    assert len(SEALED) >= 28
    assert len(CASES) + len(SEALED) >= 100
    assert len(SEALED2) >= 20
    assert len(SEALED3) >= 26
    assert len(SEALED4) >= 26
    assert len(SEALED5) >= 18
    threads = [c.thread for c in CASES + SEALED + SEALED2 + SEALED3 + SEALED4 + SEALED5]
    assert len(set(threads)) == len(threads), "two cases reconstruct the same thread"


@pytest.mark.parametrize(
    "case",
    CASES + SEALED + SEALED2 + SEALED3 + SEALED4 + SEALED5,
    ids=[c.name for c in CASES] + [f"sealed/{c.name}" for c in SEALED] + [f"sealed2/{c.name}" for c in SEALED2] + [
        f"sealed3/{c.name}" for c in SEALED3] + [f"sealed4/{c.name}" for c in SEALED4] + [
        f"sealed5/{c.name}" for c in SEALED5],
)
def test_case_is_well_formed(case):
    text = case.path.read_text(encoding="utf-8")
    ast.parse(text)
    assert re.match(r"https://(github\.com|discuss\.pytorch\.org)/\S+$", case.thread), case.thread
    assert "# Confirmed cause:" in text and case.leak_class
    assert re.search(r"^(import|from) (torch|lightning|pytorch_lightning|transformers|accelerate)\b", text, re.M)
    assert case.marks, "no '# leak:' marker"
    known = all_codes()
    for codes in case.marks.values():
        for code in codes:
            assert code == "ANY" or any(k.startswith(code) for k in known), f"unknown code {code}"
    if case.twin:
        twin = case.twin.read_text(encoding="utf-8")
        ast.parse(twin)
        assert not score.parse_marks(twin), "a fixed twin carries a '# leak:' marker"
        assert twin.startswith(f"# Fixed twin of case {case.number}:")


def _finding(line, code, end_line=None):
    return SimpleNamespace(line=line, end_line=end_line or line, code=code, message="m")


def _case(marks):
    return score.Case(path=Path("case_99_x.py"), number="99", slug="x", thread="", leak_class="", marks=marks)


def test_classify_named_other_code_wrong_line_missed_broken():
    case = _case({10: ("ML101",), 20: ("ANY",)})
    assert score.classify(case, [_finding(10, "ML101")])[0] == "named"
    assert score.classify(case, [_finding(20, "ML207")])[0] == "named"
    assert score.classify(case, [_finding(10, "ML207")])[0] == "other code"
    assert score.classify(case, [_finding(11, "ML101")])[0] == "wrong line"
    assert score.classify(case, [])[0] == "missed"
    assert score.classify(case, [_finding(10, "ML101"), _finding(1, "ML901")])[0] == "broken"


def test_prefix_marker_and_multi_line_span():
    case = _case({12: ("ML3",)})
    assert score.classify(case, [_finding(10, "ML302", end_line=14)])[0] == "named"
    assert score.classify(case, [_finding(10, "ML202", end_line=14)])[0] == "other code"
    assert score.classify(case, [_finding(13, "ML302", end_line=14)])[0] == "wrong line"


def test_twin_quiet_or_alarm():
    assert score.classify_twin([]) == "quiet"
    assert score.classify_twin([_finding(5, "ML101")]) == "alarm ML101@5"


def test_marker_parsing():
    marks = score.parse_marks("a = 1\ntotal += loss  # leak: ML101, ml2\nx = 2  # leak: ANY  # why\n")
    assert marks == {2: ("ML101", "ML2"), 3: ("ANY",)}


def test_score_end_to_end(tmp_path):
    header = "# Thread: https://github.com/o/r/issues/1\n# Confirmed cause: x\n# Class: y\n"
    loop = "import torch\n\n\ndef train(model, loader, opt):\n    total = 0\n    for x, y in loader:\n"
    body = "        loss = torch.nn.functional.mse_loss(model(x), y)\n        loss.backward()\n        opt.step()\n"
    (tmp_path / "case_01_sum.py").write_text(header + loop + body + "        total += loss  # leak: ML101\n")
    (tmp_path / "case_01_sum_fixed.py").write_text("# Fixed twin of case 01: item\n" + loop + body + "        total += loss.item()\n")
    cases = score.discover(tmp_path)
    score.score(cases, jobs=1)
    assert (cases[0].result, cases[0].twin_result) == ("named", "quiet")
