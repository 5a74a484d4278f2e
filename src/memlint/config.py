"""``[tool.memlint]`` in the nearest pyproject.toml, overridden by the command line.

Like ruff, each file gets the configuration of the nearest ``pyproject.toml`` with a
``[tool.memlint]`` table above it (settings are not merged across files), or, with none
above it, the current folder's; ``--config`` gives one configuration for every file. :class:`Configs` answers "which configuration for
this path?" for a run.
"""

from __future__ import annotations

import fnmatch
import json
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


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# [tool.memlint.verify]: each key, what it expects (in words, for the error) and the test of a value.
# memlint verify reads the same names from its command line (memlint.dynamic.options), which
# re-checks the values; checked here, the error names the file and the key.
VERIFY_DEVICES = ("auto", "cpu", "cuda")
VERIFY_STEP_ON = ("optimizer", "dataloader", "module", "marker")
VERIFY_SCHEMA: dict[str, tuple[str, Any]] = {
    "steps": ("a whole number of at least 2", lambda v: _whole(v) and v >= 2),
    "warmup": ("a whole number of at least 0", lambda v: _whole(v) and v >= 0),
    "threshold": ("a number of bytes per step (at least 0)", lambda v: _number(v) and v >= 0),
    "node-threshold": ("a number of autograd nodes per step (at least 0)", lambda v: _number(v) and v >= 0),
    "rss-threshold": ("a number of bytes per step (at least 0)", lambda v: _number(v) and v >= 0),
    "device": ("one of " + ", ".join(f'"{d}"' for d in VERIFY_DEVICES), lambda v: v in VERIFY_DEVICES),
    "timeout": ("a number of seconds above 0", lambda v: _number(v) and v > 0),
    "gpu-memory": ('a size such as "24GiB" or "80GB", a number of bytes, or a card such as "A100-80GB"',
                   lambda v: isinstance(v, str) or (_whole(v) and v > 0)),
    "step-on": ("one of " + ", ".join(f'"{s}"' for s in VERIFY_STEP_ON), lambda v: v in VERIFY_STEP_ON),
}
VERIFY_KEYS = set(VERIFY_SCHEMA)

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
        prefix = prefix.upper()  # codes are accepted in any case, everywhere (ml101 is ML101)
        if prefix == "ALL":
            out.update(all_codes)
        else:
            out.update(code for code in all_codes if code.startswith(prefix))
    return out


def validate_codes(prefixes: Iterable[str], all_codes: Iterable[str], where: str) -> list[str]:
    """The prefixes in upper case (codes are accepted in any case); each must select at least
    one known code."""
    all_codes = list(all_codes)
    out = []
    for prefix in prefixes:
        if not isinstance(prefix, str):
            raise ConfigError(f"{where}: expected a rule code, got {prefix!r}")
        prefix = prefix.strip().upper()
        if prefix != "ALL" and not (prefix and any(code.startswith(prefix) for code in all_codes)):
            raise ConfigError(f"{where}: unknown rule code {prefix!r} (expected a code or prefix such as ML1 or "
                              "ML203; 'memlint rules' lists them)")
        out.append(prefix)
    return out


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


def toml_value(value: Any) -> str:
    """``value`` as it would be written in TOML (shortened), for an error message."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, list):
        text = "[" + ", ".join(toml_value(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)} = {toml_value(v)}" for k, v in value.items()) + "}"
    else:
        text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: Any) -> str:
    """What a TOML value is, in words."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return "a date or time"


def value_error(where: Path, table: str, key: str, value: Any, expected: str) -> ConfigError:
    """``FILE: [TABLE] KEY = VALUE: expected WHAT, got KIND``: the file, the key, what was
    given and what is expected."""
    return ConfigError(f"{where}: [{table}] {key} = {toml_value(value)}: expected {expected}, got {_kind(value)}")


def _string_list(value: Any, key: str, where: Path, example: str) -> list[str]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    # A string is refused too: select = "ML1" reads as a list of one, but ignore = "ML1,ML2"
    # would not, and ruff refuses both.
    raise value_error(where, "tool.memlint", key, value, f"a list of strings, such as {key} = [{example}]")


def load_config(config_path: Path | None = None, start: Path | None = None) -> Config:
    """Load ``[tool.memlint]`` from ``config_path`` or the nearest pyproject.toml."""
    path = config_path or find_pyproject(start or Path.cwd())
    if path is None:
        return Config()
    data = _read_toml(path)
    table = data.get("tool", {}).get("memlint", {})
    if not isinstance(table, dict):
        raise value_error(path, "tool", "memlint", table, "a table: [tool.memlint]")
    _refuse_unknown_keys(table, CHECK_KEYS, path, "tool.memlint")
    codes = all_codes()
    config = Config(root=path.parent.resolve(), source=path)

    def code_list(key: str) -> list[str]:
        return validate_codes(_string_list(table[key], key, path, '"ML1"'), codes, f"{path}: [tool.memlint] {key}")

    if "select" in table:
        config.select = code_list("select")
    if "ignore" in table:
        config.ignore = code_list("ignore")
    if "extend-select" in table:
        config.extend_select = code_list("extend-select")
    for key in ("exclude", "extend-exclude"):
        if key in table:
            patterns = _string_list(table[key], key, path, '"generated/*"')
            for pattern in patterns:
                _check_glob(pattern, path, key)
            config.exclude.extend(patterns)
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise value_error(path, "tool.memlint", "per-file-ignores", pfi,
                              'a table of pattern = [codes], such as {"tests/*" = ["ML201"]}')
        for pattern, value in pfi.items():
            _check_glob(pattern, path, "per-file-ignores")
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise value_error(path, "tool.memlint.per-file-ignores", json.dumps(pattern), value,
                                  'a list of codes, such as ["ML201"]')
            config.per_file_ignores[pattern] = validate_codes(value, codes, f"{path}: per-file-ignores {pattern!r}")
    if "server" in table:
        config.server = _server_flag(table["server"], path)
    if "verify" in table:
        config.verify = _verify_table(table["verify"], path)
    return config


def _verify_table(verify: Any, path: Path) -> dict[str, Any]:
    if not isinstance(verify, dict):
        raise value_error(path, "tool.memlint", "verify", verify, "a table: [tool.memlint.verify]")
    _refuse_unknown_keys(verify, VERIFY_KEYS, path, "tool.memlint.verify")
    for key, value in verify.items():
        expected, valid = VERIFY_SCHEMA[key]
        if not valid(value):
            raise value_error(path, "tool.memlint.verify", key, value, expected)
    return dict(verify)


def _refuse_unknown_keys(table: dict[str, Any], known: set[str], path: Path, name: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) in [{name}]: {', '.join(unknown)} (known: {', '.join(sorted(known))})")


def _check_glob(pattern: Any, where: Path, key: str) -> None:
    if not isinstance(pattern, str) or not pattern.strip():
        raise ConfigError(f"{where}: [tool.memlint] {key}: {pattern!r} is not a glob pattern")
    if pattern.count("[") != pattern.count("]"):
        raise ConfigError(f"{where}: [tool.memlint] {key}: {pattern!r} has an unbalanced '['")


def _server_flag(value: Any, where: Path) -> bool:
    if not isinstance(value, bool):
        raise value_error(where, "tool.memlint", "server", value, "true or false")
    return value


def server_in_config(folder: str) -> bool:
    """``server = true`` in the ``[tool.memlint]`` that governs ``folder``? (Read without
    validating the rest of the table: the command asks before the run does.)"""
    path = find_pyproject(folder)
    if path is None:
        return False
    table = _read_toml(path).get("tool", {}).get("memlint", {})
    return isinstance(table, dict) and "server" in table and _server_flag(table["server"], path)
