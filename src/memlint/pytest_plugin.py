"""pytest plugin (entry point ``memlint``): the ``memlint_no_growth`` and ``memlint_peak_below`` fixtures.

Assert in your own test suite that a training step does not grow memory::

    def test_train_step_does_not_leak(memlint_no_growth):
        model = make_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def train_step():
            loss = model(torch.randn(8, 4)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        memlint_no_growth(train_step, steps=20, warmup=3)

The function runs in the test's own process (no child process: fast, and it sees
the test's objects); on growth the test fails with the verify report.

Assert that a training step stays under a memory budget::

    def test_train_step_fits(memlint_peak_below):
        with memlint_peak_below("2GiB"):
            for _ in range(2):
                train_step()

Loading the plugin never imports torch (pytest loads it in every session).
"""

from __future__ import annotations

import contextlib

import pytest


@pytest.fixture
def memlint_no_growth():
    """Return ``check(fn, steps=20, warmup=3, **thresholds)``: fail the test if memory grows."""

    def check(fn, *, steps: int = 20, warmup: int = 3, **options):
        # torch: only for a test that uses the fixture, never at pytest's start-up
        from memlint.dynamic.inprocess import verify_function

        report = verify_function(fn, steps=steps, warmup=warmup, **options)
        if report.verdict == "growth":
            # the report's drawing: only for a failing test, never at pytest's start-up
            from memlint.report.verify_text import render_text

            pytest.fail("memory grows:\n" + render_text(report), pytrace=False)
        return report

    return check


@pytest.fixture
def memlint_peak_below():
    """Return ``budget(limit, device="auto")``: a context manager that fails the test when the
    peak of live tensor bytes inside the block is above ``limit`` (``"2GiB"``, ``"500MB"``, bytes).

    The peak is measured as ``memlint verify`` measures it, without the allowance of a GPU fit
    (CUDA context, allocator); the context manager yields a measurement whose ``memory``
    (the report's memory section, with the composition at the peak) is set when the block ends.
    """
    @contextlib.contextmanager
    def budget(limit, *, device: str = "auto"):
        # torch and the accounting: only for a test that uses the fixture, never at pytest's start-up
        from memlint.dynamic.assess import human_bytes
        from memlint.dynamic.cards import parse_size
        from memlint.dynamic.measure import measure_peak
        from memlint.report.verify_text import memory_lines

        limit_bytes = parse_size(limit, what="memlint_peak_below")
        with measure_peak(device=device) as measured:
            yield measured
        memory = measured.memory
        if memory is not None and memory.peak_bytes > limit_bytes:
            pytest.fail(f"the peak of live tensor memory, {human_bytes(memory.peak_bytes)}, is above the budget "
                        f"of {human_bytes(limit_bytes)}:\n" + "\n".join(memory_lines(memory)), pytrace=False)

    return budget
