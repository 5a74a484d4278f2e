"""ML903 unused-suppression: a ``# noqa: ML...`` that suppresses nothing (off by default).

Like ruff's RUF100: select it (``--extend-select ML903``) to find suppressions left behind
after the code they silenced was fixed. Only memlint's own codes that were checked in the
run are judged; a bare ``# noqa`` is left alone (other linters read it).
"""

from memlint.static.rule import Rule


class UnusedSuppression(Rule):
    code = "ML903"
