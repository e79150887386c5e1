"""Δv of the model-vs-human stimulus conditions on real images, and its assignment to trials."""

from __future__ import annotations

import inspect
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
import torch

from vcrbench.data.datasets import build_index, load_images
from vcrbench.errors import VcrbenchError
from vcrbench.human.conditions import assign_dv, condition_summary
from vcrbench.human.stimuli import condition_dv, stimuli_for_run
from vcrbench.human.trials import TRIALS_SCHEMA
from vcrbench.vif import delta_v, vif

N_IMAGES = 2
CROP = 128  # central crops of the prepared 224 px images keep the VIF cheap (min size 72)
PRECISION = "fast"


@pytest.fixture(scope="module")
def images() -> tuple[np.ndarray, list[str]]:
    """Central 128 px crops of two prepared builtin images, (2, 128, 128, 3) uint8, and ids."""
    assert list(inspect.signature(load_images).parameters) == ["paths", "size"]
    index, skipped = build_index("builtin", None)
    assert skipped == 0
    ids = index.column("image_id").to_pylist()[:N_IMAGES]
    pixels = load_images(index.column("path").to_pylist()[:N_IMAGES])
    assert pixels.shape == (N_IMAGES, 224, 224, 3) and pixels.dtype == np.uint8
    start = (224 - CROP) // 2
    return np.ascontiguousarray(pixels[:, start : start + CROP, start : start + CROP]), ids


def _gray(pixels: np.ndarray) -> np.ndarray:
    """OpenCV's integer RGB -> gray rule, (K, H, W) float64 0..255."""
    rgb = pixels.astype(np.int64)
    return ((9798 * rgb[..., 0] + 19235 * rgb[..., 1] + 3735 * rgb[..., 2] + 2**14) >> 15
            ).astype(np.float64)


def _medians(table: pa.Table) -> dict[float, float]:
    rows = table.to_pylist()
    levels = sorted({r["condition"] for r in rows})
    return {c: float(np.median([r["dv"] for r in rows if r["condition"] == c])) for c in levels}


def test_low_pass_is_exactly_clean_at_sigma_0_and_grows_with_sigma(images):
    pixels, ids = images
    table = condition_dv("low-pass", [10, 0, 3, 1, 3.0], pixels, ids, seed=0,
                         vif_precision=PRECISION)
    assert table.column_names == ["condition", "image_id", "dv"]
    assert table.column("condition").to_pylist() == [c for c in (0.0, 1.0, 3.0, 10.0)
                                                      for _ in ids]
    assert table.column("image_id").to_pylist() == ids * 4
    dv = table.column("dv").to_numpy()
    assert np.all((dv >= 0) & (dv <= 1))
    assert np.all(dv[:N_IMAGES] == 0.0)  # σ = 0 is the image itself
    medians = _medians(table)
    assert list(medians) == [0.0, 1.0, 3.0, 10.0]
    assert np.all(np.diff(list(medians.values())) > 0), medians
    assert medians[10.0] > 0.8


def test_uniform_noise_starts_at_30_percent_contrast_and_grows_with_width(images):
    pixels, ids = images
    table = condition_dv("uniform-noise", [0.0, 0.1, 0.6], pixels, ids, seed=0,
                         vif_precision=PRECISION)
    medians = _medians(table)
    assert np.all(np.diff(list(medians.values())) > 0), medians
    zero = table.column("dv").to_numpy()[:N_IMAGES]
    assert np.all(zero > 0.1), zero
    # width 0: only the contrast reduction, 0.35 + 0.3 x, quantised to 8 bits
    gray = _gray(pixels)
    stimulus = np.round((0.35 + 0.3 * gray / 255.0) * 255.0)
    expected = delta_v(vif(torch.from_numpy(gray), torch.from_numpy(stimulus),
                           precision=PRECISION))
    np.testing.assert_allclose(zero, expected, atol=1e-9)


def test_stochastic_stimuli_are_reproducible_per_seed(images):
    pixels, ids = images
    def run(seed: int) -> pa.Table:
        return condition_dv("uniform-noise", [0.35], pixels[:1], ids[:1], seed=seed,
                            vif_precision=PRECISION)

    a, b, c = run(4), run(4), run(5)
    assert a.equals(b)
    assert a.column("dv")[0].as_py() != c.column("dv")[0].as_py()


def test_unknown_experiment_and_bad_images_are_clear_errors(images):
    pixels, ids = images
    with pytest.raises(VcrbenchError, match="'contrast'.*uniform-noise.*trials"):
        condition_dv("contrast", [0.1], pixels, ids, seed=0)
    with pytest.raises(VcrbenchError, match="uint8"):
        condition_dv("low-pass", [1.0], pixels.astype(np.float32), ids, seed=0)


# --- assignment of the distributions to trials -----------------------------------------------


LEVELS = (0.0, 0.05, 0.2)
K = 5  # images per condition
TRIALS_PER_LEVEL = (23, 10, 7)  # not multiples of K


def _stimuli() -> pa.Table:
    """dv = condition + image / 1000: every value says where it came from."""
    rows = [(c, f"im{k}", c + k / 1000) for c in LEVELS for k in range(K)]
    return pa.table({
        "condition": pa.array([r[0] for r in rows], pa.float64()),
        "image_id": [r[1] for r in rows],
        "dv": pa.array([r[2] for r in rows], pa.float64()),
    })


def _trials(shuffle_seed: int = 0) -> pa.Table:
    conditions = [c for c, n in zip(LEVELS, TRIALS_PER_LEVEL, strict=True) for _ in range(n)]
    rng = np.random.default_rng(shuffle_seed)
    conditions = [conditions[i] for i in rng.permutation(len(conditions))]
    return pa.Table.from_pylist(
        [{"subject": "s", "image_id": f"t{i}", "condition": c, "dv": None, "response": "cat",
          "label": "cat", "clean_response": None, "order": i}
         for i, c in enumerate(conditions)],
        schema=TRIALS_SCHEMA,
    )


def _assigned(seed: int = 1, trials: pa.Table | None = None) -> pa.Table:
    return assign_dv(_trials() if trials is None else trials, _stimuli(), seed=seed,
                     experiment="uniform-noise")


def test_every_trial_gets_a_dv_of_its_own_condition():
    out = _assigned()
    assert out.schema == TRIALS_SCHEMA
    for row in out.to_pylist():
        image = round((row["dv"] - row["condition"]) * 1000)
        assert 0 <= image < K
        assert row["dv"] == pytest.approx(row["condition"] + image / 1000, abs=1e-12)


def test_each_image_of_a_condition_is_used_about_equally_often():
    out = _assigned().to_pylist()
    for level, n in zip(LEVELS, TRIALS_PER_LEVEL, strict=True):
        uses = Counter(round((r["dv"] - level) * 1000) for r in out if r["condition"] == level)
        counts = [uses.get(k, 0) for k in range(K)]
        assert sum(counts) == n
        assert max(counts) - min(counts) <= 1, (level, counts)


def test_assignment_is_deterministic_per_seed_and_changes_with_it():
    dv = _assigned(seed=1).column("dv").to_pylist()
    assert dv == _assigned(seed=1).column("dv").to_pylist()
    assert dv != _assigned(seed=2).column("dv").to_pylist()


def test_assignment_follows_the_order_column_not_the_row_order():
    trials = _trials()
    reversed_rows = trials.take(list(range(trials.num_rows))[::-1])
    a = {r["image_id"]: r["dv"] for r in _assigned(trials=trials).to_pylist()}
    b = {r["image_id"]: r["dv"] for r in _assigned(trials=reversed_rows).to_pylist()}
    assert a == b


def test_a_condition_without_stimuli_is_an_error():
    trials = _trials()
    stimuli = _stimuli().filter(pa.compute.not_equal(_stimuli().column("condition"), 0.2))
    with pytest.raises(VcrbenchError, match="condition 0.2 has no measured stimuli"):
        assign_dv(trials, stimuli, seed=1, experiment="uniform-noise")


def test_condition_summary_quartiles():
    accuracy = pa.table({"condition": pa.array([0.05, 0.3], pa.float64()),
                         "accuracy": [0.9, 0.5]})
    summary = condition_summary(_stimuli(), accuracy).to_pylist()
    values = [0.05 + k / 1000 for k in range(K)]
    assert summary[0]["dv_median"] == pytest.approx(np.median(values))
    assert summary[0]["dv_q25"] == pytest.approx(np.percentile(values, 25))
    assert summary[0]["dv_q75"] == pytest.approx(np.percentile(values, 75))
    assert summary[0]["accuracy"] == 0.9
    assert all(np.isnan(summary[1][k]) for k in ("dv_median", "dv_q25", "dv_q75"))


def test_stimuli_for_run_measures_every_condition_on_the_same_run_images(tmp_path):
    lines = ["subj,Session,trial,rt,object_response,category,condition,imagename"]
    lines += [f"subject-01,1,{t},0.8,cat,cat,{c},img{t}.png" for t, c in enumerate([2, 0, 2])]
    (tmp_path / "low-pass_subject-01_session_1.csv").write_text("\n".join(lines) + "\n")
    index, _ = build_index("builtin", None)
    table = stimuli_for_run(index, str(tmp_path), seed=3, n_images=2, vif_precision=PRECISION)
    rows = table.to_pylist()
    assert [r["condition"] for r in rows] == [0.0, 0.0, 2.0, 2.0]
    ids = [r["image_id"] for r in rows]
    assert ids[:2] == ids[2:] and len(set(ids[:2])) == 2
    assert set(ids) <= set(index.column("image_id").to_pylist())
    assert [r["dv"] for r in rows[:2]] == [0.0, 0.0] and all(r["dv"] > 0.2 for r in rows[2:])
    other = tmp_path / "other"
    other.mkdir()
    (other / "contrast_subject-01_session_1.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(VcrbenchError, match="'contrast'"):
        stimuli_for_run(index, str(other), seed=3, n_images=2)
