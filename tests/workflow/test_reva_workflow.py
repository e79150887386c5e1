"""REVa end to end on a tiny run of real images (config/test-reva.yaml, one run per session):
every table has its schema and agrees with the others, a second run has nothing to do, a
re-made table has the same bytes, and a hostile reva config is refused before any job."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from helpers.paths import IMAGENET_SAMPLE
from helpers.workflow import REVA_RESULTS, reva_config_file, reva_reference_run, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.shared]

RESULTS = REVA_RESULTS


def _write_config(folder: Path, **reva) -> Path:
    """config/test-reva.yaml with absolute data paths and ``reva`` keys replaced."""
    return reva_config_file(folder, IMAGENET_SAMPLE, **reva)


@pytest.fixture(scope="session")
def reva_run(tmp_path_factory, imagenet_sample) -> Path:
    """The session's one finished tiny REVa run (started with the session, conftest.py): a
    working folder holding results/tiny-reva."""
    return reva_reference_run(tmp_path_factory.getbasetemp(), imagenet_sample)


def _table(run: Path, name: str):
    return pq.read_table(run / RESULTS / name)


def test_pool_ranking_and_weak_set(reva_run):
    resilience = _table(reva_run, "reva/resilience.parquet")
    ranking = _table(reva_run, "reva/ranking.parquet")
    weak = _table(reva_run, "reva/weak/index.parquet")
    evaluation = _table(reva_run, "data/index.parquet")
    assert resilience.num_rows == ranking.num_rows == 24
    assert set(resilience.column("n_neighbours").to_pylist()) == {3}
    assert weak.schema == evaluation.schema and weak.num_rows == 12
    selected = {i for i, s in zip(ranking.column("image_id").to_pylist(),
                                  ranking.column("selected").to_pylist(), strict=True) if s}
    assert selected == set(weak.column("image_id").to_pylist())
    assert not selected & set(evaluation.column("image_id").to_pylist())
    # every selected image is clean-correct and at least as weak as every eligible one left out
    rows = resilience.to_pylist()
    score = {r["image_id"]: r["score"] for r in rows}
    eligible = {r["image_id"] for r in rows if r["clean_correct"]}
    assert selected <= eligible
    left = eligible - selected
    if left:
        assert min(score[i] for i in selected) >= max(score[i] for i in left)
    rho = np.array([r["rho"] for r in rows])
    assert ((rho >= 0) & (rho <= 1)).all()
    text = (reva_run / RESULTS / "reva/weak/selection.txt").read_text()
    assert "pool: training (reva.train), 24 images" in text


def test_adversarial_images_are_stored_like_scored_shards(reva_run):
    for set_name in ("weak", "evaluation"):
        for attack in ("fgsm", "pgd", "uap"):
            table = _table(reva_run, f"reva/{set_name}/attacks/efficientnet-lite0/{attack}.parquet")
            assert table.column_names == ["sample_id", "image_id", "vif", "dv", "checksum",
                                          "image"]
            assert table.num_rows == 12
            for raw, checksum in zip(table.column("image").to_pylist(),
                                     table.column("checksum").to_pylist(), strict=True):
                assert hashlib.blake2b(raw, digest_size=16).hexdigest() == checksum
            dv = table.column("dv").to_numpy()
            assert ((dv >= 0) & (dv <= 1)).all() and dv.max() > 0


def test_report_tables_agree(reva_run):
    errors = _table(reva_run, "reva/errors.parquet").to_pylist()
    relative = _table(reva_run, "reva/relative-errors.parquet").to_pylist()
    groups = _table(reva_run, "reva/groups.parquet").to_pylist()
    weak_vs_all = _table(reva_run, "reva/r-weak-vs-all.parquet").to_pylist()
    clean = {r["set"]: r["error"] for r in errors if r["kind"] == "clean"}
    assert set(clean) == {"weak", "evaluation"}
    # the weak images are clean-correct by construction
    assert clean["weak"] == 0
    perturbations = {(r["kind"], r["perturbation"]) for r in errors if r["set"] == "weak"}
    assert {("attack", a) for a in ("fgsm", "pgd", "uap")} <= perturbations
    assert {("corruption", c) for c in ("gaussian_noise", "defocus_blur")} <= perturbations
    by_key = {(r["set"], r["perturbation"]): r["error"] for r in errors}
    for row in relative:
        if row["measure"] == "severity" and row["value"] is not None:
            assert row["value"] == pytest.approx(by_key[("weak", row["perturbation"])]
                                                 / clean["evaluation"])
    assert {g["rule"] for g in groups} == {"worst-per-category", "threshold"}
    assert {(r["corruption"], r["metric"], r["classes"]) for r in weak_vs_all} >= {
        ("gaussian_noise", "accuracy", 1000), ("defocus_blur", "accuracy", 1000)}
    report = (reva_run / RESULTS / "reva/report.md").read_text()
    assert "efficientnet-lite0" in report
    for name in ("reva-scores", "reva-weak-vs-all", "reva-relative-errors"):
        assert (reva_run / RESULTS / f"figures/{name}.png").stat().st_size > 0


def test_a_second_run_has_nothing_to_do(reva_run):
    config = _write_config(reva_run)
    again = snakemake("--cores", "2", "--configfile", str(config), "-n", workdir=reva_run)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def test_remade_tables_have_the_same_bytes(reva_run, tmp_path):
    """The report, an analyser shard, an attack and the ranking, deleted and made again one at
    a time in a copy of the run, have the same bytes (keyed neighbours and random starts, fixed
    reductions)."""
    copy = tmp_path / "run"
    shutil.copytree(reva_run, copy, symlinks=True)
    config = _write_config(copy)
    for path in ["reva/relative-errors.parquet", "reva/resilience/shard-1.parquet",
                 "reva/weak/attacks/efficientnet-lite0/pgd.parquet", "reva/ranking.parquet"]:
        before = (copy / RESULTS / path).read_bytes()
        (copy / RESULTS / path).unlink()
        result = snakemake(str(RESULTS / path), "--cores", "2", "--configfile", str(config),
                           workdir=copy)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert (copy / RESULTS / path).read_bytes() == before, path


def _planned_comparison(folder: Path, **reva) -> dict[str, int]:
    """Jobs per rule of a dry run of target reva: the tiny config with REVa part 2's four
    fine-tuned models (existing finetune keys only), their comparison, and ``reva`` keys
    replaced."""
    methods = {"Standard": "standard", "AugMix": "augmix", "REVa⁻": "reva-minus",
               "REVa": "reva"}
    comparison = {"methods": {k: f"finetuned:{v}" for k, v in methods.items()},
                  "baselines": ["Standard", "AugMix", "REVa⁻"], "transfer_from": "Standard"}
    comparison.update(reva.pop("comparison", {}))
    config = yaml.safe_load(_write_config(folder, comparison=comparison, **reva).read_text())
    config["finetune"] = [{"name": name, "base": "efficientnet-lite0", "epochs": 1,
                           "train": config["reva"]["train"]} for name in methods.values()]
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False))
    result = snakemake("reva", "--cores", "1", "--configfile", str(path), "-n", "--quiet",
                       "rules", workdir=folder)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", result.stdout, re.M)}


def test_a_comparison_of_training_methods_is_planned_into_the_reva_target(tmp_path,
                                                                          imagenet_sample):
    """The comparison, its figure, and the transferred attacks: crafted once on the standard
    model and classified by each other method; part 1 validates all five models."""
    counts = _planned_comparison(tmp_path)
    assert counts["reva_comparison"] == counts["figure_reva_comparison"] == 1
    # 3 attacks crafted on the standard model, predicted by the 3 other methods
    assert counts["reva_predict_crafted"] == 9
    # the weak set's Δv shards: 2 corruptions x 5 models (the base and the four methods)
    assert counts["reva_predict_shard"] == 10


def test_validated_models_and_compared_attacks_narrow_the_plan(tmp_path, imagenet_sample):
    """reva.models: [the base] keeps the weak set to the base; comparison.attacks: [fgsm]
    crafts FGSM alone on each method."""
    counts = _planned_comparison(tmp_path, models=["efficientnet-lite0"],
                                 comparison={"attacks": ["fgsm"]})
    assert counts["reva_predict_shard"] == 2  # 2 corruptions x the base
    assert counts["reva_predict_crafted"] == 3  # FGSM crafted on Standard, shown to 3 others
    # the base's 3 attacks on both sets, and FGSM on each method's evaluation images
    assert counts["reva_attack"] == 3 * 2 + 4
    assert counts["reva_comparison"] == counts["reva_report"] == 1


@pytest.mark.parametrize(
    ("reva", "fragment"),
    [
        ({"attacks": {"names": ["fgsm", "carlini"]}}, "carlini"),
        ({"attacks": {"names": ["pgd"], "settings": {"pgd": {"eps": 2}}}}, "eps"),
        ({"weak": {"size": 25}}, "reva.weak.size"),
        ({"disjoint": True, "train": {"source": "imagefolder", "path": "SHARED",
                                      "limit": 40}}, "reva.disjoint"),
    ],
)
def test_hostile_reva_config_is_refused_before_any_job(tmp_path, imagenet_sample, reva, fragment):
    if "train" in reva:
        reva["train"]["path"] = str(imagenet_sample)
    config = _write_config(tmp_path, **reva)
    result = snakemake("--cores", "1", "--configfile", str(config), "-n", workdir=tmp_path)
    assert result.returncode != 0
    assert fragment in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()
