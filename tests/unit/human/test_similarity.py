"""Visually similar corruptions: band overlap, classes of similar corruptions and the
similarity tables."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from vcrbench.curves.areas import GRID
from vcrbench.curves.bootstrap import estimate_curve
from vcrbench.errors import VcrbenchError
from vcrbench.human.similarity import (
    COMPARISON_SCHEMA,
    GROUPS_SCHEMA,
    band_comparison,
    bands_overlap,
    compare_curves,
    groups_table,
    pairs_marked_similar,
    similarity_groups,
)

# --- 83 % bands -------------------------------------------------------------------------------


def curve(v: np.ndarray) -> np.ndarray:
    return 0.9 / (1.0 + np.exp((v - 0.5) * 10.0))


W = 0.05  # half-width of the hand-made bands


def band(shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    c = curve(GRID) + shift
    return c - W, c + W


def test_identical_and_shifted_bands() -> None:
    a = band()
    same = band_comparison(*a, *band())
    assert same.overlap and same.separated_fraction == 0.0 and same.first_separation is None
    apart = band_comparison(*a, *band(2 * W + 0.01), v=GRID)  # shifted by more than the width
    assert not apart.overlap
    assert apart.separated_fraction == 1.0 and apart.first_separation == 0.0
    assert not bands_overlap(*a, *band(-(2 * W + 0.01)))
    assert bands_overlap(*a, *band(2 * W - 0.01))  # shifted by less than the width


def test_touching_bands_overlap_and_one_point_apart_does_not() -> None:
    lo_a, hi_a = band()
    lo_b, hi_b = hi_a.copy(), hi_a + 2 * W  # b sits on top of a, sharing the edge everywhere
    assert bands_overlap(lo_a, hi_a, lo_b, hi_b)
    assert bands_overlap(lo_b, hi_b, lo_a, hi_a)
    lo_b[437] += 1e-9
    cmp = band_comparison(lo_a, hi_a, lo_b, hi_b)
    assert not cmp.overlap
    assert cmp.separated_fraction == 1 / GRID.size
    assert cmp.first_separation == pytest.approx(0.437, abs=1e-12)


def test_separation_outside_v_range_is_ignored() -> None:
    lo_a, hi_a = band()
    lo_b, hi_b = band()
    late = GRID > 0.7 + 1e-12
    lo_b[late] += 0.2
    hi_b[late] += 0.2
    whole = band_comparison(lo_a, hi_a, lo_b, hi_b, v=GRID)
    assert not whole.overlap
    assert whole.separated_fraction == 300 / 1001
    assert whole.first_separation == pytest.approx(0.701)
    assert bands_overlap(lo_a, hi_a, lo_b, hi_b, v_range=(0.0, 0.7))
    assert band_comparison(lo_a, hi_a, lo_b, hi_b, v_range=(0.2, 0.7)).separated_fraction == 0
    tail = band_comparison(lo_a, hi_a, lo_b, hi_b, v_range=(0.5, 1.0))
    assert not tail.overlap and tail.separated_fraction == 300 / 501
    assert not bands_overlap(lo_a, hi_a, lo_b, hi_b, v_range=(0.0, 0.701))


def test_band_validation_messages() -> None:
    lo, hi = band()
    with pytest.raises(VcrbenchError, match="share one grid"):
        band_comparison(lo, hi, lo[:-1], hi[:-1])
    bad = lo.copy()
    bad[12] = np.nan
    with pytest.raises(VcrbenchError, match="lo_b has a non-finite value at grid index 12"):
        band_comparison(lo, hi, bad, hi)
    with pytest.raises(VcrbenchError, match="band a: lo > hi at grid index 0"):
        band_comparison(hi, lo, lo, hi)
    with pytest.raises(VcrbenchError, match="strictly increasing"):
        band_comparison(lo, hi, lo, hi, v=GRID[::-1])
    with pytest.raises(VcrbenchError, match="v has shape"):
        band_comparison(lo, hi, lo, hi, v=GRID[:-1])
    with pytest.raises(VcrbenchError, match="holds no grid point"):
        band_comparison(lo, hi, lo, hi, v_range=(1.5, 2.0))
    with pytest.raises(VcrbenchError, match="v_min <= v_max"):
        band_comparison(lo, hi, lo, hi, v_range=(0.8, 0.2))
    with pytest.raises(VcrbenchError, match="1-D"):
        band_comparison(np.zeros((2, 3)), np.ones((2, 3)), lo, hi)


def test_bootstrap_bands_of_estimated_human_curves() -> None:
    """83 % bands from :func:`estimate_curve`: the same data overlap, a shifted curve does not."""
    rng = np.random.default_rng(5)
    dv = rng.uniform(0.0, 1.0, 2000)
    ok = rng.uniform(size=2000) < curve(dv)
    ok_late = rng.uniform(size=2000) < curve(dv - 0.25)
    fit = dict(bins=40, min_count=20, anchor=0.9, n_boot=200)
    base = estimate_curve(dv, ok, seed=1, **fit)
    again = estimate_curve(dv, ok, seed=2, **fit)
    late = estimate_curve(dv, ok_late, seed=3, **fit)
    assert bands_overlap(*base.band83, *again.band83, v=base.grid)
    cmp = band_comparison(*base.band83, *late.band83, v=base.grid)
    assert not cmp.overlap
    assert 0.0 < cmp.first_separation < 0.5 and cmp.separated_fraction > 0.5


# --- comparisons, groups and tables -----------------------------------------------------------


def test_similarity_groups_from_a_hand_made_relation() -> None:
    assert similarity_groups(["a", "b", "c", "d"], [("a", "b"), ("b", "c")]) == [
        ["a", "b", "c"],
        ["d"],
    ]
    assert similarity_groups(["a", "b", "c", "d"], [("c", "d"), ("b", "a"), ("c", "b")]) == [
        ["a", "b", "c", "d"]
    ]
    assert similarity_groups(["d", "c", "b", "a"], [("a", "c"), ("b", "b")]) == [
        ["d"],
        ["c", "a"],
        ["b"],
    ]
    assert similarity_groups(["x", "y"], []) == [["x"], ["y"]]
    with pytest.raises(VcrbenchError, match="'e', which is not in names; known: 'a', 'b'"):
        similarity_groups(["a", "b"], [("a", "e")])
    with pytest.raises(VcrbenchError, match="twice"):
        similarity_groups(["a", "a"], [])


def test_compare_curves_and_groups_tables_write_as_parquet(tmp_path) -> None:
    bands = {
        "gaussian_noise": band(),
        "shot_noise": band(0.03),
        "impulse_noise": band(0.12),  # overlaps shot_noise only: joined through it
        "frost": band(0.5),
    }
    table = compare_curves(bands, GRID)
    assert table.schema == COMPARISON_SCHEMA
    assert table.num_rows == 6
    pairs = list(
        zip(
            table.column("corruption_a").to_pylist(),
            table.column("corruption_b").to_pylist(),
            strict=True,
        )
    )
    assert pairs == [
        ("gaussian_noise", "shot_noise"),
        ("gaussian_noise", "impulse_noise"),
        ("gaussian_noise", "frost"),
        ("shot_noise", "impulse_noise"),
        ("shot_noise", "frost"),
        ("impulse_noise", "frost"),
    ]
    assert table.column("overlap").to_pylist() == [True, False, False, True, False, False]
    assert table.column("first_separation").to_pylist()[0] is None
    assert table.column("first_separation").to_pylist()[1:3] == [0.0, 0.0]
    similar = pairs_marked_similar(table)
    groups = groups_table(list(bands), similar)
    assert groups.schema == GROUPS_SCHEMA
    assert groups.to_pylist() == [
        {"corruption": "gaussian_noise", "group": 0},
        {"corruption": "shot_noise", "group": 0},
        {"corruption": "impulse_noise", "group": 0},
        {"corruption": "frost", "group": 1},
    ]
    pq.write_table(table, tmp_path / "pairs.parquet")
    pq.write_table(groups, tmp_path / "groups.parquet")
    assert pq.read_table(tmp_path / "pairs.parquet").equals(table)
    restricted = compare_curves(bands, GRID, v_range=(0.9, 1.0))
    assert restricted.column("overlap").to_pylist() == table.column("overlap").to_pylist()
    with pytest.raises(VcrbenchError, match="comparing 'gaussian_noise' with 'short'"):
        compare_curves({"gaussian_noise": band(), "short": (GRID[:5], GRID[:5])})
    assert compare_curves({"only": band()}).num_rows == 0
