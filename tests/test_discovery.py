"""File discovery through the real CLI: .gitignore (nested, negation, folder patterns,
anchoring, **), exclude, default skips, symlinks, explicit paths and --force-exclude."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main
from memlint.static.discovery import parse_gitignore

LEAK = """\
import torch
def train(model, loader, opt, crit):
    total = 0
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        total += loss
"""


def run(*args: str, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def checked(*args: str, cwd: Path) -> set[str]:
    """Paths with findings: every file written here leaks, so that is every file checked."""
    result = run(*args, cwd=cwd)
    assert result.exit_code in (0, 1), result.output
    return {d["path"] for d in json.loads(result.stdout)}


def write(root: Path, *paths: str) -> None:
    for path in paths:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(LEAK)


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory, monkeypatch) -> Path:
    """A home of our own: the user's global git excludes must not change these tests."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    write(tmp_path, "a.py", "pkg/b.py", "pkg/gen/skip.py", "generated/x.py", "pkg/sub/tmp_1.py",
          "top_only.py", "pkg/top_only.py", "data/d.py", "data/keep.py", "docs/deep/er/z.py",
          "pkg/local.py", "pkg/sub/local.py", "notes.ipynb.py")
    (tmp_path / ".gitignore").write_text(
        "# comment\n"
        "generated/\n"      # a folder, at any depth
        "tmp_*.py\n"        # a glob on names, at any depth
        "/top_only.py\n"    # anchored to this folder
        "data/*\n"          # everything in data/ ...
        "!data/keep.py\n"   # ... but this
        "docs/**/z.py\n"    # ** across folders
        "   \n"
    )
    (tmp_path / "pkg" / ".gitignore").write_text("gen\nlocal.py\n!sub/local.py\n")
    return tmp_path


def test_gitignore_patterns(repo):
    assert checked(cwd=repo) == {"a.py", "pkg/b.py", "pkg/top_only.py", "data/keep.py", "pkg/sub/local.py",
                                 "notes.ipynb.py"}


def test_gitignore_of_parent_folders_applies_to_a_subfolder_check(repo):
    assert checked("pkg", cwd=repo) == {"pkg/b.py", "pkg/top_only.py", "pkg/sub/local.py"}
    assert checked(".", cwd=repo / "pkg") == {"b.py", "top_only.py", "sub/local.py"}


def test_ignored_folder_cannot_be_reincluded_from_inside(repo):
    write(repo, "generated/inner/keep.py")
    (repo / "generated" / ".gitignore").write_text("!inner/keep.py\n")
    assert not any(p.startswith("generated/") for p in checked(cwd=repo))


def test_git_info_exclude(repo):
    (repo / ".git" / "info").mkdir()
    (repo / ".git" / "info" / "exclude").write_text("a.py\n")
    assert "a.py" not in checked(cwd=repo)


def test_global_git_excludes(repo, private_home, monkeypatch):
    # git's default place for them, then a file named by core.excludesFile (the repository's
    # own config wins over the user's)
    (private_home / ".config" / "git").mkdir(parents=True)
    (private_home / ".config" / "git" / "ignore").write_text("a.py\n")
    assert "a.py" not in checked(cwd=repo) and "pkg/b.py" in checked(cwd=repo)
    (private_home / "my_excludes").write_text("# scratch files\nb.py\n")
    (private_home / ".gitconfig").write_text('[user]\n\tname = x\n[core]\n\texcludesFile = "~/my_excludes"\n')
    assert {"a.py"} <= checked(cwd=repo) and "pkg/b.py" not in checked(cwd=repo)
    (repo / ".git" / "config").write_text("[core]\n    excludesfile = %s  ; the repository's own\n"
                                          % (private_home / "none"))
    assert {"a.py", "pkg/b.py"} <= checked(cwd=repo)
    # a .gitignore in the repository re-includes what the global file leaves out, as in git
    (repo / ".git" / "config").write_text("")
    (repo / ".gitignore").write_text("!b.py\n")
    assert "pkg/b.py" in checked(cwd=repo)


def test_gitignore_outside_a_repository_stops_at_the_start_folder(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")  # not a repository: this folder is above the check
    write(tmp_path, "proj/a.py", "proj/b.py")
    (tmp_path / "proj" / ".gitignore").write_text("b.py\n")
    assert checked(cwd=tmp_path / "proj") == {"a.py"}


def test_default_skips_and_virtualenvs_by_marker(tmp_path):
    write(tmp_path, "src/a.py", ".venv/lib/x.py", "venv/x.py", "build/lib/x.py", "dist/x.py",
          "node_modules/x.py", "__pycache__/x.py", "pkg.egg-info/x.py", "myenv/lib/x.py",
          "conda/lib/x.py", ".hidden/x.py", "site-packages/x.py")
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "conda" / "conda-meta").mkdir()
    assert checked(cwd=tmp_path) == {"src/a.py"}


def test_exclude_from_config(tmp_path):
    write(tmp_path, "src/a.py", "src/legacy/old.py", "scripts/run.py")
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nexclude = ["legacy", "scripts/*.py"]\n')
    assert checked(cwd=tmp_path) == {"src/a.py"}


def test_explicit_files_are_checked_unless_force_exclude(repo):
    (repo / "pyproject.toml").write_text('[tool.memlint]\nexclude = ["pkg/b.py"]\n')
    write(repo, ".venv/x.py")
    explicit = ("pkg/b.py", "generated/x.py", ".venv/x.py", "a.py")
    assert checked(*explicit, cwd=repo) == set(explicit)  # as ruff: naming a file checks it
    forced = checked("--force-exclude", *explicit, cwd=repo)
    assert "pkg/b.py" not in forced and ".venv/x.py" not in forced
    assert "a.py" in forced


def test_force_exclude_on_an_explicit_folder(tmp_path):
    write(tmp_path, "legacy/a.py", "src/b.py")
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nexclude = ["legacy"]\n')
    assert checked("legacy", cwd=tmp_path) == {"legacy/a.py"}
    assert checked("--force-exclude", "legacy", "src", cwd=tmp_path) == {"src/b.py"}


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loops_and_linked_folders_are_not_followed(tmp_path):
    write(tmp_path, "pkg/a.py", "outside/big.py")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    os.symlink(tmp_path / "outside", tmp_path / "pkg" / "linked")
    os.symlink(tmp_path / "outside" / "big.py", tmp_path / "pkg" / "link_to_file.py")
    os.symlink(tmp_path / "missing.py", tmp_path / "pkg" / "dangling.py")
    result = run("pkg", cwd=tmp_path)
    assert result.exit_code == 1
    assert {d["path"] for d in json.loads(result.stdout)} == {"pkg/a.py", "pkg/link_to_file.py"}


def test_same_file_named_twice_is_checked_once(repo):
    result = run("a.py", "./a.py", ".", cwd=repo)
    assert [d["path"] for d in json.loads(result.stdout)].count("a.py") == 1


@pytest.mark.parametrize("pattern, path, is_dir, ignored", [
    ("*.py", "a/b.py", False, True),
    ("/b.py", "a/b.py", False, False),
    ("a/b.py", "a/b.py", False, True),
    ("build/", "x/build", True, True),
    ("build/", "x/build", False, False),
    ("**/cache", "a/b/cache", True, True),
    ("a/**", "a/b/c.py", False, True),
    ("a/**/c.py", "a/c.py", False, True),
    ("a/**/c.py", "a/x/y/c.py", False, True),
    ("f?o.py", "fxo.py", False, True),
    ("f[0-9].py", "f7.py", False, True),
    ("f[!0-9].py", "f7.py", False, False),
    ("\\#x.py", "#x.py", False, True),
    ("\\!x.py", "!x.py", False, True),
    ("a*", "dir/abc/x.py", False, False),  # a pattern is matched against the path itself here
])
def test_gitignore_pattern_syntax(pattern, path, is_dir, ignored):
    patterns = parse_gitignore(pattern + "\n")
    assert len(patterns) == 1
    matched = any((not p.directory_only or is_dir) and p.regex.match(path) for p in patterns)
    assert matched is ignored
