"""Check one source text: decide from the text which selected rules could match, and parse
with libcst only when one could.

A file no rule can match (most files that do not import PyTorch) is still syntax-checked by
Python's own parser: every file memlint says it checked has parsed, or got an ML901.
"""

from __future__ import annotations

from typing import Callable, Sequence

from memlint.catalogue import RUNNER_CODES
from memlint.findings import Finding
from memlint.static.source import syntax_error
from memlint.static.suppress import UNUSED_CODE, parse_suppressions, unused_suppressions
from memlint.static.triggers import codes_that_could_match


def check_source(source: str, path: str, codes: Sequence[str], ignored: Sequence[str] = (),
                 parser: Callable | None = None) -> list[Finding]:
    """Findings of the rules ``codes`` on one source text, less the code prefixes ``ignored``
    (per-file ignores). Raises :class:`~memlint.static.source.UncheckableFile`. ``parser``
    replaces :func:`~memlint.static.source.parse` (the language server's re-parses only
    what an edit touched: :mod:`memlint.static.reparse`)."""
    selected = [code for code in codes if not code.startswith(tuple(ignored))]
    to_run = codes_that_could_match(source, [code for code in selected if code not in RUNNER_CODES])
    if any(code != UNUSED_CODE for code in to_run):
        # libcst (a quarter of a second to import) only for a file some rule could match
        from memlint.static.module_check import check_module

        return check_module(source, path, to_run, selected, parser)
    error = syntax_error(source)
    if error is not None:
        raise error
    if to_run:  # only ML903 could report: the comments suffice
        return unused_suppressions(parse_suppressions(source), path, selected)
    return []
