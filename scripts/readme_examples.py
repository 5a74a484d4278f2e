"""Re-run the commands of README.md's console examples: compare their output with the README,
or write it there.

    python3 scripts/readme_examples.py --check     # exit 1 with a diff when an output differs
    python3 scripts/readme_examples.py --update    # rewrite the outputs in README.md
    python3 scripts/readme_examples.py --list      # the examples and their commands

Every ```console block of README.md is an example: a line starting with "$ " is a command, the
lines after it up to the next command are its output (stdout and stderr together, as a terminal
shows them, without colour). Each block runs in a fresh copy of the checkout (its tracked and
untracked files, committed there as one commit so that `git diff` works), from the copy's root,
with `memlint` this checkout's own; the commands of one block run one after another in one
shell, so `echo $?` gives the exit code of the command before it. An output that the README
cuts short ends with a line "…": only the lines before it are compared, and --update keeps that
many.

Figures that depend on the machine are compared as placeholders, never as numbers: RSS, the
memory still free and the step at which it would run out, durations, and paths outside the
copy. --update writes this machine's figures. tests/test_readme.py runs --check's comparison
for every block, so a change of output that is not written into the README fails the suite.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE, END_FENCE = "```console\n", "```\n"
PROMPT = "$ "
CUT = "…"  # an output line of its own: the README shows only the lines before it
SEPARATOR = "\x00memlint-readme-example-end\x00"  # printed after each command's output
# Each command gets at most this long (a verify example takes a few seconds on CPU).
COMMAND_TIMEOUT = 300

# Machine-dependent figures, replaced by placeholders on both sides before comparing.
_SIZE = r"[-+]?[\d.,]+ (?:B|KiB|MiB|GiB|TiB)"
MACHINE_DEPENDENT: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\bRSS {_SIZE}"), "RSS <rss>"),
    (re.compile(rf"the {_SIZE} still free on (\S+) run out at step ~[\d,]+"),
     r"the <free> still free on \1 run out at step ~<step>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|s)\b(?![\w/])"), "<duration>"),
    (re.compile(r"(?:/[^\s/:'\"]+)*/(?:site|dist)-packages/"), "<site-packages>/"),
]


@dataclass
class Command:
    text: str  # without the prompt
    output: list[str]  # the lines shown under it (without a trailing "…")
    cut: bool  # the README shows only the first len(output) lines


@dataclass
class Example:
    start: int  # offset in the README of the block's first line after the fence
    end: int  # offset of the closing fence
    commands: list[Command]

    @property
    def name(self) -> str:
        return self.commands[0].text if self.commands else "(empty)"

    def render(self, outputs: list[list[str]]) -> str:
        """The block's text with ``outputs`` under the commands (cut where the README cuts)."""
        lines: list[str] = []
        for command, output in zip(self.commands, outputs):
            lines.append(PROMPT + command.text)
            if command.cut:
                lines.extend(output[:len(command.output)] + [CUT])
            else:
                lines.extend(output)
        return "".join(line + "\n" for line in lines)


def examples(text: str) -> list[Example]:
    found = []
    position = 0
    while (begin := text.find(FENCE, position)) != -1:
        start = begin + len(FENCE)
        end = text.find(END_FENCE, start)
        if end == -1:
            raise ValueError(f"README.md: a ```console block at offset {begin} is never closed")
        found.append(Example(start, end, _commands(text[start:end])))
        position = end + len(END_FENCE)
    return found


def _commands(body: str) -> list[Command]:
    commands: list[Command] = []
    for line in body.splitlines():
        if line.startswith(PROMPT):
            commands.append(Command(line[len(PROMPT):], [], False))
        elif commands:
            commands[-1].output.append(line)
    for command in commands:
        if command.output and command.output[-1] == CUT:
            command.output.pop()
            command.cut = True
    return commands


# ----- running -------------------------------------------------------------------------------------
def copy_checkout(destination: Path) -> None:
    """The checkout's files (tracked, and untracked ones git does not ignore) in
    ``destination``, committed there as one commit."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if not os.path.lexists(source):  # deleted in the working tree, not yet in git
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    git = ["git", "-c", "user.name=readme", "-c", "user.email=readme@example.invalid", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "README examples"]):
        subprocess.run(git + args, cwd=destination, check=True, capture_output=True)


def environment(copy: Path, bin_folder: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("FORCE_COLOR", "CLICOLOR_FORCE", "MEMLINT_SERVER", "PYTHONPATH")}
    env.update(
        NO_COLOR="1",  # as in a pipe: no colour, no progress bar
        MEMLINT_NO_SERVER="1",  # every run checks its files itself
        PYTHONPATH=str(copy / "src"),
        PATH=f"{bin_folder}{os.pathsep}{env.get('PATH', '')}",
        PYTHONUNBUFFERED="1",  # stdout and stderr in the order they were written
        PYTHONDONTWRITEBYTECODE="1",
        GIT_PAGER="cat",
        LC_ALL="C.UTF-8",
    )
    return env


def run(example: Example) -> list[list[str]]:
    """The output of each command of ``example``, run in a fresh copy of the checkout."""
    with tempfile.TemporaryDirectory(prefix="memlint-readme-") as scratch:
        copy, bin_folder = Path(scratch) / "memlint", Path(scratch) / "bin"
        copy.mkdir()
        bin_folder.mkdir()
        copy_checkout(copy)
        shim = bin_folder / "memlint"  # `memlint` is this checkout's, whatever is installed
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memlint "$@"\n')
        shim.chmod(0o755)
        # One shell for the block; after each command its exit code is restored, so that the
        # next command's `$?` is that command's, and a separator marks where its output ends.
        script = ["exec 2>&1", "status=0"]
        for command in example.commands:
            script += [f"(exit $status); {command.text}", "status=$?",
                       "printf '" + SEPARATOR.replace("\x00", "\\000") + "\\n'"]
        timeout = COMMAND_TIMEOUT * len(example.commands)
        done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=copy, env=environment(copy, bin_folder),
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=timeout)
        text = done.stdout.decode("utf-8", "replace").replace(str(copy) + os.sep, "")
    parts = text.split(SEPARATOR + "\n")[:len(example.commands)]
    return [part.rstrip("\n").split("\n") if part.strip("\n") else [] for part in parts]


# ----- comparing ----------------------------------------------------------------------------------
def normalise(line: str) -> str:
    for pattern, placeholder in MACHINE_DEPENDENT:
        line = pattern.sub(placeholder, line)
    return line


def differences(example: Example, outputs: list[list[str]]) -> str:
    """A unified diff of the README's block against the outputs (machine-dependent figures
    as placeholders), or "" when they agree."""
    shown = [normalise(line) for line in example.render([c.output for c in example.commands]).splitlines()]
    actual = [normalise(line) for line in example.render(outputs).splitlines()]
    if shown == actual:
        return ""
    return "\n".join(difflib.unified_diff(shown, actual, "README.md", "actual output", lineterm=""))


def kept(example: Example, outputs: list[list[str]]) -> list[list[str]]:
    """What --update writes: each command's new output, keeping the README's line wherever
    the two differ only in machine-dependent figures (a re-run does not churn this machine's
    RSS into the README)."""
    out = []
    for command, output in zip(example.commands, outputs):
        shown = command.output
        if len(output) == len(shown) or (command.cut and len(output) >= len(shown)):
            output = [old if normalise(old) == normalise(new) else new for old, new in zip(shown, output)] + \
                output[len(shown):]
        out.append(output)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="exit 1 when an output differs from README.md")
    action.add_argument("--update", action="store_true", help="write the outputs into README.md")
    action.add_argument("--list", action="store_true", help="print each example's commands")
    parser.add_argument("-k", metavar="TEXT", help="only the examples whose first command contains TEXT")
    options = parser.parse_args()

    text = README.read_text(encoding="utf-8")
    chosen = [e for e in examples(text) if not options.k or options.k in e.name]
    if options.list:
        for example in chosen:
            print("\n".join(PROMPT + c.text for c in example.commands), end="\n\n")
        return 0
    failed = 0
    replaced = text
    for example in reversed(chosen):  # from the end, so that the offsets before stay valid
        print(f"running: {example.name}", file=sys.stderr)
        outputs = run(example)
        if options.update:
            replaced = replaced[:example.start] + example.render(kept(example, outputs)) + replaced[example.end:]
            continue
        diff = differences(example, outputs)
        if diff:
            failed += 1
            print(diff)
    if options.update:
        if replaced != text:
            README.write_text(replaced, encoding="utf-8")
            print("README.md: outputs rewritten; review them with git diff README.md", file=sys.stderr)
        return 0
    if failed:
        print(f"{failed} README example(s) differ: python3 scripts/readme_examples.py --update rewrites them",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
