"""ML902 internal-error: memlint itself failed on this file; other files are still checked."""

from memlint.static.rule import Rule


class InternalError(Rule):
    code = "ML902"
    name = "internal-error"
    severity = "error"
    summary = "memlint failed on this file (a bug in memlint); the other files were still checked."
    torch_only = False
