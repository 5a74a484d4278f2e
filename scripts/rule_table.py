"""Rewrite the rule table in README.md from the rule registry (run after adding a rule).

    python3 scripts/rule_table.py          # rewrite README.md
    python3 scripts/rule_table.py --check  # exit 1 if README.md is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
START, END = "<!-- rule-table:start -->", "<!-- rule-table:end -->"


def table() -> str:
    from memlint.catalogue import CATALOGUE

    rows = ["| code | name | severity | fix | what it finds |", "| --- | --- | --- | --- | --- |"]
    for rule in CATALOGUE:
        default = "" if rule.enabled_by_default else " (off by default)"
        fix = "yes" if rule.fixable else ""
        rows.append(f"| {rule.code} | {rule.name} | {rule.severity} | {fix} | {rule.summary}{default} |")
    return "\n".join(rows)


def rendered(text: str) -> str:
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main() -> int:
    text = README.read_text(encoding="utf-8")
    new = rendered(text)
    if "--check" in sys.argv:
        if new != text:
            print("README.md's rule table is out of date: run python3 scripts/rule_table.py")
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
