"""``--format sarif``: a SARIF 2.1.0 log (one run), as GitHub code scanning and other
SARIF viewers read it.

Every rule is described in ``tool.driver.rules`` from its page in ``rules/`` (short
description: the summary; full description: "What it does"; help: the whole page), and
each finding is a result with a physical location. A result has no help of its own: its
``message.text`` is the finding's message and help joined by ``"; "`` (the sentence a reader
of an alert needs), and the help alone is in its ``properties``; the rule's why is the
rule's ``help`` and ``fullDescription``. Columns count Unicode code points
(``columnKind``), as memlint's own output does. For a notebook, the region is the line
within the cell and the cell number is in the result's ``properties``.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any
from urllib.parse import quote

from memlint.catalogue import CATALOGUE, rule_page
from memlint.findings import CheckResult, Finding
from memlint.version import REPOSITORY, __version__

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def page_sections(page: str) -> tuple[str, dict[str, str]]:
    """A rule page without its front matter, and its ``## Section`` texts by title."""
    body = _FRONT_MATTER.sub("", page, count=1).strip()
    sections: dict[str, str] = {}
    title = None
    lines: list[str] = []
    for line in body.splitlines():
        if line.startswith("## "):
            if title is not None:
                sections[title] = "\n".join(lines).strip()
            title, lines = line[3:].strip(), []
        elif title is not None:
            lines.append(line)
    if title is not None:
        sections[title] = "\n".join(lines).strip()
    return body, sections


def _plain(markdown: str) -> str:
    """Markdown to one paragraph of plain text (for fullDescription)."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\*\*([^*]*)\*\*", r"\1", text)
    return " ".join(text.split())


def rule_descriptor(rule) -> dict[str, Any]:
    page = rule_page(rule.code) or f"# {rule.code} {rule.name}\n\n{rule.summary}\n"
    body, sections = page_sections(page)
    what = sections.get("What it does") or rule.summary
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _plain(what), "markdown": what},
        "help": {"text": body, "markdown": body},
        "defaultConfiguration": {
            "level": LEVELS.get(rule.severity, "warning"),
            "enabled": bool(rule.enabled_by_default),
        },
        "properties": {"fixable": bool(rule.fixable), "severity": rule.severity},
    }
    return descriptor


def artifact_uri(path: str) -> str:
    """A relative path as a relative URI reference (``/`` separators, escaped); an
    absolute one as a ``file://`` URI."""
    if os.path.isabs(path):
        posix = path.replace(os.sep, "/")
        if not posix.startswith("/"):  # Windows drive letter
            posix = "/" + posix
        return "file://" + quote(posix)
    return quote(os.path.normpath(path).replace(os.sep, "/"))


def _region(finding: Finding) -> dict[str, Any]:
    region = {"startLine": max(1, finding.line), "startColumn": max(1, finding.column)}
    end_line = max(region["startLine"], finding.end_line)
    end_column = finding.end_column
    if end_line == region["startLine"]:
        end_column = max(end_column, region["startColumn"])
    region["endLine"] = end_line
    region["endColumn"] = max(1, end_column)
    return region


def _result(finding: Finding, rule_index: dict[str, int]) -> dict[str, Any]:
    location = {
        "physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(finding.path)},
            "region": _region(finding),
        }
    }
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": LEVELS.get(finding.severity, "warning"),
        "message": {"text": f"{finding.message}; {finding.help}" if finding.help else finding.message},
        "locations": [location],
    }
    if finding.code in rule_index:
        result["ruleIndex"] = rule_index[finding.code]
    properties: dict[str, Any] = {}
    if finding.help:
        properties["help"] = finding.help
    if finding.cell is not None:
        properties["cell"] = finding.cell
        location["message"] = {"text": f"cell {finding.cell}, line {finding.line}"}
    if finding.fix is not None:
        properties["fixSafe"] = finding.fix.safe
        if finding.cell is None and finding.fix.edits:
            result["fixes"] = [{
                "description": {"text": "safe fix" if finding.fix.safe else "unsafe fix (review it)"},
                "artifactChanges": [{
                    "artifactLocation": {"uri": artifact_uri(finding.path)},
                    "replacements": [
                        {
                            "deletedRegion": {
                                "startLine": e.line, "startColumn": e.column,
                                "endLine": e.end_line, "endColumn": e.end_column,
                            },
                            "insertedContent": {"text": e.content},
                        }
                        for e in finding.fix.edits
                    ],
                }],
            }]
    if properties:
        result["properties"] = properties
    return result


def sarif_log(result: CheckResult) -> dict[str, Any]:
    rules = sorted(CATALOGUE, key=lambda r: r.code)
    rule_index = {rule.code: i for i, rule in enumerate(rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {
                "driver": {
                    "name": "memlint",
                    "fullName": "memlint: PyTorch memory anti-pattern linter",
                    "version": __version__,
                    "semanticVersion": __version__,
                    "informationUri": REPOSITORY,
                    "rules": [rule_descriptor(rule) for rule in rules],
                }
            },
            "columnKind": "unicodeCodePoints",
            "results": [_result(f, rule_index) for f in result.findings],
            "invocations": [{
                "executionSuccessful": not result.has_unchecked_files,
                "properties": {"filesChecked": result.files_checked},
            }],
        }],
    }


def render_sarif(result: CheckResult) -> str:
    return json.dumps(sarif_log(result), indent=2) + "\n"
