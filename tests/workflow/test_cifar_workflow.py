"""The workflow on CIFAR-10 at 32 px (config/test-cifar.yaml on the shared JPEG copy): the
native-size store, a model trained from scratch one job per epoch and evaluated as
trained:<name>, blur lengths scaled to 32 px, CIFAR-10-C's severities, Δv of small images, tables
in CIFAR-10's label space without 16-class rows, and a re-run that does nothing."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.vif_reference import vif_reference
from helpers.workflow import CIFAR_RESULTS, CIFAR_ZOO_DIR, cifar_zoo_models, snakemake
from PIL import Image

from vcrbench.config import model_slug
from vcrbench.core.tables import read_table, read_tables
from vcrbench.corruptions.cifar_c import cifar_c_severities
from vcrbench.data.prepared import PreparedImages
from vcrbench.evaluation.scoring import decode_images
from vcrbench.models import load_model, predict

pytestmark = pytest.mark.workflow


def _results(cifar_run):
    return cifar_run / CIFAR_RESULTS


def test_store_and_index_are_native_size(cifar_run) -> None:
    results = _results(cifar_run)
    index = read_table(results / "data" / "index.parquet")
    assert index.num_rows == 80  # per_class: 8 of each of the 10 classes
    assert sorted(set(index.column("label").to_pylist())) == list(range(10))
    store = PreparedImages(results / "data" / "index-prepared.npy", index)
    assert store.image_shape == (32, 32, 3)
    first = index.column("path")[0].as_py()
    with Image.open(first) as image:  # the JPEG's pixels, not resized
        np.testing.assert_array_equal(store.images([index.column("image_id")[0].as_py()])[0],
                                      np.asarray(image.convert("RGB")))


def test_trained_model_is_evaluated_in_its_own_label_space(cifar_run) -> None:
    results = _results(cifar_run)
    log = read_table(results / "models" / "fastnet" / "training-log.parquet").to_pylist()
    assert [row["epoch"] for row in log] == [1, 2]
    index = read_table(results / "data" / "index.parquet")
    images = PreparedImages(results / "data" / "index-prepared.npy", index).all()
    labels = np.asarray(index.column("label").to_numpy())
    # the model string's loader and the inference engine, independently of training's own
    # accuracy: the same test accuracy as the training log's last row
    model = load_model("trained:fastnet", models_dir=str(results / "models"))
    assert model.classes == 10
    decisions = predict(model, images, engine="eager")
    assert abs(float((decisions["top1"] == labels).mean()) - log[-1]["test_accuracy"]) <= 1 / 80
    clean = read_table(results / "predictions" / "trained-fastnet" / "clean.parquet")
    top1 = np.asarray(clean.column("top1").to_numpy())
    assert top1.min() >= 0 and top1.max() < 10
    assert set(clean.column("top1_16").to_pylist()) == {-1}
    assert (top1 == decisions["top1"]).mean() >= 0.95  # the run's engine (OpenVINO) agrees


def test_summary_is_in_cifar10s_label_space(cifar_run) -> None:
    summary = read_table(_results(cifar_run) / "metrics" / "summary.parquet").to_pylist()
    assert {(r["metric"], r["classes"]) for r in summary} == {("accuracy", 10),
                                                             ("consistency", 10)}
    assert {r["corruption"] for r in summary} == {"gaussian_noise", "gaussian_blur"}
    assert all("no 16-class rows" in r["note"] for r in summary)
    assert all(r["HMRI"] is None for r in summary)
    assert all(r["imagenet_c_mean"] is not None for r in summary)


def test_robustbench_zoo_models_are_evaluated_beside_the_trained_one(cifar_run) -> None:
    """Three RobustBench CIFAR-10 entries (Linf, L2, corruptions; checkpoints in the zoo's
    layout) run through the whole workflow: R_a / R_p and CIFAR-10-C means for each, and their
    clean decisions are those of the model string's loader on the stored 32 px images."""
    results = _results(cifar_run)
    summary = read_table(results / "metrics" / "summary.parquet").to_pylist()
    index = read_table(results / "data" / "index.parquet")
    images = PreparedImages(results / "data" / "index-prepared.npy", index).all()
    models = {row["model"] for row in summary}
    assert set(cifar_zoo_models()) | {"trained:fastnet"} <= models
    for name in cifar_zoo_models():
        rows = [row for row in summary if row["model"] == name]
        assert {(r["corruption"], r["metric"]) for r in rows} == {
            (c, m) for c in ("gaussian_noise", "gaussian_blur")
            for m in ("accuracy", "consistency")}
        assert all(r["R"] is not None and 0 <= r["R"] <= 1 for r in rows)
        assert all(r["imagenet_c_mean"] is not None for r in rows)
        clean = read_table(results / "predictions" / model_slug(name) / "clean.parquet")
        model = load_model(name.replace(f"model_dir={CIFAR_ZOO_DIR}",
                                        f"model_dir={cifar_run / CIFAR_ZOO_DIR}"))
        direct = predict(model, images, engine="eager")["top1"]
        assert (np.asarray(clean.column("top1").to_numpy()) == direct).mean() >= 0.95


def test_blur_lengths_are_scaled_and_severities_are_cifar10cs(cifar_run) -> None:
    results = _results(cifar_run)
    uniform = read_tables(sorted((results / "samples" / "gaussian_blur").glob("*.parquet")))
    sigma = np.asarray(uniform.column("sigma").to_numpy())
    assert 0 < sigma.max() <= 40.0 * 32 / 224  # the 224 px domain [0, 40] scaled to 32 px
    severity = read_tables(sorted((results / "imagenet-c" / "samples" / "gaussian_blur")
                                  .glob("*.parquet")))
    cifar_c = {level["sigma"] for level in cifar_c_severities("gaussian_blur")}
    assert set(severity.column("sigma").to_pylist()) <= cifar_c


def test_dv_of_32px_images_is_the_papers_vif_on_enlargements(cifar_run) -> None:
    results = _results(cifar_run)
    index = read_table(results / "data" / "index.parquet")
    store = PreparedImages(results / "data" / "index-prepared.npy", index)
    scored = read_table(results / "scored" / "gaussian_noise" / "shard-0.parquet")
    corrupted = decode_images(scored.column("image"))
    assert corrupted.shape[1:] == (32, 32, 3)
    for row in (0, 7, 19):
        clean = store.images([scored.column("image_id")[row].as_py()])[0]

        def enlarged(image: np.ndarray) -> np.ndarray:
            return np.asarray(Image.fromarray(image).resize((224, 224),
                                                            Image.Resampling.BICUBIC))

        expected = 1.0 - vif_reference(enlarged(clean), enlarged(corrupted[row]))
        assert scored.column("dv")[row].as_py() == pytest.approx(expected, abs=2e-4)


def test_reva_from_scratch_trains_on_counterparts_crafted_on_its_standard_model(
        cifar_run) -> None:
    from vcrbench.data.prepared import store_path
    from vcrbench.models.trained import read_trained

    models = _results(cifar_run) / "models"
    index = read_table(models / "fastnet-reva" / "train-index.parquet")
    shards = read_table(models / "fastnet-reva" / "pgd" / "shard-0.parquet")
    ids = index.column("image_id").to_pylist()
    assert shards.column("image_id").to_pylist() == ids  # 500 images in one shard
    clean = PreparedImages(store_path(models / "fastnet-reva" / "train-index.parquet"),
                           index).images(ids)
    adversarial = np.stack([np.frombuffer(b, np.uint8).reshape(32, 32, 3)
                            for b in shards.column("image").to_pylist()])
    delta = np.abs(adversarial.astype(int) - clean.astype(int))
    assert delta.max() <= 8 and (delta.reshape(len(ids), -1).max(1) >= 7).mean() > 0.9
    assert np.array_equal(delta.reshape(len(ids), -1).max(1), shards.column("linf").to_numpy())
    # crafted against the standard model: its loss is higher on (nearly) every counterpart
    import torch

    from vcrbench.attacks import forward_of

    forward = forward_of(load_model("trained:fastnet", models_dir=str(models)))
    labels = torch.as_tensor(np.asarray(index.column("label").to_numpy()), dtype=torch.int64)
    with torch.no_grad():
        loss = [torch.nn.functional.cross_entropy(
                    forward(torch.from_numpy(x).permute(0, 3, 1, 2).float() / 255), labels,
                    reduction="none") for x in (clean, adversarial)]
    assert float((loss[1] > loss[0]).double().mean()) > 0.9
    checkpoint = read_trained(models / "fastnet-reva" / "model.pt")
    assert checkpoint["recipe"]["method"] == "reva"
    assert checkpoint["recipe"]["reva"]["targeted"] == ["gaussian_noise"]
    assert [row["epoch"] for row in checkpoint["log"]] == [1]
    clean_predictions = _results(cifar_run) / "predictions" / "trained-fastnet-reva"
    assert (clean_predictions / "clean.parquet").exists()  # evaluated as trained:fastnet-reva


def test_a_finished_cifar_run_has_nothing_to_do(cifar_run) -> None:
    result = snakemake("-n", "--cores", "1", "--configfile", str(cifar_run / "config.yaml"),
                       workdir=cifar_run)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Nothing to be done" in result.stdout + result.stderr
