"""pytest plugin (entry point ``memlint``): the ``memlint_no_growth`` fixture.

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
the test's objects); on growth the test fails with the verify report. Loading the
plugin never imports torch.
"""

from __future__ import annotations

import pytest

from memlint.dynamic.render import render_text


@pytest.fixture
def memlint_no_growth():
    """Return ``check(fn, steps=20, warmup=3, **thresholds)``: fail the test if memory grows."""

    def check(fn, *, steps: int = 20, warmup: int = 3, **options):
        # torch: only for a test that uses the fixture, never at pytest's start-up
        from memlint.dynamic.inprocess import verify_function

        report = verify_function(fn, steps=steps, warmup=warmup, **options)
        if report.verdict == "growth":
            pytest.fail("memory grows:\n" + render_text(report), pytrace=False)
        return report

    return check
