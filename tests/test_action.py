"""action.yml, the GitHub Action, run here step by step as a runner would: each shell step
with GitHub's bash options, the action's inputs, RUNNER_TEMP and GITHUB_ACTION_PATH; a
`uses:` step (the SARIF upload) is recorded with its inputs, not run. memlint is installed
for real, from a copy of this checkout, into the action's virtual environment."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")  # PyYAML comes with libcst

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
INSTALL_STEP = "Install memlint (without torch)"
EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")
CONDITION = re.compile(r"^inputs\.([\w-]+) == '([^']*)'$")

LEAK = textwrap.dedent("""\
    import torch

    def train(model, loader, opt):
        total = 0
        for x, y in loader:
            loss = model(x).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss
        return total
""")


@dataclass
class Run:
    ran: list[str] = field(default_factory=list)  # names of the steps that ran, in order
    outputs: dict[str, subprocess.CompletedProcess] = field(default_factory=dict)
    uploads: list[dict] = field(default_factory=list)  # the `with:` of each `uses:` step reached
    failed: str | None = None  # the step that failed (the job stops there)


def run_action(inputs: dict[str, str], workspace: Path, runner_temp: Path, action_path: Path,
               skip: tuple[str, ...] = ()) -> Run:
    values = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(inputs) - set(values)
    assert not unknown, f"action.yml has no input {unknown}"
    values.update(inputs)
    contexts = {"inputs": values, "runner.temp": str(runner_temp), "github.action_path": str(action_path)}

    def substitute(text: str) -> str:
        def one(match: re.Match) -> str:
            name = match.group(1)
            if name.startswith("inputs."):
                return values[name[len("inputs."):]]
            assert name in contexts, f"action.yml uses ${{{{ {name} }}}}, which this test does not provide"
            return contexts[name]
        return EXPRESSION.sub(one, str(text))

    shim = runner_temp / "bin"  # `python3` on the runner's PATH
    shim.mkdir(exist_ok=True)
    (shim / "python3").unlink(missing_ok=True)
    (shim / "python3").symlink_to(sys.executable)
    run = Run()
    for step in ACTION["runs"]["steps"]:
        name = step["name"]
        if name in skip:
            continue
        if "if" in step:
            condition = CONDITION.match(step["if"].strip())
            assert condition, f"this test reads only `inputs.NAME == 'VALUE'` conditions, not {step['if']!r}"
            if values[condition.group(1)] != condition.group(2):
                continue
        if "uses" in step:
            run.ran.append(name)
            run.uploads.append({"uses": step["uses"], **{k: substitute(v) for k, v in step.get("with", {}).items()}})
            continue
        assert step.get("shell") == "bash", f"step {name!r}: only bash steps are run here"
        env = {key: value for key, value in os.environ.items() if not key.startswith(("MEMLINT", "PYTHON"))}
        env.update({key: substitute(value) for key, value in step.get("env", {}).items()})
        env.update(RUNNER_TEMP=str(runner_temp), GITHUB_ACTION_PATH=str(action_path), CI="true", NO_COLOR="1",
                   PATH=f"{shim}{os.pathsep}{env.get('PATH', '')}")
        script = runner_temp / "step.sh"
        script.write_text(substitute(step["run"]), encoding="utf-8")
        # how GitHub runs `shell: bash`
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                              env=env, capture_output=True, text=True, timeout=600)
        run.ran.append(name)
        run.outputs[name] = done
        if done.returncode != 0:
            run.failed = name
            break
    return run


def copy_checkout(destination: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if name.startswith(("benchmarks/", "tests/")):
            continue  # not part of what pip installs; keeps the copy small
        if os.path.lexists(ROOT / name):
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name, follow_symlinks=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The whole action on a project with a leak, with SARIF: the install step included."""
    base = tmp_path_factory.mktemp("action")
    action_path, runner_temp, workspace = base / "action", base / "runner-temp", base / "workspace"
    for folder in (action_path, runner_temp, workspace / "src"):
        folder.mkdir(parents=True)
    copy_checkout(action_path)
    (workspace / "src" / "train.py").write_text(LEAK)
    (workspace / "src" / "clean.py").write_text(LEAK.replace("total += loss", "total += loss.item()"))
    run = run_action({"args": "src/", "sarif": "true"}, workspace, runner_temp, action_path)
    return run, workspace, runner_temp, action_path


def test_the_action_installs_memlint_without_torch(installed):
    run, _, runner_temp, _ = installed
    assert run.ran[0] == INSTALL_STEP
    install = run.outputs[INSTALL_STEP]
    assert install.returncode == 0, install.stdout + install.stderr
    python = runner_temp / "memlint-venv" / "bin" / "python"
    probe = "import importlib.util as u; print(u.find_spec('torch') is None, u.find_spec('memlint') is not None)"
    assert subprocess.run([str(python), "-c", probe], capture_output=True, text=True).stdout == "True True\n"


def test_the_action_uploads_sarif_then_fails_the_job_with_annotations(installed):
    run, _, runner_temp, _ = installed
    assert run.ran == [INSTALL_STEP, "memlint check, SARIF for code scanning", "Upload SARIF",
                       "memlint check, annotations"]
    sarif_path = runner_temp / "memlint.sarif"
    assert run.uploads == [{"uses": "github/codeql-action/upload-sarif@v3", "sarif_file": str(sarif_path),
                            "category": "memlint"}]
    results = json.loads(sarif_path.read_text())["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [
        ("ML101", "src/train.py")]
    annotations = run.outputs["memlint check, annotations"]
    assert run.failed == "memlint check, annotations" and annotations.returncode == 1
    assert annotations.stdout.startswith("::error file=src/train.py,line=10,col=9,")


def test_without_sarif_only_the_annotations_run_and_a_clean_project_passes(installed):
    _, workspace, runner_temp, action_path = installed
    run = run_action({"args": "src/clean.py"}, workspace, runner_temp, action_path, skip=(INSTALL_STEP,))
    assert run.ran == ["memlint check, annotations"] and run.uploads == [] and run.failed is None
    assert run.outputs["memlint check, annotations"].stdout == ""


def test_args_are_split_into_paths_and_options(installed):
    _, workspace, runner_temp, action_path = installed
    run = run_action({"args": "--select ML2 src/"}, workspace, runner_temp, action_path, skip=(INSTALL_STEP,))
    assert run.failed is None, run.outputs["memlint check, annotations"].stdout  # ML101 is not selected


def test_a_file_memlint_cannot_check_is_uploaded_and_fails_the_job(installed):
    _, workspace, runner_temp, action_path = installed
    broken = workspace / "broken"
    broken.mkdir(exist_ok=True)
    (broken / "bad.py").write_text("import torch\ndef f(:\n")
    run = run_action({"args": "broken/", "sarif": "true"}, workspace, runner_temp, action_path, skip=(INSTALL_STEP,))
    assert "Upload SARIF" in run.ran
    assert json.loads((runner_temp / "memlint.sarif").read_text())["runs"][0]["results"][0]["ruleId"] == "ML901"
    assert run.failed == "memlint check, annotations"
    assert run.outputs["memlint check, annotations"].returncode == 2


def test_a_typo_in_the_paths_fails_before_anything_is_uploaded(installed):
    _, workspace, runner_temp, action_path = installed
    (workspace / "docs").mkdir(exist_ok=True)
    run = run_action({"args": "docs/", "sarif": "true"}, workspace, runner_temp, action_path, skip=(INSTALL_STEP,))
    assert run.failed == "memlint check, SARIF for code scanning" and run.uploads == []
    assert "no Python files or notebooks to check in docs/" in run.outputs[run.failed].stderr
