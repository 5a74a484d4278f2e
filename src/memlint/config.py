"""``[tool.memlint]`` in the nearest pyproject.toml, overridden by the command line.

Like ruff, each file gets the configuration of the nearest ``pyproject.toml`` with a
``[tool.memlint]`` table above it (settings are not merged across files), or, with none
above it, the current folder's; ``--config`` gives one configuration for every file. :class:`Configs` answers "which configuration for
this path?" for a run.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from memlint.catalogue import all_codes

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[no-redef]


class ConfigError(Exception):
    """A usage or configuration error: reported as one line, exit code 2."""


CHECK_KEYS = {"select", "ignore", "extend-select", "exclude", "extend-exclude", "per-file-ignores", "server", "verify"}
VERIFY_KEYS = {"steps", "warmup", "threshold", "node-threshold", "rss-threshold", "device", "timeout",
               "gpu-memory", "step-on"}

# Directories never worth descending into (virtualenvs, build output, VCS, caches).
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".env", "env", "__pypackages__",
    "build", "dist", "site-packages", "node_modules", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".memlint_cache", ".ipynb_checkpoints", ".eggs",
)


@dataclass
class Config:
    select: list[str] | None = None  # None: the default rule set
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    verify: dict[str, Any] = field(default_factory=dict)
    server: bool = False  # keep a warm server for memlint check (memlint.server_client)
    root: Path | None = None  # folder of the pyproject.toml the config came from
    source: Path | None = None

    def enabled_codes(self, all_codes: Iterable[str], default_codes: Iterable[str]) -> frozenset[str]:
        """Resolve select / extend-select / ignore (code prefixes) to a set of codes."""
        all_codes = sorted(all_codes)
        chosen = set(default_codes) if self.select is None else _expand(self.select, all_codes)
        chosen |= _expand(self.extend_select, all_codes)
        chosen -= _expand(self.ignore, all_codes)
        return frozenset(chosen)

    def ignored_for(self, path: str) -> list[str]:
        """Code prefixes that per-file-ignores turns off for ``path``."""
        if not self.per_file_ignores:
            return []
        rel = _relative(path, self.root)
        out: list[str] = []
        for pattern, codes in self.per_file_ignores.items():
            if glob_match(rel, pattern):
                out.extend(codes)
        return out

    def is_excluded(self, path: str) -> bool:
        if not self.exclude:
            return False
        rel = _relative(path, self.root)
        return any(glob_match(rel, pattern) for pattern in self.exclude)


def _relative(path: str, root: Path | None) -> str:
    absolute = os.path.abspath(path)
    base = str(root) if root else os.getcwd()
    try:
        rel = os.path.relpath(absolute, base)
    except ValueError:
        rel = absolute
    return rel.replace(os.sep, "/")


def glob_match(rel_path: str, pattern: str) -> bool:
    """Match like ruff's exclude: a pattern matches the path or any of its parents,
    and a pattern without a slash matches any path component."""
    pattern = pattern.rstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    parts = rel_path.split("/")
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in parts)
    for i in range(len(parts), 0, -1):
        if fnmatch.fnmatchcase("/".join(parts[:i]), pattern):
            return True
    return False


def _expand(prefixes: Iterable[str], all_codes: list[str]) -> set[str]:
    out: set[str] = set()
    for prefix in prefixes:
        if prefix == "ALL":
            out.update(all_codes)
        else:
            out.update(code for code in all_codes if code.startswith(prefix))
    return out


def validate_codes(prefixes: Iterable[str], all_codes: Iterable[str], where: str) -> None:
    """Every prefix must select at least one known code."""
    all_codes = list(all_codes)
    for prefix in prefixes:
        if not isinstance(prefix, str):
            raise ConfigError(f"{where}: expected a rule code, got {prefix!r}")
        if prefix == "ALL":
            continue
        if not any(code.startswith(prefix) for code in all_codes):
            raise ConfigError(f"{where}: unknown rule code {prefix!r} (run 'memlint rules' for the list)")


class Configs:
    """The configuration of each path in a run: the nearest pyproject.toml with a
    ``[tool.memlint]`` table above the path (or ``config_path`` for all), with ``adjust``
    (the command line's options) applied to each. Looked up once per folder."""

    def __init__(self, config_path: Path | None = None, adjust=None, fixed: Config | None = None) -> None:
        self._explicit = config_path
        self._adjust = adjust
        self._fixed = fixed
        self._by_source: dict[Path | None, Config] = {}
        self._by_folder: dict[str, Config] = {}
        self._nearest: dict[str, Path | None] = {}  # folder -> its pyproject (find_pyproject's memo)

    @classmethod
    def single(cls, config: Config) -> "Configs":
        """Every path gets ``config`` (the Python API's ``check_paths(config=...)``)."""
        return cls(fixed=config)

    def for_path(self, path: str) -> Config:
        """The configuration that governs ``path``: that of the folder holding it."""
        return self.for_folder(os.path.dirname(os.path.abspath(path)))

    def for_folder(self, folder: str) -> Config:
        """The configuration of the files in ``folder``."""
        if self._fixed is not None:
            return self._fixed
        folder = os.path.abspath(folder)
        config = self._by_folder.get(folder)
        if config is None:
            # As ruff does, a file with no [tool.memlint] above it gets the current folder's.
            source = (self._explicit or find_pyproject(folder, self._nearest)
                      or find_pyproject(os.getcwd(), self._nearest))
            config = self._by_source.get(source)
            if config is None:
                config = load_config(source) if source is not None else Config()
                if self._adjust is not None:
                    self._adjust(config)
                self._by_source[source] = config
            self._by_folder[folder] = config
        return config

    def here(self) -> Config:
        """The configuration of the current folder."""
        return self.for_folder(os.getcwd())


def find_pyproject(start: Path | str, memo: dict[str, Path | None] | None = None) -> Path | None:
    """The nearest pyproject.toml with a [tool.memlint] table, walking up from ``start``;
    ``memo`` remembers the answer for every folder on the way."""
    memo = {} if memo is None else memo
    walked = []
    current = os.path.abspath(start)
    while True:
        if current in memo:
            found = memo[current]
            break
        walked.append(current)
        candidate = os.path.join(current, "pyproject.toml")
        if os.path.isfile(candidate) and "memlint" in _read_toml(Path(candidate)).get("tool", {}):
            found = Path(candidate).resolve()
            break
        parent = os.path.dirname(current)
        if parent == current:
            found = None
            break
        current = parent
    for folder in walked:
        memo[folder] = found
    return found


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _string_list(value: Any, key: str, where: Path) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{where}: [tool.memlint] {key} must be a list of strings")


def load_config(config_path: Path | None = None, start: Path | None = None) -> Config:
    """Load ``[tool.memlint]`` from ``config_path`` or the nearest pyproject.toml."""
    path = config_path or find_pyproject(start or Path.cwd())
    if path is None:
        return Config()
    data = _read_toml(path)
    table = data.get("tool", {}).get("memlint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.memlint] must be a table")
    unknown = sorted(set(table) - CHECK_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) in [tool.memlint]: {', '.join(unknown)} "
            f"(known: {', '.join(sorted(CHECK_KEYS))})"
        )
    codes = all_codes()
    config = Config(root=path.parent.resolve(), source=path)
    if "select" in table:
        config.select = _string_list(table["select"], "select", path)
        validate_codes(config.select, codes, f"{path}: select")
    if "ignore" in table:
        config.ignore = _string_list(table["ignore"], "ignore", path)
        validate_codes(config.ignore, codes, f"{path}: ignore")
    if "extend-select" in table:
        config.extend_select = _string_list(table["extend-select"], "extend-select", path)
        validate_codes(config.extend_select, codes, f"{path}: extend-select")
    for key in ("exclude", "extend-exclude"):
        if key in table:
            patterns = _string_list(table[key], key, path)
            for pattern in patterns:
                _check_glob(pattern, path, key)
            config.exclude.extend(patterns)
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{path}: [tool.memlint] per-file-ignores must be a table of glob = [codes]")
        for pattern, value in pfi.items():
            _check_glob(pattern, path, "per-file-ignores")
            codes_for = _string_list(value, f"per-file-ignores.{pattern}", path)
            validate_codes(codes_for, codes, f"{path}: per-file-ignores {pattern!r}")
            config.per_file_ignores[pattern] = codes_for
    if "server" in table:
        config.server = _server_flag(table["server"], path)
    if "verify" in table:
        verify = table["verify"]
        if not isinstance(verify, dict):
            raise ConfigError(f"{path}: [tool.memlint.verify] must be a table")
        unknown = sorted(set(verify) - VERIFY_KEYS)
        if unknown:
            raise ConfigError(
                f"{path}: unknown key(s) in [tool.memlint.verify]: {', '.join(unknown)} "
                f"(known: {', '.join(sorted(VERIFY_KEYS))})"
            )
        config.verify = dict(verify)
    return config


def _check_glob(pattern: Any, where: Path, key: str) -> None:
    if not isinstance(pattern, str) or not pattern.strip():
        raise ConfigError(f"{where}: [tool.memlint] {key}: {pattern!r} is not a glob pattern")
    if pattern.count("[") != pattern.count("]"):
        raise ConfigError(f"{where}: [tool.memlint] {key}: {pattern!r} has an unbalanced '['")


def _server_flag(value: Any, where: Path) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: [tool.memlint] server must be true or false")
    return value


def server_in_config(folder: str) -> bool:
    """``server = true`` in the ``[tool.memlint]`` that governs ``folder``? (Read without
    validating the rest of the table: the command asks before the run does.)"""
    path = find_pyproject(folder)
    if path is None:
        return False
    table = _read_toml(path).get("tool", {}).get("memlint", {})
    return isinstance(table, dict) and "server" in table and _server_flag(table["server"], path)
