import os
import sys
from pathlib import Path

import pytest

# A warm server the developer started (memlint server start) must not serve the suite's runs:
# only tests/test_server.py uses servers, in folders of its own.
os.environ["MEMLINT_NO_SERVER"] = "1"
# Reports are compared as plain text: a CI that forces colour for its logs must not colour them
# (tests/test_text_report.py sets these variables where it tests colour).
for variable in ("FORCE_COLOR", "CLICOLOR_FORCE"):
    os.environ.pop(variable, None)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
