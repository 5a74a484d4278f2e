"""ML902 internal-error: memlint itself failed on this file; other files are still checked."""

from memlint.static.rule import Rule


class InternalError(Rule):
    code = "ML902"
