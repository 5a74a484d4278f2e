"""Run the static check on the verified script and mark findings the run confirms.

A static finding is ``confirmed`` when the run shows growth that it explains: the
growing storage was allocated on its line, or is held by what its line appends to,
stores in or accumulates into (wherever it was allocated, framework code included),
or its message names the holder (``total_loss``, the last part of ``model.cache``) or
the method the growth is in (``AverageMeter.update()``: the finding is at the call).
"""

from __future__ import annotations

import os
import re

from memlint.dynamic.bindings import feeds, grows, last_name
from memlint.dynamic.phases import Unreached
from memlint.dynamic.report import Site, VerifiedFinding
from memlint.static.runner import check_paths


def static_findings(path: str) -> list:
    """``memlint check`` findings for one file with the project's rule selection.

    [] when the static half is unavailable: it must never break a verify report.
    No cache: verify should not write ``.memlint_cache/`` into the user's folder.
    """
    try:
        # The script's own [tool.memlint] (the nearest above it), as memlint check would use.
        return list(check_paths([path], use_cache=False, jobs=1).findings)
    except Exception:
        return []


def _same_file(a: str | None, b: str | None) -> bool:
    return bool(a and b) and os.path.realpath(a) == os.path.realpath(b)


def confirms(finding, site: Site) -> bool:
    """Whether ``site``'s growth is what ``finding`` predicts.

    Yes when the finding is on the line that allocated the growing storage; or its line binds
    what the holder's line stores (``scores = self.model(x)``, then ``self.responses[i] = scores``);
    or its line appends to, stores in, accumulates into or rebinds the site's holder (``self.seen.append(
    out.logits)`` confirmed by logits allocated at ``out = model(**inputs)`` and held by
    ``KeepLogits.seen``); or its message names the holder, or the method the growth is in.
    """
    holder = site.holder
    if _same_file(finding.path, site.path):
        if finding.line == site.line:
            return True
        if site.function and re.search(rf"\.{re.escape(site.function)}\(\)", finding.message):
            return True
    if holder is None:
        return False
    if _same_file(finding.path, holder.path) and finding.line == holder.line:
        return True
    if _same_file(finding.path, holder.path) and feeds(finding.path, finding.line, holder.line):
        return True  # scores = self.model(tokens) (the finding); self.responses[i] = scores (the holder)
    if grows(finding.path, finding.line, holder.name, holder.kind):
        return True
    if _same_file(finding.path, site.path) or _same_file(finding.path, holder.path):
        name = last_name(holder.name)
        return bool(re.search(rf"(?<!\w){re.escape(name)}\b", finding.message))
    return False


def is_confirmed(finding, sites: list[Site]) -> bool:
    return any(confirms(finding, site) for site in sites)


def mark_confirmed(findings: list, sites: list[Site], growth: bool,
                   never_ran: Unreached | None = None) -> list[VerifiedFinding]:
    """Wrap findings; only a run that showed growth can confirm one. Each keeps the sites it
    explains, and says whether the run reached its line (``never_ran``: code it provably did not)."""
    marked = []
    for finding in findings:
        explained = [site for site in sites if confirms(finding, site)] if growth else []
        reached = never_ran is None or not _in(never_ran, finding.path, finding.line)
        marked.append(VerifiedFinding(finding, bool(explained), explained, reached))
    return marked


def _in(never_ran: Unreached, path: str, line: int) -> bool:
    return any(_same_file(path, ran) and never_ran.covers(ran, line) for ran in never_ran.ranges)
