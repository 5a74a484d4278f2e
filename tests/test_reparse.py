"""Re-parsing only what an edit touched (the language server's parser): the tree it builds
gives back the new text exactly, shares the untouched statements with the old tree, and
checking with it finds what a full parse finds."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from memlint.catalogue import all_codes
from memlint.static.reparse import IncrementalParser
from memlint.static.file_check import check_contents
from memlint.static.source import UncheckableFile, parse

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))
CODES = sorted(all_codes())

MODULE = textwrap.dedent("""\
    \"\"\"A training module.\"\"\"
    import torch


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.history = []

        def step(self, batch):
            loss = self.model(batch).sum()
            loss.backward()
            return loss

        def fit(self, loader):
            for batch in loader:
                loss = self.step(batch)
                self.history.append(loss.item())


    def main():
        Trainer(torch.nn.Linear(2, 1)).fit([])
""")


def edited(text: str, rng: random.Random) -> str:
    """One edit as a person makes them: a statement typed, a line deleted or duplicated,
    a name changed, a comment added."""
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    kind = rng.choice(["type", "type", "delete", "duplicate", "rename", "comment", "blank"])
    if kind == "type":
        lines.insert(i, indent + rng.choice(["x = 1", "total += loss", "losses.append(loss)", "model.eval()",
                                             "# a note", "out = model(x)"]) + "\n")
    elif kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "rename":
        lines[i] = lines[i].replace("loss", "los", 1).replace("no_grad", "enable_grad", 1)
    elif kind == "comment":
        lines[i] = lines[i].rstrip("\r\n") + "  # noqa: ML101\n"
    else:
        lines.insert(i, "\n")
    return "".join(lines)


def test_the_tree_gives_back_the_text_after_every_edit_and_most_edits_are_partial():
    rng = random.Random(15)
    how: dict[str, int] = {}
    for path in FIXTURES:
        text = path.read_text(encoding="utf-8")
        parser = IncrementalParser()
        parser(text)
        for _ in range(8):
            text = edited(text, rng)
            try:
                module = parser(text)
            except UncheckableFile:
                with pytest.raises(UncheckableFile):
                    parse(text)
                continue
            assert module.code == text, path.name
            how[parser.reparsed] = how.get(parser.reparsed, 0) + 1
    assert how.get("partial", 0) > 3 * how.get("full", 0), how


def test_checking_with_it_finds_what_a_full_parse_finds():
    rng = random.Random(4)
    for name in ("ML101_train_loss_accumulation.py", "ML201_eval_without_no_grad.py", "ML102_truncated_bptt.py",
                 "ML101_average_meter.py"):
        path = ROOT / "fixtures" / name
        text = path.read_text(encoding="utf-8")
        parser = IncrementalParser()
        check_contents(str(path), text, CODES, (), parser)
        for _ in range(10):
            text = edited(text, rng)
            assert check_contents(str(path), text, CODES, (), parser) == check_contents(str(path), text, CODES)


def test_an_edit_in_a_method_reparses_the_statements_around_it_only():
    parser = IncrementalParser()
    old = parser(MODULE)
    parser.prepare()
    new = parser(MODULE.replace("        loss.backward()\n", "        loss.backward()\n        total += loss\n"))
    assert parser.reparsed == "partial"
    old_class, new_class = old.body[2], new.body[2]
    assert new.body[0] is old.body[0] and new.body[1] is old.body[1] and new.body[3] is old.body[3]
    assert new_class.body.body[0] is old_class.body.body[0] and new_class.body.body[2] is old_class.body.body[2]
    old_step, new_step = old_class.body.body[1], new_class.body.body[1]
    assert new_step.body.body[0] is old_step.body.body[0]  # (the two around the new line are parsed again)
    assert len(new_step.body.body) == len(old_step.body.body) + 1


@pytest.mark.parametrize("before, after", [
    (MODULE, MODULE.replace('"""A training module."""', '"""The training module."""')),  # the top: full
    (MODULE, MODULE + "\n\ndef extra():\n    return 1\n"),  # typed at the end
    (MODULE, MODULE.rstrip("\n")),  # no newline at the end any more
    (MODULE + "    extra()", MODULE),  # the last line, without its newline, deleted
    (MODULE + "    extra()", MODULE + "    extra(1)"),
    (MODULE, MODULE.replace("        self.history = []\n", "        if True:\n            self.history = []\n")),
    (MODULE, MODULE.replace("    def fit(self, loader):\n", "    def fit(self, loader):\n        # comment\n")),
    (MODULE, MODULE.replace("    def fit(self, loader):\n", "# moved out\n    def fit(self, loader):\n")),
    (MODULE, MODULE.replace("\n\n    def main", "\n\nx = [\n    1,\n]\n\n    def main").replace("    def main", "def main")),
    (MODULE.replace("\n", "\r\n"), MODULE.replace("\n", "\r\n").replace("loss.backward()", "loss.sum().backward()")),
    (MODULE.replace("    ", "\t"), MODULE.replace("    ", "\t").replace("loss.backward()", "loss.sum().backward()")),
    (MODULE.replace("    ", "  "), MODULE.replace("    ", "  ").replace("loss.backward()", "loss.sum().backward()")),
    (MODULE.replace("import torch\n", "import torch\n\x0c\n"),
     MODULE.replace("import torch\n", "import torch\n\x0c\n").replace("loss.backward()", "loss.sum().backward()")),
    (MODULE, MODULE.replace("        return loss\n", "        return loss\n        # trailing\n")),
    (MODULE, MODULE.replace("        return loss\n", "        return loss\n    # trailing\n")),
    (MODULE, MODULE.replace("        return loss\n\n", "")),  # two methods become one
])
def test_edits_at_awkward_places_give_the_text_back(before, after):
    parser = IncrementalParser()
    parser(before)
    module = parser(after)
    assert module.code == after
    assert module.deep_equals(cst.parse_module(after)) or parser.reparsed == "partial"


@pytest.mark.parametrize("broken", [
    MODULE.replace("for batch in loader:", "for batch in loader"),
    MODULE.replace("loss.backward()", "loss.backward("),
    MODULE.replace("        return loss\n", "        return '''loss\n"),
    MODULE.replace("    def fit", "  def fit"),
    MODULE.replace("        self.history = []\n", "            self.history = []\n"),
])
def test_a_syntax_error_is_the_one_a_full_parse_reports_and_the_next_edit_recovers(broken):
    parser = IncrementalParser()
    parser(MODULE)
    with pytest.raises(UncheckableFile) as quick:
        parser(broken)
    with pytest.raises(UncheckableFile) as full:
        parse(broken)
    assert (quick.value.message, quick.value.line, quick.value.column) == (
        full.value.message, full.value.line, full.value.column)
    fixed = MODULE.replace("loss.backward()", "loss.mean().backward()")
    assert parser(fixed).code == fixed


def test_positions_kept_across_versions_are_those_of_a_full_positioning():
    # Positions reuses what it computed for a statement the re-parse left untouched (same
    # node object), shifted to its new first line: every node must still be where libcst puts it.
    from libcst.metadata import MetadataWrapper, PositionProvider

    from memlint.static.positions import Positions

    rng = random.Random(7)
    for name in ("ML101_train_loss_accumulation.py", "ML201_eval_without_no_grad.py"):
        text = (ROOT / "fixtures" / name).read_text(encoding="utf-8")
        parser = IncrementalParser()
        parser(text)
        for _ in range(6):
            text = edited(text, rng)
            try:
                module = parser(text)
            except UncheckableFile:
                continue
            full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
            kept = Positions(module, text, parser.positions_memo)
            for node, where in full.items():
                if node is not module:
                    assert kept[node] == where, (name, node)
