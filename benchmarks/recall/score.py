"""Recall benchmark: memlint on reconstructions of memory-leak reports from public trackers.

Each ``case_NN_name.py`` here reconstructs the code of one public report (its header gives the
thread, the cause the maintainers or the reporter confirmed, and the class of leak) and marks
the line a user must change with ``# leak: CODES``: ``ANY`` (any memlint finding), or a
comma-separated list of codes or code prefixes (``ML101``, ``ML1``). Several marked lines in
one case are alternatives: naming any of them is enough. A finding names a marked line when
the line is within the finding's span (its first line for a one-line finding). ``case_NN_name_fixed.py``, where the
report shows the fix, is the fixed twin: memlint must say nothing on it.

Per case: **named** (a finding of an accepted code on a marked line), **other code** (a
finding on a marked line, of a code the marker does not accept), **wrong line** (findings,
none on a marked line), **missed** (no finding). Per twin: **quiet** or the false alarms.
A file memlint cannot check (ML901/ML902) is **broken** and counts as not named / not quiet.
Totals: recall = named / cases, false alarms = twins not quiet / twins.

    python3 benchmarks/recall/score.py                 # table and totals
    python3 benchmarks/recall/score.py --verbose       # plus every finding in every file
    python3 benchmarks/recall/score.py --markdown      # the per-case table of README.md
    python3 benchmarks/recall/score.py case_07 case_1  # only cases whose name starts so
    python3 benchmarks/recall/score.py --all-rules     # also rules that are off by default
    python3 benchmarks/recall/score.py --sealed        # the sealed part: once, at the end of a round
    python3 benchmarks/recall/score.py --sealed sealed2   # the second sealed part, likewise
    python3 benchmarks/recall/score.py --sealed sealed3   # the third, likewise
    python3 benchmarks/recall/score.py --sealed sealed4   # the fourth, likewise
    python3 benchmarks/recall/score.py --sealed sealed5   # the fifth, likewise
    python3 benchmarks/recall/score.py --sealed sealed6   # the sixth, likewise
    python3 benchmarks/recall/score.py --sealed sealed7   # the seventh, likewise
    python3 benchmarks/recall/score.py --sealed sealed8   # the eighth, likewise
    python3 benchmarks/recall/score.py --sealed sealed9   # the ninth, likewise

Run from the repository root with ``PYTHONPATH=$PWD/src`` to score the working tree.
Run by hand, not by CI (tests/test_recall_cases.py only checks the cases are well formed).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEAK_MARKER = re.compile(r"#\s*leak:\s*(?P<codes>[A-Za-z0-9_, ]+?)\s*(?:#|$)")
THREAD = re.compile(r"^#\s*Thread:\s*(?P<url>\S+)", re.MULTILINE)
CLASS = re.compile(r"^#\s*Class:\s*(?P<text>.+)$", re.MULTILINE)
CASE_NAME = re.compile(r"^case_(?P<number>\d{2})_(?P<slug>[a-z0-9_]+?)(?P<fixed>_fixed)?\.py$")
OWN_DIAGNOSTICS = ("ML901", "ML902")  # the file could not be checked: the case is broken


@dataclass
class Case:
    """One reconstruction: its file, its marked lines with accepted codes, and its twin."""

    path: Path
    number: str
    slug: str
    thread: str
    leak_class: str
    marks: dict[int, tuple[str, ...]]  # line -> accepted codes/prefixes ("ANY" for any)
    twin: Path | None = None
    result: str = ""
    detail: str = ""
    twin_result: str = ""
    findings: list = field(default_factory=list)
    twin_findings: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.stem


def parse_marks(text: str) -> dict[int, tuple[str, ...]]:
    """``{line: accepted codes}`` for every line carrying a ``# leak:`` marker."""
    marks: dict[int, tuple[str, ...]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = LEAK_MARKER.search(line)
        if match:
            codes = tuple(c.strip().upper() for c in match.group("codes").split(",") if c.strip())
            marks[number] = codes
    return marks


def accepts(codes: tuple[str, ...], code: str) -> bool:
    """Whether a finding of ``code`` satisfies a marker listing ``codes`` (codes or prefixes)."""
    return any(c == "ANY" or code.startswith(c) for c in codes)


def discover(directory: Path = HERE, only: list[str] | None = None) -> list[Case]:
    """Every case in ``directory`` (with its twin, if there is one), sorted by number."""
    cases: dict[str, Case] = {}
    twins: dict[str, Path] = {}
    for path in sorted(directory.glob("case_*.py")):
        match = CASE_NAME.match(path.name)
        if not match:
            raise SystemExit(f"{path.name}: a case is named case_NN_short_name.py (or ..._fixed.py)")
        if match.group("fixed"):
            twins[path.stem[: -len("_fixed")]] = path
            continue
        text = path.read_text(encoding="utf-8")
        thread = THREAD.search(text)
        leak_class = CLASS.search(text)
        cases[path.stem] = Case(
            path=path,
            number=match.group("number"),
            slug=match.group("slug"),
            thread=thread.group("url") if thread else "",
            leak_class=leak_class.group("text").strip() if leak_class else "",
            marks=parse_marks(text),
        )
    for stem, twin in twins.items():
        if stem not in cases:
            raise SystemExit(f"{twin.name}: fixed twin of a case that does not exist ({stem}.py)")
        cases[stem].twin = twin
    selected = [c for c in cases.values() if not only or any(c.name.startswith(p) for p in only)]
    return sorted(selected, key=lambda c: (c.number, c.slug))


def marked_lines(case: Case, finding) -> list[int]:
    """The marked lines a finding covers (its first line, or any line of a multi-line span)."""
    last = max(finding.line, finding.end_line or finding.line)
    return [line for line in case.marks if finding.line <= line <= last]


def classify(case: Case, findings: list) -> tuple[str, str]:
    """(result, detail) of one case from the findings in its file."""
    if any(f.code in OWN_DIAGNOSTICS for f in findings):
        return "broken", "; ".join(f"{f.code} {f.message}" for f in findings if f.code in OWN_DIAGNOSTICS)
    on_marks = [f for f in findings if marked_lines(case, f)]
    named = [f for f in on_marks if any(accepts(case.marks[line], f.code) for line in marked_lines(case, f))]
    if named:
        return "named", ", ".join(sorted({f"{f.code}@{f.line}" for f in named}))
    if on_marks:
        return "other code", ", ".join(sorted({f"{f.code}@{f.line}" for f in on_marks}))
    if findings:
        return "wrong line", ", ".join(sorted({f"{f.code}@{f.line}" for f in findings}))
    return "missed", ""


def classify_twin(findings: list) -> str:
    if any(f.code in OWN_DIAGNOSTICS for f in findings):
        return "broken"
    if findings:
        return "alarm " + ", ".join(sorted({f"{f.code}@{f.line}" for f in findings}))
    return "quiet"


def score(cases: list[Case], all_rules: bool = False, jobs: int = 0, shared_project: bool = False) -> None:
    """Run memlint once over every case and twin, and fill in each case's results.

    Each file is checked as a project of its own (a copy in a folder of its own with a
    ``pyproject.toml``), as the user's script it reconstructs was: in this repository every case
    would see hundreds of other cases (and its own twin) defining and calling functions of the
    same names, and cross-module facts ("no other module calls this function") could never hold.
    ``shared_project``: check them in place, as one project (how rounds before 2026-11-26 scored)."""
    import shutil
    import tempfile

    from memlint import check_paths
    from memlint.config import Config

    config = Config(select=["ML"]) if all_rules else Config()
    originals = [c.path for c in cases] + [c.twin for c in cases if c.twin]
    with tempfile.TemporaryDirectory(prefix="memlint-recall-") as scratch:
        if shared_project:
            checked = {str(path.resolve()): path for path in originals}
        else:
            checked = {}
            for index, path in enumerate(originals):
                folder = Path(scratch) / f"{index:04d}"
                folder.mkdir()
                (folder / "pyproject.toml").write_text("")
                shutil.copyfile(path, folder / path.name)
                checked[str((folder / path.name).resolve())] = path
        result = check_paths(list(checked), config, use_cache=False, jobs=jobs)
    by_path: dict[str, list] = {}
    for f in result.findings:
        original = checked.get(str(Path(f.path).resolve()))
        by_path.setdefault(str(original.resolve()) if original is not None else f.path, []).append(f)
    for case in cases:
        case.findings = sorted(by_path.get(str(case.path.resolve()), []), key=lambda f: (f.line, f.code))
        case.result, case.detail = classify(case, case.findings)
        if case.twin:
            case.twin_findings = sorted(by_path.get(str(case.twin.resolve()), []), key=lambda f: (f.line, f.code))
            case.twin_result = classify_twin(case.twin_findings)


def marker_kind(case: Case) -> str:
    """``any`` when every marked line accepts any code, else ``code``."""
    return "any" if all(codes == ("ANY",) for codes in case.marks.values()) else "code"


def expected_text(case: Case) -> str:
    codes = sorted({c for codes in case.marks.values() for c in codes})
    lines = ",".join(str(n) for n in sorted(case.marks))
    return f"{'/'.join(codes)}@{lines}"


def print_table(cases: list[Case], verbose: bool) -> None:
    width = max(len(c.name) for c in cases) + 2
    print(f"{'case':<{width}}{'expected':<22}{'result':<12}{'detail':<34}twin")
    print("-" * (width + 22 + 12 + 34 + 10))
    for case in cases:
        twin = case.twin_result if case.twin else "-"
        print(f"{case.name:<{width}}{expected_text(case):<22}{case.result:<12}{case.detail:<34}{twin}")
        if verbose:
            for f in case.findings:
                print(f"    {f.line}:{f.column} {f.code} {f.message}")
            for f in case.twin_findings:
                print(f"    twin {f.line}:{f.column} {f.code} {f.message}")


def print_totals(cases: list[Case]) -> None:
    counts = Counter(c.result for c in cases)
    twins = [c for c in cases if c.twin]
    alarms = [c for c in twins if c.twin_result != "quiet"]
    named = counts["named"]
    print()
    print(f"cases: {len(cases)}   named: {named}   other code: {counts['other code']}   "
          f"wrong line: {counts['wrong line']}   missed: {counts['missed']}   broken: {counts['broken']}")
    print(f"recall: {named}/{len(cases)} = {named / max(len(cases), 1):.0%}")
    for kind, label in (("code", "cases marked with existing codes"), ("any", "cases marked ANY (new classes, or no single code fits)")):
        group = [c for c in cases if marker_kind(c) == kind]
        hits = sum(c.result == "named" for c in group)
        print(f"  {label}: {hits}/{len(group)}")
    print(f"fixed twins: {len(twins)}   quiet: {len(twins) - len(alarms)}   "
          f"false alarms: {len(alarms)}/{len(twins)}" + (f" ({', '.join(c.name for c in alarms)})" if alarms else ""))


def print_markdown(cases: list[Case]) -> None:
    print("| case | class | thread | expected | result | fixed twin |")
    print("|---|---|---|---|---|---|")
    for case in cases:
        detail = f" ({case.detail})" if case.detail else ""
        twin = case.twin_result if case.twin else "—"
        print(f"| {case.name} | {case.leak_class} | {case.thread} | {expected_text(case)} | "
              f"{case.result}{detail} | {twin} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", help="only cases whose file name starts with one of these")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every finding")
    parser.add_argument("--markdown", action="store_true", help="print the per-case table as Markdown")
    parser.add_argument("--all-rules", action="store_true", help="enable every rule, also those off by default")
    parser.add_argument("-j", "--jobs", type=int, default=0, help="worker processes (default: all cores)")
    parser.add_argument("--shared-project", action="store_true",
                        help="check the cases in place, as one project (the scoring of rounds before 2026-11-26), "
                             "instead of each file as a project of its own")
    parser.add_argument("--sealed", nargs="?", const="sealed", choices=("sealed", "sealed2", "sealed3", "sealed4", "sealed5", "sealed6", "sealed7", "sealed8", "sealed9", "sealed10", "sealed11", "sealed12", "sealed13", "sealed14", "sealed15", "sealed16", "sealed17", "sealed18", "sealed19", "sealed20", "sealed21", "sealed22", "sealed23", "sealed24", "sealed25", "sealed26", "sealed27", "sealed28", "sealed29", "sealed30", "sealed31"),
                        default=None, help="score a sealed part (sealed/ to sealed22/) instead of the dev part: once, at the end "
                             "of a round")
    args = parser.parse_args(argv)

    cases = discover(HERE / args.sealed if args.sealed else HERE, args.only)
    if not cases:
        print("no cases", file=sys.stderr)
        return 2
    for case in cases:
        if not case.marks:
            raise SystemExit(f"{case.path.name}: no '# leak:' marker")
    score(cases, all_rules=args.all_rules, jobs=args.jobs, shared_project=args.shared_project)
    if args.markdown:
        print_markdown(cases)
    else:
        print_table(cases, args.verbose)
    print_totals(cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
