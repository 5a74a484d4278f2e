"""Long fuzzing runs of the static engine: hypothesmith generates programs (from Python's
grammar, and from libcst's node types), every rule runs on each (triggers and the torch-import
test bypassed), and any exception that escapes ``check_module`` or any ML902 (a rule that
crashed) is a failure, printed with the program that caused it.

    python3 benchmarks/fuzz.py [--examples 10000] [--seed 0]

The test suite runs a bounded version of this (tests/test_robustness.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter


def fuzz_rules() -> list[str]:
    """Every detector rule's code."""
    from memlint.catalogue import RUNNER_CODES, all_codes

    return [code for code in all_codes() if code not in RUNNER_CODES]


def check(source: str, codes: list[str]) -> list:
    """Findings of every rule in ``codes`` on ``source`` with the torch import it needs, whatever
    the rules' triggers; raises what checking raises except UncheckableFile (ML901: an expected
    outcome for generated code)."""
    from memlint.static.module_check import check_module
    from memlint.static.source import UncheckableFile

    try:
        return check_module("import torch\n" + source, "fuzz.py", codes, codes)
    except UncheckableFile:
        return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strategy", choices=["grammar", "node", "both"], default="both",
                        help="hypothesmith.from_grammar() (fast), from_node() (slow, varied), or both")
    options = parser.parse_args()
    import warnings

    warnings.simplefilter("ignore", SyntaxWarning)  # hypothesmith compiles odd programs

    import hypothesmith
    from hypothesis import HealthCheck, given, seed, settings, strategies as st

    rules = fuzz_rules()
    counts: Counter[str] = Counter()
    failures: list[tuple[str, str]] = []
    start = time.perf_counter()

    @seed(options.seed)
    @settings(max_examples=options.examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given({"grammar": hypothesmith.from_grammar(), "node": hypothesmith.from_node(),
            "both": st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node())}[options.strategy])
    def run(source: str) -> None:
        counts["programs"] += 1
        try:
            findings = check(source, rules)
        except Exception as exc:  # noqa: BLE001 - what we are looking for
            counts["exceptions"] += 1
            failures.append((f"{type(exc).__name__}: {exc}", source))
            return
        for finding in findings:
            counts[finding.code] += 1
            if finding.code == "ML902":
                failures.append((finding.message, source))
        if counts["programs"] % 1000 == 0:
            print(f"  {counts['programs']} programs, {len(failures)} failures, "
                  f"{time.perf_counter() - start:.0f} s", flush=True)

    run()
    print(f"{counts['programs']} programs in {time.perf_counter() - start:.0f} s; "
          f"exceptions: {counts['exceptions']}, ML902: {counts['ML902']}; "
          f"findings by code: {dict(sorted((k, v) for k, v in counts.items() if k.startswith('ML')))}")
    seen = set()
    for message, source in failures:
        key = message.split(":")[0:2].__repr__()
        if key in seen:
            continue
        seen.add(key)
        print(f"\n--- {message}\n{source}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
