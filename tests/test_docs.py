"""The documentation in the repository tells the truth: docs/json.md's tables list exactly the
keys memlint prints, and the links between README.md, CONTRIBUTING.md, CHANGELOG.md and docs/
lead to files that exist."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

ROOT = Path(__file__).resolve().parents[1]
JSON_DOC = ROOT / "docs" / "json.md"


def documented_keys() -> dict[str, set[str]]:
    """Each ``### heading`` of docs/json.md -> the keys in the first column of its table."""
    tables: dict[str, set[str]] = {}
    heading = None
    for line in JSON_DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            heading = line[4:].strip()
            tables[heading] = set()
        elif heading and line.startswith("| `"):
            tables[heading].update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return tables


def run_json(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False, env={"NO_COLOR": "1"})
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def check_findings(tmp_path_factory):
    import os

    old = os.getcwd()
    os.chdir(ROOT)
    try:
        return run_json("check", "--no-cache", "--format", "json", "fixtures/ML203_ddp_resume.py",
                        "fixtures/notebooks/finetune_resume.ipynb")
    finally:
        os.chdir(old)


def test_check_json_is_as_documented(check_findings):
    tables = documented_keys()
    assert set().union(*(f.keys() for f in check_findings)) == tables["A finding"]
    fix = next(f["fix"] for f in check_findings if f["fix"])
    assert set(fix) == tables["fix"]
    assert set(fix["edits"][0]) == tables["An edit"]
    example = re.search(r"```json\n(.*?)```", JSON_DOC.read_text(encoding="utf-8"), re.S).group(1)
    [shown] = json.loads(example)
    assert set(shown) == tables["A finding"] - {"cell"}
    assert set(shown["fix"]) == tables["fix"] and set(shown["fix"]["edits"][0]) == tables["An edit"]


def test_statistics_and_rules_json_are_as_documented():
    tables = documented_keys()
    [statistics] = run_json("check", "--no-cache", "--statistics", "--format", "json",
                            str(ROOT / "fixtures" / "ML203_ddp_resume.py"))
    assert set(statistics) == tables["--statistics --format json"]
    rules = run_json("rules", "--format", "json")
    assert {key for rule in rules for key in rule} == tables["memlint rules --format json"]


@pytest.mark.slow
def test_verify_json_is_as_documented(check_findings):
    """A real run that grows (sites with a holder, a confirmed finding) projected onto a GPU
    (fit, levers); a rank's keys from the rank report itself (a distributed run takes longer)."""
    import os

    from memlint.dynamic.report import RankReport

    tables = documented_keys()
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        report = run_json("verify", "--format", "json", "--gpu-memory", "24GiB", "fixtures/verify/leak_outputs_kept.py")
    finally:
        os.chdir(old)
    assert set(report) == tables["The report"]
    assert set(report["samples"][0]) == tables["samples[]"]
    assert set(report["sites"][0]) == tables["sites[]"]
    assert set(report["sites"][0]["holder"]) == tables["holder"]
    finding_keys = tables["A finding"] - {"cell"}
    assert set(report["findings"][0]) - finding_keys == tables["findings[]"]
    memory = report["memory"]
    assert set(memory) == tables["memory"]
    assert set(memory["peak_by_category"]) == set(memory["high_water_by_category"]) == tables["peak_by_category"]
    assert set(memory["fit"]) == tables["fit"]
    assert set(memory["levers"][0]) == tables["levers[]"]
    assert set(RankReport(0, "stable", "").to_json()) == tables["ranks[]"]


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "docs/json.md",
                                  "docs/architecture.md"])
def test_links_between_the_documents_lead_to_files_that_exist(page):
    path = ROOT / page
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (path.parent / target).exists(), f"{page} links to {target}, which does not exist"
