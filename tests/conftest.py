import os
import sys
from pathlib import Path

import pytest

# A warm server the developer started (memlint server start) must not serve the suite's runs:
# only tests/test_server.py uses servers, in folders of its own.
os.environ["MEMLINT_NO_SERVER"] = "1"

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
