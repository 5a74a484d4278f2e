"""One version and one repository, written in several places: pyproject.toml, memlint's
version module, the README's pre-commit and GitHub Action snippets, SARIF's informationUri,
CONTRIBUTING.md and CHANGELOG.md agree; scripts/release.py moves them together."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from memlint.report.sarif import render_sarif
from memlint.findings import CheckResult
from memlint.version import REPOSITORY, __version__

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
# the files scripts/release.py reads or writes
RELEASED_FILES = ("pyproject.toml", "src/memlint/version.py", "README.md", "CHANGELOG.md", "action.yml")


def snippets(root: Path) -> dict[str, list[str]]:
    readme = (root / "README.md").read_text(encoding="utf-8")
    return {
        "repo": re.findall(r"^\s*- repo: (\S+)$", readme, re.M),
        "rev": re.findall(r"^\s*rev: (\S+)", readme, re.M),
        "uses": re.findall(r"uses: (\S+/memlint)@(\S+)", readme),
    }


def assert_consistent(root: Path, version: str) -> None:
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == version
    assert re.search(rf'^__version__ = "{re.escape(version)}"$', (root / "src/memlint/version.py").read_text(), re.M)
    found = snippets(root)
    assert found["repo"] == [REPOSITORY], found
    assert found["rev"] and set(found["rev"]) == {f"v{version}"}, found
    owner_and_name = REPOSITORY.removeprefix("https://github.com/")
    assert found["uses"] and set(found["uses"]) == {(owner_and_name, f"v{version}")}, found
    assert f"uses: {owner_and_name}@v{version}" in (root / "action.yml").read_text(encoding="utf-8")
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", changelog, re.M)
    assert headings[0] == "Unreleased", "CHANGELOG.md starts with the changes not released yet"
    released = [h.split(" — ")[0] for h in headings[1:]]
    assert not released or released[0] == version, f"the newest release in CHANGELOG.md is not {version}"


def test_version_and_repository_agree_everywhere():
    assert_consistent(ROOT, __version__)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["urls"]["Repository"] == REPOSITORY
    assert all(url.startswith(REPOSITORY) for url in project["urls"].values())
    assert f"git clone {REPOSITORY}" in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def test_sarif_points_at_the_repository():
    driver = json.loads(render_sarif(CheckResult()))["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == REPOSITORY and driver["version"] == __version__


def test_release_sets_the_version_everywhere_and_dates_the_changelog(tmp_path):
    for name in RELEASED_FILES + ("scripts/release.py",):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tmp_path / name)
    unreleased = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").split("## Unreleased\n", 1)[1]
    done = subprocess.run([sys.executable, str(tmp_path / "scripts/release.py"), "0.2.0", "--date", "2030-01-02"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "git tag -a v0.2.0" in done.stdout
    assert_consistent(tmp_path, "0.2.0")
    changelog = (tmp_path / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## Unreleased\n\n## 0.2.0 — 2030-01-02\n" + unreleased in changelog
    readme_before = (ROOT / "README.md").read_text(encoding="utf-8")
    readme_after = (tmp_path / "README.md").read_text(encoding="utf-8")
    changed = [(a, b) for a, b in zip(readme_before.splitlines(), readme_after.splitlines()) if a != b]
    assert changed and all(f"v{__version__}" in a and a.replace(f"v{__version__}", "v0.2.0") == b for a, b in changed)

    bad = subprocess.run([sys.executable, str(tmp_path / "scripts/release.py"), "1.0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "is not MAJOR.MINOR.PATCH" in bad.stderr
