"""ML903 unused-suppression: a ``# noqa: ML...`` that suppresses nothing (off by default)."""

from memlint.static.rule import Rule


class UnusedSuppression(Rule):
    code = "ML903"
    name = "unused-suppression"
    severity = "info"
    summary = "A '# noqa' or '# memlint: disable' comment names a code that is not reported on that line."
    enabled_by_default = False
    torch_only = False
