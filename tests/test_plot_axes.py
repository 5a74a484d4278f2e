"""verify's charts: tick choice (memlint.dynamic.axes) on flat, rising and noisy series, and
the chart around it (titles with the verdict's reading, warmup, an HTML page that needs no
network). Pure functions: no torch, no script runs."""

from __future__ import annotations

import random
import re

import pytest

from memlint.dynamic.axes import byte_axis, count_axis, decimals, nice_step, step_ticks
from memlint.dynamic.plot import render_html, render_svg
from memlint.dynamic.report import Sample, VerifyReport

KiB, MiB, GiB = 1024, 1024 ** 2, 1024 ** 3
GROWTH_SPAN = 20 * KiB  # the default threshold (1 KiB/step) over 20 measured steps


@pytest.mark.parametrize("raw, step", [(0.3, 0.5), (1, 1), (1.01, 2), (3, 5), (7, 10), (40, 50), (0.0021, 0.005)])
def test_nice_steps_are_1_2_5_times_a_power_of_ten(raw, step):
    assert nice_step(raw) == pytest.approx(step)
    assert decimals(step) == max(0, -int(f"{step:e}".split("e")[1]))


def test_flat_series_plots_flat_with_distinct_labels():
    """The chart of issue 17: a flat 158.3 KiB labelled "158.3 KiB" three times."""
    axis = byte_axis([158.3 * KiB] * 23, GROWTH_SPAN)
    assert axis.labels == ("145 KiB", "150 KiB", "155 KiB", "160 KiB", "165 KiB", "170 KiB")
    assert 0.4 < axis.fraction(158.3 * KiB) < 0.6  # in the middle, not stretched


def test_flat_large_series_moves_to_a_unit_with_whole_numbers():
    axis = byte_axis([1.2 * GiB] * 10, GROWTH_SPAN)
    assert axis.labels == ("1,258,280 KiB", "1,258,285 KiB", "1,258,290 KiB", "1,258,295 KiB", "1,258,300 KiB",
                           "1,258,305 KiB")


def test_flat_zero_never_goes_below_zero():
    assert byte_axis([0] * 5, GROWTH_SPAN).labels == ("0 KiB", "5 KiB", "10 KiB", "15 KiB", "20 KiB")
    assert count_axis([0] * 5, 20).labels == ("0", "5", "10", "15", "20")


def test_rising_series_fits_the_data_in_round_steps():
    axis = byte_axis([1000 + 10 * KiB * i for i in range(1, 24)], GROWTH_SPAN)
    assert axis.labels == ("0 KiB", "50 KiB", "100 KiB", "150 KiB", "200 KiB", "250 KiB")
    axis = byte_axis([3 * GiB + 64 * MiB * i for i in range(20)], GROWTH_SPAN)
    assert axis.labels == ("3.0 GiB", "3.5 GiB", "4.0 GiB", "4.5 GiB")
    assert count_axis([10 + 12 * i for i in range(1, 24)], 20).labels == ("0", "100", "200", "300")


def test_noisy_series_shows_its_noise_on_round_ticks():
    rng = random.Random(1)
    values = [40 * MiB + rng.randint(-60, 60) * KiB for _ in range(23)]
    axis = byte_axis(values, GROWTH_SPAN)
    assert axis.labels == ("39.90 MiB", "39.95 MiB", "40.00 MiB", "40.05 MiB", "40.10 MiB")
    assert axis.lo <= min(values) and axis.hi >= max(values)
    assert count_axis([500 + rng.randint(0, 3) for _ in range(23)], 20).labels == \
        ("490", "495", "500", "505", "510", "515")


@pytest.mark.parametrize("values", [
    [158.3 * KiB] * 5, [0.0] * 3, [1.0, 2.0], [5 * GiB, 5 * GiB + 1], [7.0] * 4, [123456789.0, 987654321.0], [],
])
def test_every_axis_covers_its_data_with_distinct_round_labels(values):
    for axis in (byte_axis(values, GROWTH_SPAN), count_axis(values, 20)):
        assert len(set(axis.labels)) == len(axis.labels) >= 2
        assert axis.ticks[0] == axis.lo <= min(values, default=0) and axis.ticks[-1] == axis.hi >= max(values, default=0)
        assert 2 <= len(axis.ticks) <= 8


def test_step_ticks_start_at_the_first_step_on_round_numbers():
    assert step_ticks(1, 23) == (1, 5, 10, 15, 20)
    assert step_ticks(1, 8) == (1, 2, 4, 6, 8)
    assert step_ticks(1, 1) == (1,)
    assert step_ticks(4, 200) == (4, 50, 100, 150, 200)


# ----- the chart ------------------------------------------------------------------------------
def report(tensor, nodes, warmup=3, verdict="stable", reason="no signal grows over 20 steps"):
    samples = [Sample(i + 1, int(t), int(n), 10 ** 8) for i, (t, n) in enumerate(zip(tensor, nodes))]
    return VerifyReport("train.py", "cpu", len(samples) - warmup, warmup, verdict, reason, 0.0, 0.0, 0.0, samples)


def titles(svg: str) -> list[str]:
    return re.findall(r'font-weight="bold">([^<]*)</text>', svg)


def y_labels(svg: str) -> list[str]:
    return re.findall(r'text-anchor="end">([^<]*)</text>', svg)


def test_titles_say_what_the_verdict_reads_in_each_signal():
    flat = render_svg(report([158.3 * KiB + (i % 2) * 16 for i in range(23)], [0] * 23))
    assert titles(flat) == ["live tensor bytes — flat", "autograd graph nodes — flat"]
    assert y_labels(flat).count("158.3 KiB") == 0 and len(set(y_labels(flat))) == len(y_labels(flat))
    growing = render_svg(report([1000 + 10 * KiB * i for i in range(23)], [10 + 12 * i for i in range(23)],
                                verdict="growth"))
    assert titles(growing) == ["live tensor bytes — growing 10.0 KiB/step",
                               "autograd graph nodes — growing 12 nodes/step"]
    sawtooth = [40 * MiB + 2 * KiB * i + (30 * KiB if i % 2 else -30 * KiB) for i in range(23)]
    noisy = render_svg(report(sawtooth, [500] * 23))
    assert titles(noisy)[0] == "live tensor bytes — 2.0 KiB/step but not rising steadily"
    falling = render_svg(report([400 * KiB - 5 * KiB * i for i in range(23)], [0] * 23))
    assert titles(falling)[0] == "live tensor bytes — falling 5.0 KiB/step"


def test_large_rates_read_in_plain_numbers():
    svg = render_svg(report([0] * 23, [1500 * i for i in range(23)], verdict="growth"))
    assert titles(svg)[1] == "autograd graph nodes — growing 1,500 nodes/step"
    assert "<title>fit: 1,500 nodes/step</title>" in svg


def test_a_threshold_from_the_configuration_sets_the_reading():
    rising = report([100 * KiB + 2 * KiB * i for i in range(23)], [0] * 23)
    assert titles(render_svg(rising))[0] == "live tensor bytes — growing 2.0 KiB/step"
    assert titles(render_svg(rising, tensor_threshold=4 * KiB))[0] == "live tensor bytes — flat"


def test_warmup_is_shaded_labelled_and_not_fitted():
    svg = render_svg(report([1000 + 300 * i for i in range(10)], [0] * 10, warmup=3))
    assert svg.count(">warmup</text>") == 2 and svg.count("warmup: steps 1–3, not judged") == 2
    assert "step 2 (warmup)" in svg and "step 5 (warmup)" not in svg
    no_warmup = render_svg(report([1000] * 10, [0] * 10, warmup=0))
    assert "warmup" not in no_warmup


def test_html_is_one_page_that_needs_no_network():
    page = render_html(report([1000 + 300 * i for i in range(10)], [0] * 10, verdict="growth",
                              reason="live tensor memory grows <300 B>/step"))
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "&lt;300 B&gt;" in page
    assert "<script" not in page and "<link" not in page and "src=" not in page and "@import" not in page
    assert "url(" not in page
    assert re.findall(r"https?://[^\"' ]+", page) == ["http://www.w3.org/2000/svg"]  # a namespace, never fetched
    assert "<td>2 (warmup)</td>" in page
