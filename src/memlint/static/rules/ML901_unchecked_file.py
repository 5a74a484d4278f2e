"""ML901 unchecked-file: a file could not be checked (syntax error, unreadable, undecodable).

Produced by the runner, not by a detector: reported so that a broken file never passes
silently, and the run exits 2.
"""

from memlint.static.rule import Rule


class UncheckedFile(Rule):
    code = "ML901"
