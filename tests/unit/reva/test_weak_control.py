"""``vcrbench control weak`` (:mod:`vcrbench.reva.control`), its fourth reading: the weak set of
one run against the random baseline of another (``--baseline``), with the overlay merged as
Snakemake merges two ``--configfile``s, the same-model check, and weak − baseline recomputed by
hand."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from snakemake.utils import update_config

from vcrbench.config import merge_configs
from vcrbench.core.tables import write_table
from vcrbench.curves.areas import GRID
from vcrbench.errors import VcrbenchError
from vcrbench.reva.control import baseline_lines


def _unused_fit(*args, **kwargs):
    raise AssertionError("every set here is clean-correct: nothing is fitted again")


def test_the_overlay_merges_nested_keys_and_replaces_the_rest():
    base = {"run": "a", "reva": {"weak": {"size": 10, "group_by": "class"}, "models": ["m"]},
            "corruptions": ["fog", "snow"]}
    overlay = {"run": "b", "reva": {"weak": {"draw": "random-unselected"}},
               "corruptions": ["fog"]}
    assert merge_configs(base, overlay) == {
        "run": "b", "corruptions": ["fog"],
        "reva": {"weak": {"size": 10, "group_by": "class", "draw": "random-unselected"},
                 "models": ["m"]}}
    assert base["reva"]["weak"] == {"size": 10, "group_by": "class"}  # not changed
    # Snakemake's own merge of two --configfiles, the reference
    for a, b in ((base, overlay), (overlay, base), ({"x": 1}, {"x": {"y": 2}}),
                 ({"x": {"y": 2}}, {"x": 1})):
        expected = copy.deepcopy(a)
        update_config(expected, b)
        assert merge_configs(a, b) == expected


def _set(folder: Path, ids: list[str], levels: dict[str, np.ndarray]) -> None:
    """One run's folder: the pool's ranking, the set's index, its outcomes (all clean-correct, so
    the run's curves are read as they are) and one corruption's (fog) metrics and replicate
    curves, s_b(v) = level_b · (1 − v / 2), whose area is 0.75 · level_b."""
    write_table(pa.table({"image_id": ids}), folder / "reva" / "weak" / "index.parquet")
    write_table(pa.table({"image_id": ["w1", "b1"], "rank": [1, 2],
                          "selected": [folder.name == "a", folder.name == "b"]}),
                folder / "reva" / "ranking.parquet")
    write_table(pa.table({"image_id": ids, "clean_correct": [True] * len(ids)}),
                folder / "reva" / "weak" / "outcomes" / "m" / "fog.parquet")
    metrics, replicates = [], []
    for metric, values in levels.items():
        metrics.append({"metric": metric, "classes": 10, "R": 0.75 * float(values.mean()),
                        "R_lo": 0.1, "R_hi": 0.9, "note": None, "resampled": "images (3)"})
        replicates += [{"metric": metric, "classes": 10, "replicate": b,
                        "values": (level * (1 - GRID / 2)).tolist()}
                       for b, level in enumerate(values)]
    weak = folder / "reva" / "weak"
    write_table(pa.Table.from_pylist(metrics), weak / "metrics" / "m" / "fog.parquet")
    write_table(pa.Table.from_pylist(replicates, schema=pa.schema([
        ("metric", pa.string()), ("classes", pa.int16()), ("replicate", pa.int32()),
        ("values", pa.list_(pa.float64()))])), weak / "curves" / "m" / "fog-replicates.parquet")
    write_table(pa.table({"x": [1]}), folder / "reva" / "r-weak-vs-all.parquet")


def test_weak_against_the_baseline_by_hand(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the baseline's folder is results/<run> of the working one
    rng = np.random.default_rng(0)
    weak = {"accuracy": rng.uniform(0.4, 0.6, 40), "consistency": rng.uniform(0.4, 0.6, 40)}
    base = {"accuracy": rng.uniform(0.7, 0.9, 40), "consistency": rng.uniform(0.45, 0.55, 40)}
    run, other = Path("results/a"), Path("results/b")
    _set(run, ["w1", "w2", "w3"], weak)
    _set(other, ["b1", "b2", "b3"], base)
    for folder in (run, other):
        (folder / "models" / "fastnet").mkdir(parents=True)
        (folder / "models" / "fastnet" / "model.pt").write_bytes(b"weights")
    config = {"run": "b", "reva": {"weak": {"draw": "random-unselected"}}, "seed": 0,
              "binning": {}, "bootstrap": {}}
    lines = baseline_lines(run, config, "m", "m", 10, ["fog"], ["fog"], _unused_fit)
    text = "\n".join(lines)
    assert "independent draws of the two disjoint sets" in text
    assert "the same model (fastnet: identical files) and ranking" in text
    difference = 0.75 * (weak["accuracy"] - base["accuracy"])
    lo, hi = np.percentile(difference, [2.5, 97.5])
    assert hi < 0  # the weak set's R_a is lower in every replicate here
    row = next(line for line in lines if line.startswith("| fog |"))
    assert row.startswith(f"| fog | yes | {difference.mean():+.3f} [{lo:+.3f}, {hi:+.3f}] "
                          "**lower** |")
    assert "R_a for 1 of the 1 corruptions with an interval" in text
    assert "- R_a: 1 (fog)" in text

    # a baseline that shares images with the weak set, or ranked the pool otherwise: refused
    write_table(pa.table({"image_id": ["w1", "b2", "b3"]}),
                other / "reva" / "weak" / "index.parquet")
    with pytest.raises(VcrbenchError, match="shares images with the weak set"):
        baseline_lines(run, config, "m", "m", 10, ["fog"], ["fog"], _unused_fit)
    write_table(pa.table({"image_id": ["w1", "b1"], "rank": [2, 1], "selected": [False, True]}),
                other / "reva" / "ranking.parquet")
    with pytest.raises(VcrbenchError, match="ranked the pool differently"):
        baseline_lines(run, config, "m", "m", 10, ["fog"], ["fog"], _unused_fit)
    # another model's weights in the baseline run, or a weakest-first "baseline": refused
    (other / "models" / "fastnet" / "model.pt").write_bytes(b"other weights")
    with pytest.raises(VcrbenchError, match="trained different models"):
        baseline_lines(run, config, "m", "m", 10, ["fog"], ["fog"], _unused_fit)
    with pytest.raises(VcrbenchError, match="random-unselected"):
        baseline_lines(run, {"run": "b", "reva": {"weak": {"draw": "weakest"}}}, "m", "m", 10,
                       ["fog"], ["fog"], _unused_fit)
