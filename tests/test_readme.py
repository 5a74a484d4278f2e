"""The README promises: its rule table matches the registry, its commands exist."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rule_table_is_up_to_date():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "rule_table.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_names_the_two_setup_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "pip install . && memlint check fixtures/" in readme
    assert "bash scripts/test.sh" in readme
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
