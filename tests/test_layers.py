"""The package's layers (docs/architecture.md, pyproject.toml's [tool.importlinter]): foundation <- static
<- dynamic <- front, no import cycles, and imports inside functions only for heavy optional
dependencies, with the reason said where they are."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "memlint"

pytest.importorskip("importlinter")


def lint_imports(source_root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with the project's contracts, on the memlint package under ``source_root``."""
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command as c; "
               "sys.exit(c())", "--config", str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"]
    env = {"PYTHONPATH": str(source_root), "PATH": "/usr/bin:/bin"}
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=source_root, timeout=120)


def test_the_package_keeps_its_layers_and_has_no_cycles():
    done = lint_imports(ROOT / "src")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize("module, line, broken", [
    # the foundation reaching up into the front
    ("findings.py", "import memlint.cli\n", "memlint's layers"),
    # the static half reaching up into verify
    ("static/runner.py", "import memlint.dynamic.api\n", "memlint's layers"),
    # the engine reaching up into a rule
    ("static/engine.py", "import memlint.static.rules.ML101_graph_accumulation\n", "the static layer"),
    # a cycle hidden inside a function
    ("dynamic/options.py", "def f():\n    import memlint.dynamic.api\n", "no import cycles"),
])
def test_an_import_against_the_layers_fails(tmp_path, module, line, broken):
    shutil.copytree(SRC, tmp_path / "memlint", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "memlint" / module
    target.write_text(target.read_text() + "\n" + line)
    done = lint_imports(tmp_path)
    assert done.returncode != 0
    assert f"{broken}" in done.stdout and "BROKEN" in done.stdout, done.stdout


# Modules whose import inside a function is allowed, with a comment saying why on that line
# or above the imports: torch and libcst are heavy and optional (`memlint check` needs no
# torch; a warm run, whose files are all cached, needs no libcst and no checking machinery);
# what one command or option needs and a plain `memlint check` never does (verify's half,
# --fix, --add-noqa, worker processes, the warm server's sockets, the language server's pygls:
# `memlint check` starts on every commit);
# and the package root loads the halves on first use.
HEAVY = ("torch", "libcst", "memlint.static.module_check", "memlint.static.file_check", "memlint.static.fixing",
         "memlint.static.rules", "memlint.dynamic", "memlint.static.runner", "memlint.cli", "concurrent.futures",
         "socket", "signal", "subprocess", "memlint.static.add_noqa", "memlint.lsp", "memlint.report.verify_text")


def _function_imports():
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for function in ast.walk(ast.parse(text)):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [("." * node.level) + (node.module or "")]
                else:
                    continue
                # the reason: a comment on the line, or above the block of imports it opens
                first = node.lineno - 1
                while first > 0 and lines[first - 1].strip().startswith(("import ", "from ")):
                    first -= 1
                above = lines[first - 1].strip() if first > 0 else ""
                yield path.relative_to(SRC), node.lineno, names, "#" in lines[node.lineno - 1] or above.startswith("#")


def test_imports_inside_functions_are_only_heavy_ones_with_a_reason():
    found = list(_function_imports())
    wrong = [f"{path}:{line} imports {names}" for path, line, names, _ in found
             if not all(name.startswith(HEAVY) for name in names)]
    unexplained = [f"{path}:{line} imports {names} without a comment saying why" for path, line, names, why in found
                   if not why and str(path) != "__init__.py"]
    assert not wrong, "\n".join(wrong)
    assert not unexplained, "\n".join(unexplained)


def test_importing_memlint_stays_light():
    code = ("import sys, memlint, memlint.findings, memlint.catalogue, memlint.config, memlint.pytest_plugin; "
            "print(sorted(m for m in ('libcst', 'torch', 'click', 'memlint.static.runner', 'memlint.dynamic.api') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_public_api_is_the_implementation_itself():
    import memlint
    from memlint.dynamic.api import verify_script
    from memlint.dynamic.marker import step
    from memlint.static.runner import check_paths

    assert memlint.check_paths is check_paths
    assert memlint.verify_script is verify_script
    assert memlint.step is step
    assert sorted(memlint.__all__) == ["__version__", "check_paths", "step", "verify_script"]
