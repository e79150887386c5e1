"""``vcrbench control retraining`` (:mod:`vcrbench.vcr.controls`): a fine-tuned model against
its control from a results folder written by hand, the change and its paired interval checked
against the replicate areas computed here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.core.tables import write_table
from vcrbench.curves.areas import GRID
from vcrbench.curves.tables import REPLICATES_SCHEMA
from vcrbench.errors import VcrbenchError
from vcrbench.vcr.controls import retraining_control

NULL_HUMAN = {k: None for k in ("HMRI", "HMRI_lo", "HMRI_hi", "MRSI", "MRSI_lo", "MRSI_hi")}
MODELS = {"finetuned:net-noise": ("net-noise", 0.62), "finetuned:net-control": ("ctl", 0.50)}


def _run(folder: Path, levels: dict[str, np.ndarray]) -> None:
    """A summary (R of each model on Gaussian noise) and flat replicate curves: replicate b of a
    model is levels[model][b] everywhere, so its area is that level."""
    rows = []
    for model, (slug, r) in MODELS.items():
        for metric in ("accuracy", "consistency"):
            rows.append({"model": model, "corruption": "gaussian_noise", "metric": metric,
                         "classes": 10, "R": r, "R_lo": r - 0.05, "R_hi": r + 0.05,
                         **NULL_HUMAN})
        write_table(pa.Table.from_pylist([
            {"metric": metric, "classes": 10, "replicate": b, "values": [v] * GRID.size}
            for metric in ("accuracy", "consistency") for b, v in enumerate(levels[model])],
            schema=REPLICATES_SCHEMA),
            folder / "curves" / slug / "gaussian_noise-replicates.parquet")
    write_table(pa.Table.from_pylist(rows), folder / "metrics" / "summary.parquet")


def test_control_against_augmented_with_the_paired_interval_by_hand(tmp_path):
    rng = np.random.default_rng(0)
    shared = rng.normal(0, 0.03, 200)  # the same image resample moves both models alike
    levels = {"finetuned:net-noise": 0.62 + shared + rng.normal(0, 0.005, 200),
              "finetuned:net-control": 0.50 + shared}
    _run(tmp_path, levels)
    folders = {m: slug for m, (slug, _) in MODELS.items()}
    text = retraining_control(tmp_path, "finetuned:net-noise", "finetuned:net-control", folders)
    difference = levels["finetuned:net-noise"] - levels["finetuned:net-control"]
    lo, hi = np.percentile(difference, [2.5, 97.5])
    assert text.startswith("# finetuned:net-noise against its control finetuned:net-control")
    assert "| fine-tuned model | control | corruption |" in text
    row = next(line for line in text.splitlines() if "| gaussian_noise |" in line)
    # the point change is the summary's; the interval the paired replicate differences'
    assert f"0.500 → 0.620 (+0.120 [{lo:+.3f}, {hi:+.3f}])" in row
    assert hi - lo < 0.05  # paired: far narrower than the unpaired spread of either model


def test_a_model_the_run_lacks_is_named(tmp_path):
    _run(tmp_path, {m: np.full(5, 0.5) for m in MODELS})
    with pytest.raises(VcrbenchError, match="--control 'finetuned:other' is not a model"):
        retraining_control(tmp_path, "finetuned:net-noise", "finetuned:other",
                           {"finetuned:net-noise": "net-noise", "finetuned:other": "other"})
    with pytest.raises(VcrbenchError, match="give the folder of a finished run"):
        retraining_control(tmp_path / "missing", "a", "b", {})


def test_the_command_finds_each_models_curves_by_its_folder_name(tmp_path, capsys):
    from vcrbench.cli import main

    levels = {m: np.full(20, r) for m, (_, r) in MODELS.items()}
    _run(tmp_path, levels)
    for model, (slug, _) in MODELS.items():  # the folders the workflow names (model_slug)
        (tmp_path / "curves" / slug).rename(tmp_path / "curves" / model.replace(":", "-"))
    out = tmp_path / "control.md"
    assert main(["control", "retraining", "--run", str(tmp_path), "--model",
                 "finetuned:net-noise", "--control", "finetuned:net-control",
                 "--out", str(out)]) == 0
    assert "0.500 → 0.620 (+0.120 [+0.120, +0.120])" in capsys.readouterr().out
    assert out.read_text().startswith("# finetuned:net-noise against its control")
