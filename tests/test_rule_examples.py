"""Every rule's VALID and INVALID examples, collected automatically from the rule modules."""

from __future__ import annotations

import pytest

from memlint.static.rules import all_rules
from memlint.static.source_check import check_source


def _cases(kind: str):
    for rule in all_rules():
        for index, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.code}-{kind.lower()}-{index}")


@pytest.mark.parametrize("rule, source", list(_cases("VALID")))
def test_valid_example_is_not_flagged(rule, source):
    all_findings = check_source(source, "example.py", [rule.code])
    assert not [f for f in all_findings if f.code == "ML902"], all_findings
    findings = [f for f in all_findings if f.code == rule.code]
    assert findings == [], "\n".join(f"{f.line}:{f.column} {f.message}" for f in findings)


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_invalid_example_is_flagged(rule, example):
    all_findings = check_source(example.code, "example.py", [rule.code])
    assert not [f for f in all_findings if f.code == "ML902"], all_findings
    findings = [f for f in all_findings if f.code == rule.code]
    assert findings, f"{rule.code} found nothing in:\n{example.code}"
    if example.line is not None:
        assert example.line in [f.line for f in findings], [(f.line, f.message) for f in findings]


def test_every_rule_has_examples_and_a_page():
    from memlint.catalogue import rule_page

    for rule in all_rules():
        if rule.code.startswith("ML9"):
            continue
        assert rule.VALID and rule.INVALID, f"{rule.code} needs VALID and INVALID examples"
        page = rule_page(rule.code)
        assert page and "## What it does" in page, f"rules/{rule.code}.md is missing or incomplete"


def test_every_page_matches_its_catalogue_entry_and_has_every_section():
    import re

    from memlint.catalogue import CATALOGUE, rule_page

    sections = ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety",
                "## References", "## How to confirm with verify")
    for info in CATALOGUE:
        if info.code.startswith("ML9"):
            continue
        page = rule_page(info.code)
        front = re.match(r"---\n(.*?)\n---\n", page, re.S)
        assert front, f"rules/{info.code}.md has no front matter"
        fields = dict(line.split(": ", 1) for line in front.group(1).splitlines())
        for key in ("code", "name", "severity", "summary"):
            assert fields.get(key) == getattr(info, key), f"rules/{info.code}.md: {key} differs from the catalogue"
        missing = [section for section in sections if section not in page]
        assert not missing, f"rules/{info.code}.md lacks {missing}"
