"""The result cache and the parallel runner (issue 4): a cached result is only ever reused
for the same bytes, memlint, rule selection and ignores; results are identical with and
without the cache and with one or many processes. No timings here: see benchmarks/speed.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import memlint.static.cache as cache_module
import memlint.static.file_check as file_check
import memlint.static.runner as runner
from memlint.config import Config
from memlint.static.positions import Positions
from memlint.static.runner import check_paths

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

TRAIN = """\
import torch

def train(model, loader, optimizer):
    losses = []
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        losses.append(loss)
        optimizer.step()
    return losses


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return [model(x) for x, _ in loader]
"""


@pytest.fixture
def counted(monkeypatch):
    """Paths actually checked (cache misses), in the serial path."""
    checked: list[str] = []
    real = file_check.check_file

    def check_file(path, *args, **kwargs):
        checked.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(file_check, "check_file", check_file)
    return checked


def _run(root: Path, paths=None, **config) -> list:
    cfg = Config(root=root, **config)
    return check_paths([str(p) for p in (paths or [root])], config=cfg, use_cache=True, jobs=1).findings


def test_second_run_hits_and_gives_the_same_findings(tmp_path, counted):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "other.py").write_text("import torch\nx = torch.zeros(3)\n")
    first = _run(tmp_path)
    assert first and len(counted) == 2
    counted.clear()
    assert _run(tmp_path) == first
    assert counted == []
    assert (tmp_path / ".memlint_cache" / ".gitignore").is_file()


def test_content_change_misses(tmp_path, counted):
    train = tmp_path / "train.py"
    train.write_text(TRAIN)
    first = _run(tmp_path)
    counted.clear()
    train.write_text(TRAIN.replace("losses.append(loss)", "losses.append(loss.item())"))
    second = _run(tmp_path)
    assert counted == [str(train)]
    assert second != first and not any(f.code == "ML101" for f in second)
    train.write_text(TRAIN)  # back to the first bytes: the first entry is still good
    counted.clear()
    assert _run(tmp_path) == first and counted == []


def test_selection_change_misses(tmp_path, counted):
    (tmp_path / "train.py").write_text(TRAIN)
    everything = _run(tmp_path)
    counted.clear()
    only = _run(tmp_path, select=["ML2"])
    assert len(counted) == 1
    assert only == [f for f in everything if f.code.startswith("ML2")]
    counted.clear()
    assert _run(tmp_path, ignore=["ML101"]) == [f for f in everything if f.code != "ML101"]
    assert len(counted) == 1


def test_per_file_ignores_change_misses(tmp_path, counted):
    (tmp_path / "train.py").write_text(TRAIN)
    everything = _run(tmp_path)
    counted.clear()
    ignored = _run(tmp_path, per_file_ignores={"train.py": ["ML101"]})
    assert len(counted) == 1 and ignored == [f for f in everything if f.code != "ML101"]
    counted.clear()
    assert _run(tmp_path, per_file_ignores={"other_*.py": ["ML101"]}) == everything
    assert counted == []  # the ignores of other files do not touch this one's entry


@pytest.mark.parametrize("what", ["version", "code"])
def test_memlint_change_misses(tmp_path, counted, monkeypatch, what):
    (tmp_path / "train.py").write_text(TRAIN)
    first = _run(tmp_path)
    counted.clear()
    if what == "version":
        monkeypatch.setattr(cache_module, "__version__", "999.0")
    else:  # an edited rule or engine file changes the fingerprint of memlint's sources
        monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "edited")
    assert _run(tmp_path) == first
    assert len(counted) == 1


def test_fingerprint_follows_source_files(tmp_path, monkeypatch):
    cache_module.code_fingerprint.cache_clear()
    before = cache_module.code_fingerprint()
    package = Path(cache_module.__file__).resolve().parents[1]
    target = package / "static" / "rules" / "__init__.py"
    stat = target.stat()
    try:
        import os

        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        cache_module.code_fingerprint.cache_clear()
        assert cache_module.code_fingerprint() != before
    finally:
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        cache_module.code_fingerprint.cache_clear()


@pytest.mark.parametrize(
    "garbage",
    [b"", b"{not json", b"\x00\xff\xfe binary", b"[]", b'{"findings": 3}', b'{"findings": [{"path": 1}]}',
     b'{"key": "wrong", "findings": []}'],
    ids=["empty", "truncated", "binary", "list", "wrong-type", "wrong-item", "other-key"],
)
def test_corrupted_entries_are_ignored(tmp_path, counted, garbage):
    (tmp_path / "train.py").write_text(TRAIN)
    first = _run(tmp_path)
    entries = [p for p in (tmp_path / ".memlint_cache").rglob("*") if p.is_file() and p.name != ".gitignore"]
    assert entries
    for entry in entries:
        entry.write_bytes(garbage)
    counted.clear()
    assert _run(tmp_path) == first
    assert len(counted) == 1  # a miss, then rewritten
    counted.clear()
    assert _run(tmp_path) == first and counted == []


def test_unwritable_cache_folder_is_not_fatal(tmp_path, counted):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / ".memlint_cache").write_text("a file where the folder should be")
    first = _run(tmp_path)
    assert first and any(f.code == "ML101" for f in first)
    assert _run(tmp_path) == first


def test_failures_are_not_cached(tmp_path, counted):
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n")
    assert [f.code for f in _run(tmp_path)] == ["ML901"]
    counted.clear()
    assert [f.code for f in _run(tmp_path)] == ["ML901"]
    assert len(counted) == 1


def test_entries_are_json_with_their_key(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    _run(tmp_path)
    entries = [p for p in (tmp_path / ".memlint_cache").rglob("*")
               if p.is_file() and p.name != ".gitignore" and "summaries" not in p.parts
               and "outlines" not in p.parts]
    assert len(entries) == 1
    data = json.loads(entries[0].read_text())
    assert data["key"] == entries[0].name and data["findings"]
    assert not [p for p in entries[0].parent.iterdir() if p.name.startswith(".tmp-")]


# ----- identical results: cache or not, one process or many -------------------------------------
def _generated_project(folder: Path) -> list[Path]:
    """Every rule's examples as files (more than the parallel threshold), plus fixtures."""
    from memlint.static.rules import all_rules

    files = []
    for rule in all_rules():
        for index, example in enumerate([*rule.VALID, *(i.code for i in rule.INVALID)]):
            path = folder / f"{rule.code}_{index}.py"
            path.write_text(example)
            files.append(path)
    (folder / "broken.py").write_text("import torch\nx = (\n")
    files.append(folder / "broken.py")
    return files


def _all_modes(paths: list[str], root: Path) -> dict[str, list]:
    config = Config(root=root, select=["ALL"])
    out = {}
    for name, use_cache, jobs in (("serial", False, 1), ("parallel", False, 2), ("fill", True, 2),
                                  ("cached-serial", True, 1), ("cached-parallel", True, 2)):
        out[name] = check_paths(paths, config=config, use_cache=use_cache, jobs=jobs).findings
    return out


def test_identical_with_and_without_cache_serial_and_parallel(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    files = _generated_project(project)
    assert len(files) > runner.PARALLEL_THRESHOLD
    paths = [str(project), str(FIXTURES)]
    results = _all_modes(paths, tmp_path)
    reference = results["serial"]
    assert any(f.code.startswith("ML1") for f in reference) and any(f.code == "ML901" for f in reference)
    for name, findings in results.items():
        assert findings == reference, name


def test_cli_identical_with_j1_and_j2(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    _generated_project(project)
    outputs = set()
    for args in (["--no-cache", "-j", "1"], ["--no-cache", "-j", "2"], ["-j", "2"], ["-j", "1"]):
        done = subprocess.run(
            [sys.executable, "-m", "memlint.cli", "check", "--format", "json", "--select", "ALL", *args, "project"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 2, done.stderr  # broken.py cannot be checked
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_fully_cached_run_does_not_import_libcst(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    script = (
        "import sys\n"
        "import memlint.static.cache as cache\n"
        "cache.code_fingerprint = lambda: 'pinned'  # others may be editing memlint's files meanwhile\n"
        "from memlint.cli import main\n"
        "try:\n"
        "    main(['check', 'train.py'])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code, 'libcst' in sys.modules, 'memlint.static.engine' in sys.modules)\n"
    )
    lines = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        lines.append(done.stdout.strip().splitlines()[-1])
    assert lines[0] == "exit 1 True True", lines
    assert lines[1] == "exit 1 False False", lines


def test_a_file_no_rule_can_match_is_checked_without_libcst(tmp_path):
    # No PyTorch import: no rule can find anything, so Python's own parser checks the syntax.
    (tmp_path / "plain.py").write_text("import json\n\nfor x in range(3):\n    total += x\n")
    (tmp_path / "broken.py").write_text("import json\n\ndef f(:\n    pass\n")
    script = (
        "import sys\n"
        "from memlint.cli import main\n"
        "try:\n"
        "    main(['check', '--no-cache', *sys.argv[1:]])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code, 'libcst' in sys.modules)\n"
    )
    plain = subprocess.run([sys.executable, "-c", script, "plain.py"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    assert plain.stdout.strip().splitlines()[-1] == "exit 0 False", plain.stdout + plain.stderr
    assert "1 file checked" in plain.stdout
    # Every file memlint says it checked has parsed: a broken one is ML901 (exit 2), torch or not.
    broken = subprocess.run([sys.executable, "-c", script, "broken.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert "broken.py:3:7: ML901" in broken.stdout and "syntax error" in broken.stdout, broken.stdout
    assert broken.stdout.strip().splitlines()[-1] == "exit 2 False"


def test_every_catalogue_entry_has_its_rule_module():
    from memlint.catalogue import CATALOGUE
    from memlint.static.rules import all_rules

    classes = all_rules()
    assert [r.code for r in classes] == [info.code for info in CATALOGUE]
    rule_files = {p.stem for p in (ROOT / "src/memlint/static/rules").glob("ML*.py")}
    assert rule_files == {info.module for info in CATALOGUE}  # no rule module outside the catalogue


# ----- positions per statement equal positions of the whole module -------------------------------
def test_positions_per_statement_match_whole_module():
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from memlint.static.rules import all_rules

    sources = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py"))]
    sources += [example for rule in all_rules() for example in rule.VALID]
    sources += [
        "# header\n\n@dec\n@dec2(1)\ndef f():\n    x = 1  # c\n\n    # trailing\n\n\nclass A:\n    pass\n",
        "if a:\n\tb = 1\nelse:\n\tb = 2\nx = 1; y = 2\n",
        'x = """\nmulti\nline\n"""; y = (1,\n 2)\n',
        "x = 1\r\ny = 2\r\n",
        "x = 1",
    ]
    for source in sources:
        module = cst.parse_module(source)
        full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        lazy = Positions(module, source)
        for node, where in full.items():
            if node is not module:
                assert lazy[node] == where, (source, node)


def test_results_do_not_depend_on_what_the_process_checked_before():
    # A worker checks many files in a row: nothing may leak from one file into the next
    # (a rule keying records by id() of a freed scope once did, so -j2 differed from -j1).
    from memlint.static.rules import all_rules
    from memlint.static.source_check import check_source

    rules = [r for r in all_rules() if not r.code.startswith("ML90")]
    codes = [r.code for r in rules]
    sources = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py"))]
    sources += [i.code for rule in rules for i in rule.INVALID]
    forward = [check_source(s, "x.py", codes) for s in sources]
    backward = [check_source(s, "x.py", codes) for s in reversed(sources)][::-1]
    assert forward == backward
