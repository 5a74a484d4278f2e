import os
import sys
from pathlib import Path

import pytest

# `memlint check` run as a subprocess would start a warm server (see memlint.launcher) that
# outlives the test; only tests/test_server.py lets it, in a folder of its own.
os.environ["MEMLINT_NO_SERVER"] = "1"

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
