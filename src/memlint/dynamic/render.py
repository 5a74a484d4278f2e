"""JSON output of a verify report (the text report is drawn by :mod:`memlint.report.verify_text`)."""

from __future__ import annotations

import json

from memlint.dynamic.report import VerifyReport


def render_json(report: VerifyReport) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"
