"""Realistic training scripts in fixtures/: each line marked ``# expect: CODE[, CODE]``
must be reported with those codes, and nothing else may be reported (for the codes the
fixture is about). Fixtures with no marker are checked to be clean when their name says so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memlint.catalogue import default_codes
from memlint.static.file_check import check_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>ML\d{3}(?:\s*,\s*ML\d{3})*)")


def _fixtures():
    for path in sorted(FIXTURES.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if EXPECT.search(text) or "clean" in path.stem:
            yield pytest.param(path, id=str(path.relative_to(FIXTURES)))


def expected_findings(text: str) -> set[tuple[int, str]]:
    expected = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group("codes")):
                expected.add((number, code))
    return expected


@pytest.mark.parametrize("path", list(_fixtures()))
def test_fixture_findings_match_markers(path: Path):
    expected = expected_findings(path.read_text(encoding="utf-8"))
    actual = {(f.line, f.code) for f in check_file(str(path), default_codes())}
    assert actual == expected, (
        f"missing: {sorted(expected - actual)}; unexpected: {sorted(actual - expected)}"
    )
