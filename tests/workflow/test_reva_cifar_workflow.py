"""REVa part 1 on CIFAR-10 at 32 px, in the shared tiny CIFAR run (config/test-cifar.yaml's reva
section): the pool is the trained network's own training images (reva.from_train) with ids kept
apart from the test images', the weak set is chosen per class among CIFAR-10's 10, its corrupted
versions use CIFAR-10-C's severities, the attacks work on 32 px images, the tables are in
CIFAR-10's label space, and re-made tables have the same bytes."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import yaml
from helpers.workflow import CIFAR_RESULTS, cifar_config, snakemake

from vcrbench.core.tables import read_table, read_tables
from vcrbench.corruptions.cifar_c import cifar_c_severities
from vcrbench.data.datasets import index_side, index_size
from vcrbench.data.prepared import PreparedImages
from vcrbench.evaluation.scoring import decode_images
from vcrbench.reva.config import POOL_ID_PREFIX

pytestmark = pytest.mark.workflow

ATTACKS = ("fgsm", "pgd")  # UAP at 32 px: tests/unit/attacks/test_universal.py
MODEL = "trained-fastnet"


def _results(cifar_run):
    return cifar_run / CIFAR_RESULTS


def test_the_pool_is_the_networks_training_images_apart_from_the_test_images(cifar_run):
    results = _results(cifar_run)
    train = read_table(results / "models" / "fastnet" / "train-index.parquet")
    pool = read_table(results / "reva" / "pool" / "train-index.parquet")
    evaluation = read_table(results / "data" / "index.parquet")
    assert pool.num_rows == train.num_rows == 500
    # CIFAR's class folders repeat ids (airplane/0000 in train/ and test/): the pool's get a prefix
    assert pool.column("image_id").to_pylist() == [
        POOL_ID_PREFIX + i for i in train.column("image_id").to_pylist()]
    assert pool.column("path").to_pylist() == train.column("path").to_pylist()
    assert not set(pool.column("image_id").to_pylist()) & set(
        evaluation.column("image_id").to_pylist())
    assert (index_size(pool), index_side(pool)) == ("native", 32)
    resilience = read_table(results / "reva" / "resilience.parquet")
    assert resilience.num_rows == 500
    assert set(resilience.column("n_neighbours").to_pylist()) == {3}
    rho = np.asarray(resilience.column("rho").to_numpy())
    assert ((rho >= 0) & (rho <= 1)).all()
    selection = (results / "reva" / "weak" / "selection.txt").read_text()
    assert "pool: training (train entry fastnet), 500 images" in selection


def test_the_weak_set_is_chosen_per_class_and_stays_at_32px(cifar_run):
    results = _results(cifar_run)
    weak = read_table(results / "reva" / "weak" / "index.parquet")
    ranking = read_table(results / "reva" / "ranking.parquet")
    assert weak.num_rows == 20
    rule = set(ranking.column("group_by").to_pylist())
    selection = (results / "reva" / "weak" / "selection.txt").read_text()
    if rule == {"class"}:  # every class has 2 clean-correct pool images: 2 of each of the 10
        assert np.bincount(weak.column("label").to_numpy(), minlength=10).tolist() == [2] * 10
        assert "the 2 weakest of each of the 10 classes" in selection
    else:  # the tiny network (2 epochs) leaves a class without 2: the whole pool, and why
        assert rule == {"pool"} and "class: 2 per class needs 2" in selection
    store = PreparedImages(results / "reva" / "weak" / "index-prepared.npy", weak)
    assert store.image_shape == (32, 32, 3)


def test_corrupted_weak_and_test_sets_use_cifar10cs_severities(cifar_run):
    results = _results(cifar_run)
    levels = {level["sigma"] for level in cifar_c_severities("gaussian_blur")}
    for set_name in ("weak", "evaluation"):
        samples = read_tables(sorted((results / "reva" / set_name / "imagenet-c" / "samples"
                                      / "gaussian_blur").glob("*.parquet")))
        assert samples.num_rows == 5 * 20
        assert sorted(set(samples.column("severity").to_pylist())) == [1, 2, 3, 4, 5]
        assert set(samples.column("sigma").to_pylist()) <= levels
        scored = read_tables(sorted((results / "reva" / set_name / "imagenet-c" / "scored"
                                     / "gaussian_blur").glob("*.parquet")))
        assert decode_images(scored.column("image")[:2]).shape[1:] == (32, 32, 3)


def test_attacks_work_on_32px_images_within_eps(cifar_run):
    results = _results(cifar_run)
    for set_name, index in (("weak", "reva/weak/index"), ("evaluation", "data/index")):
        table = read_table(results / f"{index}.parquet")
        clean = PreparedImages(results / f"{index}-prepared.npy", table)
        for attack in ATTACKS:
            scored = read_table(results / "reva" / set_name / "attacks" / MODEL
                                / f"{attack}.parquet")
            assert scored.num_rows == table.num_rows
            adversarial = decode_images(scored.column("image"))
            assert adversarial.shape == (table.num_rows, 32, 32, 3)
            original = clean.images(scored.column("image_id").to_pylist())
            change = np.abs(adversarial.astype(int) - original.astype(int))
            assert change.max() <= 8 and change.max() > 0  # eps 8/255 on the stored pixels
            dv = scored.column("dv").to_numpy()
            assert ((dv >= 0) & (dv <= 1)).all()
            predictions = read_table(results / "reva" / set_name / "attack-predictions" / MODEL
                                     / f"{attack}.parquet")
            top1 = np.asarray(predictions.column("top1").to_numpy())
            assert top1.min() >= 0 and top1.max() < 10


def test_tables_are_in_cifar10s_label_space(cifar_run):
    results = _results(cifar_run)
    errors = read_table(results / "reva" / "errors.parquet").to_pylist()
    relative = read_table(results / "reva" / "relative-errors.parquet").to_pylist()
    groups = read_table(results / "reva" / "groups.parquet").to_pylist()
    weak_vs_all = read_table(results / "reva" / "r-weak-vs-all.parquet").to_pylist()
    clean = {r["set"]: r["error"] for r in errors if r["kind"] == "clean"}
    assert clean["weak"] == 0  # the weak images are clean-correct by construction
    assert 0 < clean["evaluation"] < 1
    perturbations = {(r["kind"], r["perturbation"]) for r in errors if r["set"] == "weak"}
    assert {("attack", a) for a in ATTACKS} <= perturbations
    assert {("corruption", c) for c in ("gaussian_noise", "gaussian_blur")} <= perturbations
    by_key = {(r["set"], r["perturbation"]): r["error"] for r in errors
              if r["kind"] != "clean" and r.get("measure", "severity") == "severity"}
    for row in relative:
        if row["measure"] == "severity" and row["value"] is not None:
            assert row["value"] == pytest.approx(by_key[("weak", row["perturbation"])]
                                                 / clean["evaluation"])
    # R_a on the weak set next to all test images: CIFAR-10's 10 classes, no 16-class rows
    assert {(r["corruption"], r["metric"], r["classes"]) for r in weak_vs_all} == {
        (c, m, 10) for c in ("gaussian_noise", "gaussian_blur")
        for m in ("accuracy", "consistency")}
    continuous = [r for r in relative if r["measure"] == "continuous"]
    assert continuous and all("no accuracy curve" not in (r["note"] or "") for r in continuous)
    assert {g["rule"] for g in groups} == {"worst-per-category", "threshold"}
    report = (results / "reva" / "report.md").read_text()
    assert "trained:fastnet" in report and "1000 classes" not in report
    for name in ("reva-scores", "reva-weak-vs-all", "reva-relative-errors"):
        assert (results / "figures" / f"{name}.png").stat().st_size > 0


def test_remade_reva_tables_have_the_same_bytes(cifar_run, tmp_path):
    """An analyser shard, the pool, a weak-set attack and the relative errors, deleted and made
    again one at a time in a copy of the run, have the same bytes."""
    copy = tmp_path / "run"
    shutil.copytree(cifar_run, copy, symlinks=True)
    results = copy / CIFAR_RESULTS
    for path in ["reva/pool/train-index.parquet", "reva/resilience/shard-1.parquet",
                 f"reva/weak/attacks/{MODEL}/pgd.parquet", "reva/relative-errors.parquet"]:
        before = (results / path).read_bytes()
        (results / path).unlink()
        result = snakemake(str(CIFAR_RESULTS / path), "--cores", "2", "--configfile",
                           str(copy / "config.yaml"), workdir=copy)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert (results / path).read_bytes() == before, path


def test_hostile_reva_cifar_config_is_refused_before_any_job(tmp_path, shared_cifar10):
    """One refusal through Snakemake (no job, no results folder); every refusal's message is
    checked in-process in tests/unit/config/test_reva_cifar_config.py."""
    config = cifar_config(shared_cifar10)
    config["reva"].update({"from_train": "nope"})
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    result = snakemake("-n", "--configfile", str(path), workdir=tmp_path)
    assert result.returncode != 0
    assert "reva.from_train 'nope' is not a train entry" in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()
