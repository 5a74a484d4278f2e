"""CONTRIBUTING.md's "Add a rule" works as written: in a copy of the repository, add its toy
rule (ML299) with the code blocks the guide shows, at the places it names, then run what it
says to run. If the rule API, the catalogue, the page format or the tests change, this fails
until the guide is brought up to date."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "CONTRIBUTING.md"
TOY = "ML299"
MODULE = "src/memlint/static/rules/ML299_memory_summary_per_step.py"
FIXTURE = "fixtures/ML299_memory_summary_per_step.py"
CATALOGUE_ANCHOR = "    # ML3xx distributed.\n"


def guide_blocks() -> dict[str, str]:
    """The guide's code blocks marked ``<!-- toy-rule: NAME -->``, by name."""
    text = GUIDE.read_text(encoding="utf-8")
    blocks = {}
    for match in re.finditer(r"<!-- toy-rule: (\w+) -->\n(```|~~~)\w*\n(.*?)\n\2\n", text, re.S):
        blocks[match.group(1)] = match.group(3) + "\n"
    return blocks


def copy_repository(destination: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if name.startswith("benchmarks/") and not name.startswith("benchmarks/recall/"):
            continue
        source = ROOT / name
        if os.path.lexists(source):
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name, follow_symlinks=False)


def test_the_guide_names_every_step_and_shows_every_file():
    guide = GUIDE.read_text(encoding="utf-8")
    assert set(guide_blocks()) == {"catalogue", "module", "page", "fixture"}
    for step in ("src/memlint/catalogue.py", "src/memlint/static/rules/", "rules/<CODE>.md", "VALID", "INVALID",
                 "fixtures/", "# expect: CODE", "scripts/rule_table.py", "benchmarks/recall/score.py",
                 "benchmarks/real_code.py", "benchmarks/speed.py", CATALOGUE_ANCHOR.strip()):
        assert step in guide, step


@pytest.mark.slow
def test_a_newcomer_adds_the_toy_rule_end_to_end(tmp_path):
    blocks = guide_blocks()
    copy = tmp_path / "memlint"
    copy_repository(copy)
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "NO_COLOR": "1", "MEMLINT_NO_SERVER": "1",
           "PYTHONDONTWRITEBYTECODE": "1"}

    def run(*command: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=600)
        if check:
            assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
        return done

    memlint = (sys.executable, "-m", "memlint")
    recall_before = run(sys.executable, "benchmarks/recall/score.py").stdout

    # 1. the catalogue entry, in code order
    catalogue = copy / "src/memlint/catalogue.py"
    text = catalogue.read_text(encoding="utf-8")
    assert text.count(CATALOGUE_ANCHOR) == 1, "the guide's place for an ML2xx entry is gone"
    catalogue.write_text(text.replace(CATALOGUE_ANCHOR, blocks["catalogue"] + CATALOGUE_ANCHOR), encoding="utf-8")
    # 2.-4. the module, the page, the fixture
    (copy / MODULE).write_text(blocks["module"], encoding="utf-8")
    (copy / "rules" / f"{TOY}.md").write_text(blocks["page"], encoding="utf-8")
    (copy / FIXTURE).write_text(blocks["fixture"], encoding="utf-8")
    # 5. the README's rule table
    run(sys.executable, "scripts/rule_table.py")
    assert f"| {TOY} | memory-summary-per-step | warning |" in (copy / "README.md").read_text(encoding="utf-8")

    # 6. what the guide says to run
    tests = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_rule_examples.py",
                "tests/test_fixtures.py", "tests/test_readme.py::test_rule_table_is_up_to_date", "-k",
                f"{TOY} or page or examples_and_a_page or rule_table")
    assert re.search(r"\d+ passed", tests.stdout) and "failed" not in tests.stdout, tests.stdout
    collected = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                    "tests/test_rule_examples.py", "tests/test_fixtures.py").stdout
    for test_id in (f"{TOY}-valid-0", f"{TOY}-valid-1", f"{TOY}-invalid-0", f"{TOY}-invalid-1",
                    "ML299_memory_summary_per_step.py"):
        assert test_id in collected, test_id
    page = run(*memlint, "rule", TOY.lower()).stdout
    assert page.startswith(f"# {TOY} memory-summary-per-step\n") and "## Why is this bad?" in page
    found = run(*memlint, "check", "--no-cache", FIXTURE, check=False)
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"{FIXTURE}:14:19: {TOY} torch.cuda.memory_summary() formats the allocator's state on every iteration" \
        in found.stdout
    assert "Found 1 problem (1 warning)" in found.stdout
    # the rest of the suite's checks on every rule: severities, short messages, layers
    run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "tests/test_cli.py::test_every_severity_a_rule_gives_instead_of_its_own_says_why",
        "tests/test_layers.py::test_the_package_keeps_its_layers_and_has_no_cycles")

    # 7. the recall benchmark: a rule that adds no false alarm leaves the totals' false alarms as they were
    recall_after = run(sys.executable, "benchmarks/recall/score.py").stdout
    alarms = lambda text: re.search(r"false alarms: (\d+)/", text).group(1)
    assert alarms(recall_after) == alarms(recall_before)
