"""The fine-tuning and overlap stages in the workflow: a run killed during epoch 2 resumes from
epoch 1's checkpoint to the weights of an uninterrupted training, the fine-tuned models are
evaluated, compared with their base and fed to the overlap report, and training on evaluation
images is refused before any training."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
import torch
import yaml
from helpers.workflow import REPO, TEST_CONFIG, snakemake, snakemake_command

from vcrbench.config import validate_config
from vcrbench.core.tables import read_table
from vcrbench.data.datasets import build_index_from_config
from vcrbench.models.finetuned import read_checkpoint
from vcrbench.training.loop import train_epoch
from vcrbench.training.spec import TrainingSpec

TRAIN = {"exclude_categories16": True, "limit": 16}
TEMPLATE = {"epochs": 2, "batch_size": 8, "trainable": "classifier", "optimizer": {"lr": 0.01}}


def _overlap_config(tmp_path, imagenet_sample) -> tuple:
    """config/test.yaml on 8 labelled images of the shared sample with the overlap report of
    Gaussian noise and brightness: Lite0's classifier fine-tuned for two epochs with each (the
    standard model is Lite0 itself) on 16 other images; written to ``tmp_path/config.yaml``."""
    config = yaml.safe_load(TEST_CONFIG.read_text())
    sample = {"source": "imagefolder", "path": str(imagenet_sample)}
    config.update(
        dataset={**sample, "categories16_only": True, "limit": 8},
        corruptions=["gaussian_noise", "brightness"],
        sampling={**config["sampling"], "n": 40, "shard_size": 40, "imagenet_c_n": 0},
        threads={**config["threads"], "train": 1},
        overlap={"candidates": ["gaussian_noise", "brightness"], "standard": "base",
                 "train": {**sample, **TRAIN}, "finetune": TEMPLATE, "thresholds": [0.5]},
    )
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, config


def _config(tmp_path, imagenet_sample, **changes) -> tuple:
    """config/test.yaml with one corruption and a two-epoch fine-tuning of Lite0's classifier
    on 16 labelled images of the shared sample; written to ``tmp_path/config.yaml``."""
    config = yaml.safe_load(TEST_CONFIG.read_text())
    config.update(
        corruptions=["gaussian_noise"],
        sampling={**config["sampling"], "imagenet_c_n": 0},
        threads={**config["threads"], "train": 1},
        finetune=[
            {
                "name": "ft",
                "base": "efficientnet-lite0",
                "train": {"source": "imagefolder", "path": str(imagenet_sample),
                          "exclude_categories16": True, "limit": 16},
                "augmentation": {"corruption": "gaussian_noise", "fraction": 0.5},
                "epochs": 2,
                "batch_size": 8,
                "trainable": "classifier",
                "optimizer": {"lr": 0.01},
            }
        ],
    )
    config.update(changes)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, config


def _wait_for(condition, timeout: float, what: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if process.poll() is not None:
            pytest.fail(f"snakemake exited ({process.returncode}) before {what}")
        time.sleep(0.05)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


@pytest.mark.workflow
def test_killed_training_resumes_at_its_epoch_and_feeds_retraining_and_overlap(
    tmp_path, imagenet_sample
):
    config_path, config = _overlap_config(tmp_path, imagenet_sample)
    workdir = tmp_path / "run"
    workdir.mkdir()
    name = "overlap-gaussian_noise"
    models = workdir / "results" / "tiny" / "models" / name
    epoch2_log = workdir / "results" / "tiny" / "logs" / "finetune" / name / "epoch-2.log"

    console = (tmp_path / "killed-run.txt").open("w")
    process = subprocess.Popen(
        snakemake_command("--cores", "2", "--configfile", str(config_path), workdir=workdir),
        cwd=REPO, stdout=console, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        _wait_for(lambda: epoch2_log.is_file() and "start (threads" in epoch2_log.read_text(),
                  600, "epoch 2 to start", process)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        console.close()
    assert not (models / "checkpoint.pt").exists(), "training finished before the kill"
    epoch1 = models / "epochs" / "epoch-1.parquet"
    assert (models / "epochs" / "epoch-1.pt").is_file() and epoch1.is_file()
    epoch1_written = epoch1.stat().st_mtime_ns

    assert snakemake("--unlock", "--configfile", str(config_path), workdir=workdir).returncode == 0
    resumed = snakemake("--cores", "2", "--rerun-incomplete", "--configfile", str(config_path),
                        workdir=workdir)
    assert resumed.returncode == 0, resumed.stdout[-5000:] + resumed.stderr[-5000:]
    assert epoch1.stat().st_mtime_ns == epoch1_written, "epoch 1 was trained again"
    assert not (models / "epochs" / "epoch-2.pt").exists(), "temporary epoch checkpoint kept"

    # The resumed weights equal two epochs trained in one go, outside the workflow.
    validated = validate_config(config)
    entry = next(e for e in validated["finetune"] if e["name"] == name)
    assert entry["augmentation"]["corruption"] == "gaussian_noise"
    spec = TrainingSpec.from_config(entry, validated["seed"])
    index, _ = build_index_from_config(entry["train"])
    torch.set_num_threads(1)
    first, _ = train_epoch(spec, index, 1, None, torch.device("cpu"))
    second, _ = train_epoch(spec, index, 2, first, torch.device("cpu"))
    final = read_checkpoint(models / "checkpoint.pt")
    assert final["epoch"] == 2 and "optimizer" not in final
    assert all(torch.equal(final["state_dict"][k], v) for k, v in second["state_dict"].items())

    log = read_table(models / "training-log.parquet")
    assert log.column("epoch").to_pylist() == [1, 2]
    assert log.column("n_corrupted").to_pylist() == [8, 8]

    results = workdir / "results" / "tiny"
    assert (results / "predictions" / f"finetuned-{name}" / "clean.parquet").is_file()
    table = read_table(results / "metrics" / "retraining.parquet").to_pylist()
    assert {(r["finetuned"], r["base"]) for r in table} == {
        (f"finetuned:overlap-{c}", "efficientnet-lite0") for c in ("gaussian_noise", "brightness")}
    rows = [r for r in table if r["finetuned"] == f"finetuned:{name}" and r["quantity"] == "R"
            and r["metric"] == "accuracy" and r["classes"] == 1000]
    assert len(rows) == 2
    for row in rows:
        assert row["change"] == pytest.approx(row["after"] - row["before"])
        assert row["change_lo"] <= row["change_hi"]
    assert f"finetuned:{name}" in (results / "metrics" / "retraining.md").read_text()
    assert (results / "figures" / "retraining.png").stat().st_size > 10_000

    # The overlap report: robustness of every role on every candidate, both scores.
    robustness = read_table(results / "overlap" / "robustness.parquet").to_pylist()
    assert {(r["role"], r["corruption"], r["score"]) for r in robustness} == {
        (role, c, score) for role in ("standard", "gaussian_noise", "brightness")
        for c in ("gaussian_noise", "brightness") for score in ("noc", "vcr")}
    standard = [r for r in robustness if r["role"] == "standard"]
    assert {r["model"] for r in standard} == {"efficientnet-lite0"}
    for r in robustness:
        if r["score"] == "noc":
            assert r["R"] == pytest.approx(r["accuracy"] / r["accuracy_clean"])
    matrix = read_table(results / "overlap" / "matrix.parquet")
    assert matrix.num_rows == 8
    # each candidate's own gain (Eq. (2)'s denominator) with its interval, both scores
    gains = read_table(results / "overlap" / "gains.parquet").to_pylist()
    assert {(r["score"], r["corruption"]) for r in gains} == {
        (score, c) for score in ("noc", "vcr") for c in ("gaussian_noise", "brightness")}
    assert any(r["gain"] is not None for r in gains)
    by = {(r["role"], r["corruption"], r["score"]): r["R"] for r in robustness}
    for r in gains:
        own, standard = by[(r["corruption"], r["corruption"], r["score"])], \
            by[("standard", r["corruption"], r["score"])]
        if None not in (own, standard, r["gain"]):
            assert r["gain"] == pytest.approx(own - standard)
    report = (results / "overlap" / "report.md").read_text()
    assert "Non-overlapping benchmarks" in report and "## Own gains" in report
    assert (results / "figures" / "overlap.png").stat().st_size > 10_000

    again = snakemake("--cores", "2", "--configfile", str(config_path), workdir=workdir)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.workflow
def test_training_on_evaluation_images_is_refused_before_training(tmp_path, imagenet_sample):
    dataset = {"source": "imagefolder", "path": str(imagenet_sample), "limit": 8}
    config_path, config = _config(tmp_path, imagenet_sample, dataset=dataset)
    config["finetune"][0]["train"] = {**dataset, "limit": 4}
    config_path.write_text(yaml.safe_dump(config))
    workdir = tmp_path / "run"
    workdir.mkdir()
    target = "results/tiny/models/ft/checkpoint.pt"  # before --configfile, which takes a list
    result = snakemake(target, "--cores", "1", "--configfile", str(config_path), workdir=workdir)
    assert result.returncode != 0
    assert "the training images overlap the evaluation images (4 shared image ids" in (
        result.stdout + result.stderr)
    assert not (workdir / "results" / "tiny" / "models" / "ft" / "train-index.parquet").exists()
    assert not list((workdir / "results" / "tiny" / "models").rglob("*.pt"))
