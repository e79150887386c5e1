"""Reachability stated, not hidden: an adaptive run's coverage table, HTML page and summary note
say which Δv bins a corruption cannot reach at this size; other runs' tables are unchanged."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.core.tables import csv_text
from vcrbench.curves.reachability import reachable_bins
from vcrbench.figures.tables import coverage_html
from vcrbench.vcr.coverage import SCHEMA, coverage_markdown, coverage_table
from vcrbench.vcr.summary import ORDER, build_summary

BINS, L = 10, 5


def _summary(corruptions):
    rows = []
    for c in corruptions:
        row = dict.fromkeys(ORDER)
        row.update(model="m", corruption=c, metric="consistency", classes=1000, R=0.5,
                   coverage=0.5, n_samples=100)
        rows.append(row)
    return pa.Table.from_pylist(rows)


def _dv():
    rng = np.random.default_rng(0)
    # median_blur: clean images and Δv from 0.6 up; gaussian_noise: everywhere, bin 9 starved
    return {"median_blur": np.concatenate([np.zeros(20), rng.uniform(0.6, 1.0, 80)]),
            "gaussian_noise": np.concatenate([rng.uniform(0, 0.9, 97), [0.95] * 3])}


def test_reachability_columns_separate_unreachable_from_starved_bins():
    dv = _dv()
    pilots = {"median_blur": np.array([0.0, 0.0, 0.61, 0.7, 0.8, 0.9, 0.99]),
              # a hole in the pilot (0.3 to 0.5) that the run's samples fill: reachable
              "gaussian_noise": np.concatenate([np.linspace(0.0, 0.3, 15),
                                                np.linspace(0.5, 0.97, 20)])}
    reach = {c: reachable_bins(v, BINS) for c, v in pilots.items()}
    assert not reach["gaussian_noise"][4]
    table = coverage_table(_summary(dv), ["median_blur", "gaussian_noise"], uniform_dv=dv,
                           bins=BINS, min_count=L, reachable=reach)
    rows = {r["corruption"]: r for r in table.to_pylist()}
    assert rows["median_blur"]["unreachable"] == "0.100–0.600"
    assert rows["median_blur"]["reachable_bins"] == 5
    counts = np.bincount(np.minimum((dv["median_blur"] * BINS).astype(int), BINS - 1),
                         minlength=BINS)
    assert rows["median_blur"]["reachable_coverage"] == pytest.approx(
        np.mean(counts[[0, 6, 7, 8, 9]] >= L))
    # starved, not unreachable: the pilot reached bin 9, the run holds 3 < L samples there
    assert rows["gaussian_noise"]["unreachable"] is None
    assert rows["gaussian_noise"]["reachable_bins"] == BINS
    assert rows["gaussian_noise"]["reachable_coverage"] == pytest.approx(0.9)
    markdown = coverage_markdown(table, bins=BINS, min_count=L)
    assert "| 0.100–0.600 |" in markdown and "Unreachable Δv: bins that no parameter" in markdown
    assert "| none |" in markdown
    page = coverage_html(table, bins=BINS, min_count=L)
    assert "0.100–0.600" in page and "unreachable Δv" in page


def test_tables_without_a_pilot_are_unchanged():
    dv = _dv()
    table = coverage_table(_summary(dv), ["median_blur", "gaussian_noise"], uniform_dv=dv,
                           bins=BINS, min_count=L)
    assert table.schema == SCHEMA
    assert csv_text(table).splitlines()[0] == ("corruption,n_samples,coverage,imagenet_c_n,"
                                               "imagenet_c_coverage,coverage_at_imagenet_c_n")
    assert "nreachable" not in coverage_markdown(table, bins=BINS, min_count=L)
    assert "nreachable" not in coverage_html(table, bins=BINS, min_count=L)


def test_summary_note_names_the_unreachable_range_of_its_corruption_only():
    metrics = _summary(["median_blur", "gaussian_noise"]).select(
        [c for c in ORDER if c not in ("HMRI", "HMRI_lo", "HMRI_hi", "MRSI", "MRSI_lo",
                                       "MRSI_hi", "human_dv_min", "human_dv_max",
                                       "human_source", "imagenet_c_mean",
                                       "imagenet_c_mean_lo", "imagenet_c_mean_hi",
                                       "imagenet_c_coverage")])
    plain = build_summary(metrics)
    assert plain.column("note").to_pylist() == [None, None]
    notes = build_summary(metrics, unreachable={"median_blur": "0.025–0.600",
                                                "gaussian_noise": ""})
    by = dict(zip(notes.column("corruption").to_pylist(), notes.column("note").to_pylist(),
                  strict=True))
    assert by["gaussian_noise"] is None
    assert by["median_blur"].startswith("Δv 0.025–0.600 unreachable")
