"""Run the static check on the verified script and mark findings the run confirms.

A static finding is ``confirmed`` when it is in the same file as a growth site and
either on the site's line or the holder's line, or its message names the holder
variable (``total_loss``, or the last part of ``model.cache``) or the method the site is in
(``AverageMeter.update()``: the finding is at the call, the growth inside the method).
"""

from __future__ import annotations

import os
import re

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


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def is_confirmed(finding, sites: list[Site]) -> bool:
    for site in sites:
        if not _same_file(finding.path, site.path):
            continue
        lines = {site.line}
        if site.holder is not None and site.holder.line is not None and _same_file(site.holder.path, finding.path):
            lines.add(site.holder.line)
        if finding.line in lines:
            return True
        if site.function and re.search(rf"\.{re.escape(site.function)}\(\)", finding.message):
            return True
        if site.holder is not None:
            name = site.holder.name.rsplit(".", 1)[-1]
            if re.search(rf"(?<!\w){re.escape(name)}\b", finding.message):
                return True
    return False


def mark_confirmed(findings: list, sites: list[Site], growth: bool) -> list[VerifiedFinding]:
    """Wrap findings; only a run that showed growth can confirm one."""
    return [VerifiedFinding(f, growth and is_confirmed(f, sites)) for f in findings]
