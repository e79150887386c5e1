"""Visually similar corruptions: simultaneous comparison of human curves, classes of similar
corruptions and the similarity tables."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from vcrbench.curves.areas import GRID
from vcrbench.errors import VcrbenchError
from vcrbench.human.curves import human_curves
from vcrbench.human.similarity import (
    COMPARISON_SCHEMA,
    GROUPS_SCHEMA,
    HumanCurve,
    compare_curves,
    groups_table,
    pairs_marked_similar,
    similarity_groups,
)
from vcrbench.human.trials import TRIALS_SCHEMA


def curve(v: np.ndarray) -> np.ndarray:
    return 0.9 / (1.0 + np.exp((v - 0.5) * 10.0))


def fake(shift: float = 0.0, seed: int = 0, dv_min: float = 0.0, dv_max: float = 1.0,
         note: str | None = None, se: float = 0.02) -> HumanCurve:
    """A human curve with bootstrap replicates: smooth random perturbations of SD ``se``."""
    rng = np.random.default_rng(seed)
    base = curve(GRID) + shift
    phases = rng.uniform(0, 2 * np.pi, (200, 3))
    amps = rng.normal(0, se, (200, 3))
    wiggles = sum(amps[:, k, None] * np.cos((k + 1) * np.pi * GRID[None, :] + phases[:, k, None])
                  for k in range(3)) / np.sqrt(1.5)
    return HumanCurve(GRID, base, base[None, :] + wiggles, dv_min, dv_max, note)


def test_same_curves_are_similar_and_shifted_ones_are_not() -> None:
    table = compare_curves({"a": fake(0.0, 1), "b": fake(0.0, 2), "c": fake(0.15, 3)})
    rows = {(r["corruption_a"], r["corruption_b"]): r for r in table.to_pylist()}
    assert rows[("a", "b")]["similar"] is True and rows[("a", "b")]["different"] is False
    assert rows[("a", "c")]["similar"] is False
    assert rows[("a", "c")]["p_value"] <= 0.05 and rows[("a", "c")]["first_separation"] == 0.0
    assert rows[("a", "b")]["n_replicates"] == 200 and table.schema == COMPARISON_SCHEMA


def test_the_common_supported_range_is_compared() -> None:
    late = fake(0.0, 4)
    late_curve = late.curve.copy()
    late_curve[GRID < 0.3] += 0.3  # differs only where the other data set has no data
    shifted = HumanCurve(GRID, late_curve, late.replicates + (late_curve - late.curve), 0.0, 1.0)
    other = fake(0.0, 5, dv_min=0.35)
    row = compare_curves({"a": shifted, "b": other}).to_pylist()[0]
    assert (row["v_min"], row["v_max"]) == (0.35, 1.0)
    assert row["similar"] is True
    whole = compare_curves({"a": shifted, "b": fake(0.0, 5)}).to_pylist()[0]
    assert whole["similar"] is False


def test_unsupported_or_disjoint_curves_are_not_tested() -> None:
    rows = compare_curves({
        "a": fake(0.0, 1, dv_max=0.3),
        "b": fake(0.0, 2, dv_min=0.5),
        "c": fake(0.0, 3, note="R not reported: 3 of 40 Δv bins"),
    }).to_pylist()
    assert all(r["similar"] is None for r in rows)
    assert "share no Δv range" in rows[0]["note"]
    assert "c: R not reported" in rows[1]["note"]
    assert pairs_marked_similar(pa.Table.from_pylist(rows, schema=COMPARISON_SCHEMA)) == []


def test_human_curve_from_the_pipeline_tables() -> None:
    rng = np.random.default_rng(6)
    n = 3000
    dv = np.where(rng.uniform(size=n) < 0.1, 0.0, rng.uniform(0, 1, n))
    labels = np.array(["dog", "cat", "car", "boat"])[rng.integers(0, 4, n)]
    right = rng.uniform(size=n) < curve(dv)
    trials = pa.Table.from_pylist([
        {"subject": f"s{i % 12}", "image_id": f"im{i}", "condition": None, "dv": float(dv[i]),
         "response": str(labels[i]) if right[i] else "knife", "label": str(labels[i]),
         "clean_response": None, "order": i} for i in range(n)], schema=TRIALS_SCHEMA)
    _, curves, replicates, metrics = human_curves(
        trials, corruption="x", source="sim", bins=20, min_count=20, n_boot=50, seed=0)
    human = HumanCurve.from_tables("x", curves, replicates, metrics)
    assert human.replicates.shape == (50, GRID.size) and human.dv_min == 0.0
    assert human.note is None
    with pytest.raises(VcrbenchError, match="no 16-class accuracy"):
        HumanCurve.from_tables("x", curves.slice(0, 0), replicates, metrics)


# --- classes of similar corruptions and tables ---------------------------------------------


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
    curves = {
        "gaussian_noise": fake(0.0, 1),
        "shot_noise": fake(0.0, 2),
        "impulse_noise": fake(0.0, 3),
        "frost": fake(0.4, 4),
    }
    table = compare_curves(curves)
    assert table.num_rows == 6
    pairs = list(zip(table.column("corruption_a").to_pylist(),
                     table.column("corruption_b").to_pylist(), strict=True))
    assert pairs[0] == ("gaussian_noise", "shot_noise") and pairs[-1] == ("impulse_noise", "frost")
    assert table.column("similar").to_pylist() == [True, True, False, True, False, False]
    groups = groups_table(list(curves), pairs_marked_similar(table))
    assert groups.schema == GROUPS_SCHEMA
    assert groups.column("group").to_pylist() == [0, 0, 0, 1]
    pq.write_table(table, tmp_path / "pairs.parquet")
    assert pq.read_table(tmp_path / "pairs.parquet").equals(table)
    assert compare_curves({"only": fake()}).num_rows == 0
