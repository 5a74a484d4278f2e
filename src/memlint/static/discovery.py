"""Which files ``memlint check`` looks at: Python files and notebooks under the given
paths, minus what ``.gitignore`` files and ``exclude`` leave out and never-interesting
folders (virtualenvs, build output, VCS, caches).

- ``.gitignore`` files are read in every folder walked, and in the folders above the
  starting point up to the repository root (the folder holding ``.git``), together with
  ``.git/info/exclude`` and the user's global excludes file (git's ``core.excludesFile``,
  by default ``~/.config/git/ignore``). Patterns follow git: ``#`` comments, ``!`` negation, a trailing
  ``/`` for folders only, a ``/`` elsewhere anchors the pattern to its file's folder,
  ``*``, ``?``, ``[...]`` and ``**``; a deeper file and a later line win. As in git, a
  file inside an ignored folder cannot be re-included.
- A path named on the command line is checked even when excluded or ignored (as ruff
  does), unless ``--force-exclude`` is given, which applies ``exclude`` and the default
  skips to it too.
- Symlinked folders are not followed (no loops, no walking into a linked data set);
  symlinked files are checked.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Iterable

from memlint.config import DEFAULT_EXCLUDE, Config, Configs, glob_match
from memlint.findings import Finding, unchecked_file

PYTHON_SUFFIXES = (".py", ".pyw")
NOTEBOOK_SUFFIX = ".ipynb"
# A folder holding one of these is a virtualenv or a conda environment, whatever its name.
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")


# ----- .gitignore -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IgnorePattern:
    regex: re.Pattern[str]
    negated: bool
    directory_only: bool


def _translate(glob: str) -> str:
    """A gitignore glob (already split from its anchoring) as a regular expression."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                at_start = i == 0 or glob[i - 1] == "/"
                at_end = i + 2 == n or glob[i + 2] == "/"
                if at_start and at_end:
                    if i + 2 == n:
                        out.append(".*")  # "foo/**": everything inside
                        i += 2
                    else:
                        out.append("(?:.*/)?")  # "**/foo", "a/**/b": zero or more folders
                        i += 3
                    continue
            out.append("[^/]*")
            i += 1
            while i < n and glob[i] == "*":
                i += 1
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and glob[j] in "!^":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = glob[i + 1:j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_gitignore(text: str) -> list[IgnorePattern]:
    patterns = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        # trailing spaces are ignored unless escaped
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        directory_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        regex = ("^" if anchored else "^(?:.*/)?") + body + "$"
        try:
            patterns.append(IgnorePattern(re.compile(regex, re.DOTALL), negated, directory_only))
        except re.error:
            continue
    return patterns


def _read_gitignore(path: str) -> tuple[IgnorePattern, ...]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return tuple(parse_gitignore(fh.read()))
    except OSError:
        return ()


def global_excludes_file(root: str) -> str | None:
    """git's ``core.excludesFile`` as the system, user and repository config set it (the last
    one wins), else the default ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found = None
    for config in ("/etc/gitconfig", os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig"),
                   os.path.join(root, ".git", "config")):
        value = _git_config_value(config, "core", "excludesfile")
        if value is not None:
            found = value
    if found is None:
        return os.path.join(xdg, "git", "ignore")
    return os.path.expanduser(found) if found else None


def _git_config_value(path: str, section: str, key: str) -> str | None:
    """The last ``key`` of ``[section]`` in a git config file (no includes, no subsections)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    current, value = None, None
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            header = line[1:line.find("]")] if "]" in line else ""
            current = header.strip().lower() if '"' not in header else None
            line = line[line.find("]") + 1:].strip() if "]" in line else ""
            if not line:
                continue
        if current != section or "=" not in line or line.startswith(("#", ";")):
            continue
        name, _, rest = line.partition("=")
        if name.strip().lower() != key:
            continue
        rest = rest.strip()
        if rest.startswith('"'):
            end = rest.find('"', 1)
            value = rest[1:end] if end > 0 else rest[1:]
        else:
            value = re.split(r"\s+[#;]", rest, maxsplit=1)[0].strip()
    return value


class GitIgnore:
    """The ``.gitignore`` rules in force while walking: a stack of (folder, patterns)."""

    def __init__(self, levels: list[tuple[str, tuple[IgnorePattern, ...]]] | None = None) -> None:
        self.levels = levels or []

    @classmethod
    def for_folder(cls, folder: str) -> "GitIgnore":
        """The rules that apply inside ``folder``: those of the folders above it up to the
        repository root (and ``.git/info/exclude``), not yet ``folder``'s own."""
        folder = os.path.abspath(folder)
        chain = []
        current = folder
        root = None
        while True:
            parent = os.path.dirname(current)
            if os.path.exists(os.path.join(current, ".git")):
                root = current
                break
            if parent == current:
                break
            current = parent
            chain.append(current)
        levels: list[tuple[str, tuple[IgnorePattern, ...]]] = []
        if root is None:
            return cls(levels)
        # Lowest precedence first: git's global excludes, then info/exclude, then .gitignore files.
        for path in (global_excludes_file(root), os.path.join(root, ".git", "info", "exclude")):
            patterns = _read_gitignore(path) if path else ()
            if patterns:
                levels.append((root, patterns))
        for above in [root] + [c for c in reversed(chain) if c != root]:
            if above == folder:
                continue
            patterns = _read_gitignore(os.path.join(above, ".gitignore"))
            if patterns:
                levels.append((above, patterns))
        return cls(levels)

    def entering(self, folder: str, has_gitignore: bool) -> "GitIgnore":
        if not has_gitignore:
            return self
        patterns = _read_gitignore(os.path.join(os.path.abspath(folder), ".gitignore"))
        return GitIgnore(self.levels + [(os.path.abspath(folder), patterns)]) if patterns else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        path = os.path.abspath(path)
        decision = False
        for base, patterns in self.levels:
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            if rel.startswith("../") or rel == "..":
                continue
            for pattern in patterns:
                if pattern.directory_only and not is_dir:
                    continue
                if pattern.regex.match(rel):
                    decision = not pattern.negated
        return decision


# ----- discovery ---------------------------------------------------------------------------------------
def is_default_excluded(path: str) -> bool:
    """Does ``path`` lie in a folder memlint never checks (``.venv``, ``build``, ...)?"""
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)[:-1]
    cwd_parts = os.path.abspath(os.getcwd()).split(os.sep)
    if parts[:len(cwd_parts)] == cwd_parts:  # only the part below the current folder counts
        parts = parts[len(cwd_parts):]
    return any(skip_folder_name(p) for p in parts)


def skip_folder_name(name: str) -> bool:
    return name in DEFAULT_EXCLUDE or name.endswith(".egg-info") or (name.startswith(".") and name not in (".", ".."))


# Files that may name a class or function to build (``_target_: pkg.models.Net``, a registry).
CONFIGURATION_SUFFIXES = frozenset({"yaml", "yml", "json", "toml", "cfg", "ini", "sh", "jsonnet", "gin"})
# A cache dependency on which files a project holds, not on one file's content: LISTING + root.
LISTING = "listing:"


def listing_digest(root: str) -> str:
    """A digest of the paths of the Python and configuration files under ``root`` (skipped
    folders left out): it changes when such a file is added, removed or renamed."""
    digest = hashlib.sha1()
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not skip_folder_name(d))
        for name in sorted(filenames):
            if name.endswith(".py") or name.rsplit(".", 1)[-1].lower() in CONFIGURATION_SUFFIXES:
                digest.update(os.path.join(folder, name).encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


@dataclass
class Discovered:
    """What the paths of a run hold: the files to check, ML901 findings for paths that do not
    exist, and the paths named that hold nothing to check (``empty``: a folder with no Python
    file or notebook, everything in it excluded; ``excluded``: skipped by ``--force-exclude``)."""

    files: list[str]
    problems: list[Finding]
    empty: list[str]
    excluded: list[str]


def discover(paths: Iterable[str], configs: Configs, force_exclude: bool = False) -> Discovered:
    """Python files and notebooks under ``paths``. Explicit files are always checked unless
    ``force_exclude``. Each path's ``exclude`` patterns are those of its own configuration."""
    out = Discovered([], [], [], [])
    seen: set[str] = set()
    for raw in paths:
        path = os.path.normpath(raw)
        if os.path.isdir(path):
            if force_exclude and path not in (".", "..") and (
                    configs.for_path(path).is_excluded(path) or is_default_excluded(path + os.sep + "x")):
                out.excluded.append(raw)
                continue
            found_any = False
            for found in _walk_directory(path, configs):
                found_any = True
                if found not in seen:
                    seen.add(found)
                    out.files.append(found)
            if not found_any:
                out.empty.append(raw)
        elif os.path.isfile(path) or _unreadable(path):
            if force_exclude and (configs.for_path(path).is_excluded(path) or is_default_excluded(path)):
                out.excluded.append(raw)
                continue
            if path not in seen:
                seen.add(path)
                out.files.append(path)
        else:
            out.problems.append(unchecked_file(path, "no such file or directory", help=_missing_help(raw)))
    return out


def _missing_help(path: str) -> str | None:
    if any(ch in path for ch in "*?["):
        return ("memlint does not expand patterns: let the shell expand it (unquoted), or name a folder; "
                "exclude = [...] in [tool.memlint] leaves files out")
    return None


def _unreadable(path: str) -> bool:
    """A path that exists but is no regular file (a FIFO, a socket, a symlink loop): kept, so
    that the runner reports it (ML901) instead of it being skipped in silence."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False  # missing, or a dangling symlink
    except OSError:
        return os.path.lexists(path)  # a symlink loop, no permission
    return not os.path.isdir(path)


def _walk_directory(top: str, configs: Configs) -> Iterable[str]:
    rules = {os.path.abspath(top): GitIgnore.for_folder(top)}
    top_config = configs.for_path(top)
    if top_config.exclude and top not in (".", "..") and top_config.is_excluded(top):
        # A folder named on the command line is walked even when excluded (as ruff does):
        # only the patterns that match below it still apply.
        below = _excluded_below(top_config, top)

        def excluded(path: str) -> bool:
            config = configs.for_path(path)
            return below(path) if config is top_config else config.is_excluded(path)
    else:
        def excluded(path: str) -> bool:
            return configs.for_path(path).is_excluded(path)
    for folder, dirnames, filenames in os.walk(top, followlinks=False):
        here = rules.pop(os.path.abspath(folder), None) or GitIgnore()
        here = here.entering(folder, ".gitignore" in filenames)
        kept = []
        for d in sorted(dirnames):
            full = os.path.join(folder, d)
            if skip_folder_name(d) or os.path.islink(full) or excluded(full):
                continue
            if here.ignored(full, is_dir=True):
                continue
            if any(os.path.exists(os.path.join(full, marker)) for marker in ENVIRONMENT_MARKERS):
                continue
            kept.append(d)
            rules[os.path.abspath(full)] = here
        dirnames[:] = kept
        for filename in sorted(filenames):
            if filename.endswith(PYTHON_SUFFIXES) or filename.endswith(NOTEBOOK_SUFFIX):
                full = os.path.join(folder, filename)
                if not os.path.isfile(full) and not _unreadable(full):  # a broken symlink
                    continue
                if excluded(full) or here.ignored(full, is_dir=False):
                    continue
                yield os.path.normpath(full)  # "pkg/a.py", not "./pkg/a.py"


def _excluded_below(config: Config, top: str):
    def excluded(path: str) -> bool:
        rel = os.path.relpath(path, top).replace(os.sep, "/")
        return config.is_excluded(path) and any(glob_match(rel, pattern) for pattern in config.exclude)

    return excluded
