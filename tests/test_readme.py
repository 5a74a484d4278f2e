"""The README promises: its rule table matches the registry, its commands exist, and every
console example shows what its commands print today (scripts/readme_examples.py re-runs them)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_readme_examples():
    spec = importlib.util.spec_from_file_location("readme_examples", ROOT / "scripts" / "readme_examples.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


readme_examples = _load_readme_examples()
EXAMPLES = readme_examples.examples((ROOT / "README.md").read_text(encoding="utf-8"))


def test_rule_table_is_up_to_date():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "rule_table.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_names_the_two_setup_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "pip install . && memlint check fixtures/" in readme
    assert "bash scripts/test.sh" in readme
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("example", [
    pytest.param(e, id=e.name, marks=[pytest.mark.slow] if e.name.startswith("memlint verify") else [])
    for e in EXAMPLES
])
def test_readme_example_shows_what_its_commands_print(example):
    """Fails when a change of output was not written into the README: run
    python3 scripts/readme_examples.py --update and review the diff."""
    assert example.commands, "a ```console block without a '$ ' command"
    outputs = readme_examples.run(example)
    assert not readme_examples.differences(example, outputs), (
        "README.md differs from what the commands print (python3 scripts/readme_examples.py --update):\n"
        + readme_examples.differences(example, outputs))


def test_every_check_format_and_the_verify_verdicts_have_a_generated_example():
    commands = [c.text for e in EXAMPLES for c in e.commands]
    assert any(c.startswith("memlint check fixtures/") for c in commands)
    for needed in ("--format concise", "--add-noqa", "--diff", "--fix", ".ipynb", "memlint verify"):
        assert any(needed in c for c in commands), needed


# ----- the script's own machinery, on a made-up README ----------------------------------------
MADE_UP = """\
Text.

```console
$ memlint verify train.py
growth: the 22.8 GiB still free on cpu run out at step ~2,392,593
  per step: tensors +10.0 KiB, graph +6 nodes, RSS +85.8 KiB
  took 1.25 s
…
$ echo $?
1
```

```bash
$ not an example
```
"""


def test_examples_are_console_blocks_with_commands_outputs_and_cuts():
    [example] = readme_examples.examples(MADE_UP)
    assert [c.text for c in example.commands] == ["memlint verify train.py", "echo $?"]
    first, second = example.commands
    assert first.cut and len(first.output) == 3 and not second.cut and second.output == ["1"]
    assert MADE_UP[example.start:example.end] == example.render([first.output, second.output])


def test_machine_dependent_figures_are_compared_as_placeholders_and_kept_on_update():
    [example] = readme_examples.examples(MADE_UP)
    other_machine = [[
        "growth: the 3.1 GiB still free on cpu run out at step ~12,000",
        "  per step: tensors +10.0 KiB, graph +6 nodes, RSS -4.0 KiB",
        "  took 880 ms",
        "more lines the README cuts",
    ], ["1"]]
    assert readme_examples.differences(example, other_machine) == ""
    assert readme_examples.kept(example, other_machine)[0][:3] == example.commands[0].output
    changed = [other_machine[0][:1] + ["  per step: tensors +12.0 KiB, graph +6 nodes, RSS +1 B"]
               + other_machine[0][2:], ["1"]]
    diff = readme_examples.differences(example, changed)
    assert "-  per step: tensors +10.0 KiB" in diff and "+  per step: tensors +12.0 KiB" in diff
    written = example.render(readme_examples.kept(example, changed))
    assert "tensors +12.0 KiB" in written and "still free on cpu run out at step ~2,392,593" in written
    assert written.splitlines()[4] == "…"  # the cut stays where the README had it


def test_commands_of_a_block_share_one_shell_and_see_the_previous_exit_code(tmp_path):
    [example] = readme_examples.examples(
        "```console\n$ memlint check --select ML999 .\n$ echo $?\n$ touch made.py && git status --short\n```\n")
    outputs = readme_examples.run(example)
    assert outputs[0][0].startswith("memlint: error: --select: unknown rule code 'ML999'")
    assert outputs[1] == ["2"]
    assert outputs[2] == ["?? made.py"]  # a committed copy of the checkout: git sees only the new file


def test_the_install_line_for_verify_brings_the_cpu_torch_the_tests_run_on():
    """A newcomer on a CPU laptop must not download a CUDA build by accident: the README's line
    names the torch that scripts/test.sh pins, and PyTorch's CPU index."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cpu_index = "--extra-index-url https://download.pytorch.org/whl/cpu"
    line = re.search(rf"^pip install '\.\[verify\]' torch==(\S+) {re.escape(cpu_index)}$", readme, re.M)
    assert line, "the README's install line for memlint verify"
    version = line.group(1)
    assert f"brings torch {version}'s CPU build (`{version}+cpu`" in readme
    test_sh = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert f'"torch=={version}"' in test_sh and cpu_index in test_sh
    assert f'!= "{version}"' in test_sh
    assert f"pip install torch=={version} {cpu_index}" in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "torch-memlint[" not in readme  # not published: nothing to install by that name
