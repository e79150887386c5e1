"""Workflow tests: lint, dry runs of every config, config errors, and the tiny real run."""

from __future__ import annotations

import re
import shutil
import subprocess

import pyarrow.parquet as pq
import pytest
from helpers.workflow import (
    DRY_RUN_CONFIGS,
    REPO,
    SNAKEMAKE,
    TEST_CONFIG,
    TINY_ARGS,
    TINY_RESULTS,
    USER_MODEL,
    fetched_weights_env,
    snakemake,
    table_digests,
    tiny_workdir,
)

pytestmark = pytest.mark.workflow


def test_lint_has_no_findings():
    result = snakemake("--lint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations" in result.stdout + result.stderr, result.stdout + result.stderr


def _checkout_beside_shared(tmp_path):
    """A working folder with ../shared beside it, as the sample configs' relative paths expect
    (skips the test where the reference data are absent)."""
    shared = REPO.parent / "shared"
    if not shared.is_dir():
        pytest.skip(f"{shared} is absent (reference data lives in ../shared/data)")
    (tmp_path / "shared").symlink_to(shared)
    workdir = tmp_path / "checkout"
    workdir.mkdir()
    return workdir


@pytest.mark.parametrize("configfile", DRY_RUN_CONFIGS)
def test_dry_run_of_every_config(configfile, tmp_path):
    extra, env = [], None
    workdir = tmp_path
    if configfile == "config/imagenet.yaml":
        extra = ["--config", f"dataset={{source: imagenet-val, path: {tmp_path}, labels: null}}"]
        # its ResNet-50's weights as a user fetched them (the dry run checks they are there)
        env = fetched_weights_env(tmp_path / "caches", torch_hub=("resnet50-11ad3fa6.pth",))
    if configfile in ("config/imagenet-sample.yaml", "config/finetune-sample.yaml",
                      "config/reva-sample.yaml", "config/cifar10.yaml", "config/test-cifar.yaml",
                      "config/reva-cifar10.yaml", "config/reva-cifar10-paper.yaml",
                      "config/control-vcr-retraining-cifar10.yaml",
                      "config/control-noc-overlap-cifar10.yaml",
                      "config/control-reva-weak-cifar10.yaml") or " " in configfile:
        workdir = _checkout_beside_shared(tmp_path)
    files = [str(REPO / name) for name in configfile.split()]  # an overlay: two files
    result = snakemake("-n", "--configfile", *files, *extra, workdir=workdir, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    job_stats = [line.split() for line in result.stdout.splitlines()]
    planned = {row[0] for row in job_stats if len(row) == 2 and row[1].isdigit()}
    assert {"index", "samples", "score", "predict_shard", "curves", "summary"} <= planned, planned
    assert "openclip_text_embeddings" not in planned, planned  # no openclip: model
    if configfile == "config/finetune-sample.yaml":
        assert {"finetune_epoch", "retraining_table", "overlap_report"} <= planned, planned
    if configfile == "config/cifar10.yaml":  # fastnet's 8 epochs, then the 14 corruptions
        counts = {row[0]: int(row[1]) for row in job_stats if len(row) == 2 and row[1].isdigit()}
        assert counts["train_epoch"] == 8 and counts["train_model"] == 1, counts
        assert counts["curves"] == 14 and counts["imagenet_c_metrics"] == 9, counts
    if configfile == "config/reva-cifar10.yaml":  # REVa parts 1 and 2 on the CPU budget
        counts = {row[0]: int(row[1]) for row in job_stats if len(row) == 2 and row[1].isdigit()}
        # four methods x 4 epochs; REVa- and REVa share one crafting of the 10,000 counterparts
        # (2 shards); part 1 over the Standard model's own images
        assert (counts["train_epoch"], counts["train_model"]) == (16, 4), counts
        assert (counts["train_pgd"], counts["reva_pool_from_train"]) == (2, 1), counts
        # 1,000 pool images in shards of 500; the 15 ImageNet-C corruptions on both sets at
        # CIFAR-10-C's severities; six attacks on the weak set (Standard) and on the evaluation
        # set (each method, white-box), one comparison
        assert (counts["reva_analyse"], counts["reva_imagenet_c_score"]) == (2, 30), counts
        assert (counts["reva_attack"], counts["reva_model_report"]) == (30, 1), counts
        assert (counts["reva_comparison"], counts["total"]) == (1, 568), counts
    counts = {row[0]: int(row[1]) for row in job_stats if len(row) == 2 and row[1].isdigit()}
    if configfile == "config/reva-cifar10-paper.yaml":
        # 3 architectures x 4 methods x 100 epochs; each architecture's REVa- and REVa share one
        # crafting of the 50,000 counterparts (10 shards); part 1 of the three standard models;
        # one comparison (AllConvNet's four methods)
        assert (counts["train_epoch"], counts["train_model"]) == (1200, 12), counts
        assert (counts["train_pgd"], counts["reva_model_report"]) == (30, 3), counts
        assert (counts["reva_comparison"], counts["total"]) == (1, 2373), counts
    if configfile == "config/control-vcr-retraining-cifar10.yaml":
        # fastnet's 8 epochs, two fine-tuning entries of 2 epochs from it, three models on six
        # corruptions (docs/cifar.md, "Fine-tuning at 32 px": 104 jobs)
        assert (counts["train_epoch"], counts["finetune_epoch"]) == (8, 4), counts
        assert (counts["curves"], counts["retraining_table"], counts["total"]) == (18, 1, 104)
    if configfile == "config/control-noc-overlap-cifar10.yaml":
        # overlap-standard and one entry per candidate (the control's 5 and ImageNet-NOC's 8:
        # 14 x 2 epochs), 15 models on the 13 candidates
        assert (counts["finetune_epoch"], counts["predict_shard"]) == (28, 195), counts
        assert (counts["overlap_report"], counts["total"]) == (1, 718), counts
    if configfile.startswith("config/control-reva-weak-cifar10.yaml"):
        # part 1 alone (the overlay: its random baseline instead of the weak set): 5,000 pool
        # images in shards of 1,000, the 15 ImageNet-C corruptions on both sets, no attacks
        assert (counts["train_epoch"], counts["reva_analyse"]) == (8, 5), counts
        assert (counts["reva_imagenet_c_score"], counts["reva_report"]) == (30, 1), counts
        assert "reva_attack" not in counts and "reva_comparison" not in counts, counts
        assert counts["total"] == 288, counts
    if configfile == "config/reva-sample.yaml":
        assert {"reva_analyse", "reva_weak_set", "reva_attack", "reva_imagenet_c_score",
                "reva_curves", "reva_report"} <= planned, planned
        # REVa part 2: four methods, 2 epochs each; reva-minus and reva share one set of PGD
        # counterparts (793 images in shards of 100); reva's targeted: auto reads Lite0's groups
        counts = {row[0]: int(row[1]) for row in job_stats if len(row) == 2 and row[1].isdigit()}
        assert (counts["finetune_epoch"], counts["finetune_pgd"]) == (8, 8), counts
        assert counts["reva_model_report"] == 1, counts


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("sampling={n: 0}", "'sampling.n' must be at least 1"),
        ("binning={bins: 1}", "'binning.bins' must be at least 2"),
        ("corruptions=[glas_blur]", "'glas_blur' is not a known corruption"),
        ("models=[resnet-9000]", "models[0]"),
        ("samplng={n: 5}", "unknown key 'samplng'"),
        ("device=tpu", "allowed values: auto, cpu, cuda"),
        ("models=['openclip:ViT-B-32?pretrained=no-such-checkpoint.pt']", "does not exist"),
    ],
)
def test_bad_config_stops_before_any_job(override, message, tmp_path):
    result = snakemake("-n", "--configfile", str(TEST_CONFIG), "--config", override,
                       workdir=tmp_path)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


def test_an_openclip_models_prompts_are_encoded_once_for_all_its_prediction_jobs(tmp_path):
    (tmp_path / "b32.pt").write_bytes(b"")  # a local checkpoint: only its existence is checked
    env = fetched_weights_env(tmp_path / "caches", hugging_face=(
        ("timm/vit_base_patch32_clip_224.openai", "open_clip_model.safetensors"),))
    result = snakemake("-n", "--configfile", str(TEST_CONFIG), "--config",
                       "models=[efficientnet-lite0, openclip:ViT-B-32/openai, "
                       "'openclip:ViT-B-32?pretrained=b32.pt']", workdir=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = re.findall(r"^rule (\w+):\n((?:    .*\n)+)", result.stdout, flags=re.MULTILINE)
    for slug, weights in [("openclip-ViT-B-32-openai", None),
                          ("openclip-ViT-B-32-pretrained-b32.pt", "b32.pt")]:
        embeddings = f"results/tiny/models/{slug}/text-embeddings.parquet"
        made = [(rule, re.search(r"input: (.*)", body)) for rule, body in jobs
                if f"output: {embeddings}" in body]
        assert [rule for rule, _ in made] == ["openclip_text_embeddings"], made
        assert (made[0][1] and made[0][1].group(1)) == weights  # remade when the file changes
        readers = sorted(rule for rule, body in jobs
                         if re.search(rf"input: .*{re.escape(embeddings)}", body))
        # the model's clean predictions, its two corruptions' shards and their ImageNet-C shards
        assert readers == (["imagenet_c_predict_shard"] * 2 + ["predict_clean"]
                           + ["predict_shard"] * 2), readers
    assert len([rule for rule, _ in jobs if rule == "predict_clean"]) == 3  # Lite0's too


def test_tiny_run_summary_has_values_in_unit_interval(tiny_run):
    summary = pq.read_table(tiny_run / TINY_RESULTS / "metrics" / "summary.parquet")
    rows = summary.to_pylist()
    seen = {(r["model"], r["corruption"], r["metric"], r["classes"]) for r in rows}
    for model in ["efficientnet-lite0", USER_MODEL]:
        for corruption in ["gaussian_noise", "gaussian_blur"]:
            for metric, classes in [("consistency", 1000), ("consistency", 16), ("accuracy", 16)]:
                assert (model, corruption, metric, classes) in seen
    for row in rows:
        assert 0.0 <= row["coverage"] <= 1.0 and row["resampled"], row
        if row["R"] is None:  # too few bins for this property: said in the note
            assert "R not reported" in row["note"] and row["R_lo"] is None, row
            continue
        assert 0.0 <= row["R"] <= 1.0, row
        if row["R_lo"] is None:  # replicates fixed by the anchors: no interval, said so
            assert "no interval" in row["note"], row
            continue
        for column in ("R_lo", "R_hi"):
            assert 0.0 <= row[column] <= 1.0, (column, row)
        # a percentile interval need not contain R itself (a skewed bootstrap distribution)
        assert row["R_lo"] <= row["R_hi"]
    # six photographs: fewer than bootstrap.min_units images, so samples are resampled, and the
    # table says the intervals are conditional on those images
    assert all(r["resampled"].startswith("samples (fewer than 10 units") for r in rows)
    assert (tiny_run / TINY_RESULTS / "metrics" / "summary.md").stat().st_size > 0


def test_tiny_run_second_invocation_has_nothing_to_do(tiny_run):
    result = snakemake("-n", *TINY_ARGS, workdir=tiny_run)
    assert result.returncode == 0, result.stderr
    assert "Nothing to be done" in result.stdout + result.stderr


def test_tiny_run_is_byte_identical_from_scratch(tiny_run, tmp_path):
    result = snakemake("--cores", "2", *TINY_ARGS, workdir=tiny_workdir(tmp_path))
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    first = table_digests(tiny_run / TINY_RESULTS)
    second = table_digests(tmp_path / TINY_RESULTS)
    assert first and first == second


def test_a_registry_change_redraws_only_the_samples_it_touches(tiny_run, tmp_path):
    # a copy of the workflow whose registry gives gaussian_blur another visual spacing power
    source = tmp_path / "source"
    source.mkdir()
    for part in ("Snakefile", "config.yaml", "rules", "workflow_scripts", "src", "envs",
                 "schemas", "report", "config"):
        if (REPO / part).is_dir():
            shutil.copytree(REPO / part, source / part,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / part, source / part)
    registry = source / "src" / "vcrbench" / "corruptions" / "registry.py"
    text = registry.read_text()
    old = 'blur.gaussian_blur, spacing={"sigma": 0.01}'
    assert text.count(old) == 1
    registry.write_text(text.replace(old, old + ', spacing_power={"sigma": 1.5}'))
    workdir = tmp_path / "run"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    result = subprocess.run(
        [*SNAKEMAKE, "--snakefile", str(source / "Snakefile"), "--directory", str(workdir), "-n",
         *TINY_ARGS],
        cwd=source, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    planned = result.stdout
    sampling_jobs = re.findall(r"rule (\w*samples):\n(?:.*\n)*?\s+wildcards: corruption=(\w+)",
                               planned)
    assert sampling_jobs == [("samples", "gaussian_blur")], sampling_jobs
    assert "corruption=gaussian_noise" not in planned  # nothing of the untouched corruption


@pytest.mark.shared
def test_clean_prediction_stage_on_imagenet_sample(imagenet_sample, tmp_path):
    target = "results/sample/predictions/efficientnet-lite0/clean.parquet"
    result = snakemake(
        "--cores",
        "2",
        target,
        "--configfile",
        str(TEST_CONFIG),
        "--config",
        "run=sample",
        f"dataset={{source: imagefolder, path: {imagenet_sample}}}",
        "threads={score: 2, predict: 2, estimate: 1}",
        workdir=tmp_path,
        timeout=1800,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    index = pq.read_table(tmp_path / "results" / "sample" / "data" / "index.parquet")
    clean = pq.read_table(tmp_path / target)
    assert index.num_rows == 1000
    labels = index.column("label").to_numpy()
    top1 = clean.column("top1").to_numpy()
    accuracy = float((labels == top1).mean())
    # 0.876 measured with the TF EfficientNet-Lite normalisation ((x - 127) / 128) the weights
    # were trained with; ImageNet mean/std (a preprocessing error) gives 0.769 on this sample.
    assert 0.74 <= accuracy <= 0.92, accuracy
    category = index.column("category16").to_numpy()
    in16 = category >= 0
    accuracy16 = float((clean.column("top1_16").to_numpy()[in16] == category[in16]).mean())
    assert in16.sum() == 207 and accuracy16 >= 0.85, accuracy16


@pytest.mark.shared
def test_human_comparison_and_imagenet_c_sample_on_imagenet_sample(imagenet_sample, tmp_path):
    """Real human trials (uniform noise, low-pass) give HMRI / MRSI for their corruptions and
    the ones they transfer to; the ImageNet-C sample gives per-severity accuracy and coverage."""
    human = imagenet_sample.parent / "human" / "model-vs-human"
    config = tmp_path / "human.yaml"
    config.write_text(
        f"""
run: human
dataset: {{source: imagefolder, path: {imagenet_sample}, limit: 80, categories16_only: true}}
corruptions: [uniform_noise, gaussian_noise, gaussian_blur]
sampling: {{n: 60, shard_size: 60, imagenet_c_n: 30}}
binning: {{bins: 8, min_count: 3}}
bootstrap: {{replicates: 20}}
human:
  - {{format: model-vs-human, path: {human / 'uniform-noise'}, corruption: uniform_noise,
     stimulus_images: 4}}
  - {{format: model-vs-human, path: {human / 'low-pass'}, corruption: gaussian_blur,
     stimulus_images: 4}}
figures: {{formats: [png]}}
""",
        encoding="utf-8",
    )
    result = snakemake(
        "--cores", "2", "--configfile", str(TEST_CONFIG), str(config), workdir=tmp_path,
        timeout=1800,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    results = tmp_path / "results" / "human"
    rows = pq.read_table(results / "metrics" / "summary.parquet").to_pylist()
    by_key = {(r["corruption"], r["metric"], r["classes"]): r for r in rows}
    sources = {
        "uniform_noise": "model-vs-human/uniform-noise",
        "gaussian_noise": "model-vs-human/uniform-noise via uniform_noise",
        "gaussian_blur": "model-vs-human/low-pass",
    }
    for corruption, source in sources.items():
        row = by_key[(corruption, "accuracy", 16)]
        assert row["human_source"] == source
        assert 0.0 <= row["HMRI_lo"] <= row["HMRI"] <= row["HMRI_hi"] <= 1.0, row
        assert 0.0 <= row["MRSI_lo"] <= row["MRSI"] <= row["MRSI_hi"] <= 1.0, row
        assert by_key[(corruption, "accuracy", 1000)]["HMRI"] is None
    # the uniform-noise data start at Δv ≈ 0.33 (30 % contrast): compared over their range only
    noise = by_key[("uniform_noise", "accuracy", 16)]
    assert noise["human_dv_min"] > 0.2 and "where the human data are" in noise["note"]
    assert by_key[("gaussian_blur", "accuracy", 16)]["human_dv_min"] == 0.0  # σ = 0 measured
    # ImageNet-C columns: Gaussian noise and blur have severities, uniform noise has none.
    assert by_key[("uniform_noise", "accuracy", 1000)]["imagenet_c_mean"] is None
    for corruption in ("gaussian_noise", "gaussian_blur"):
        row = by_key[(corruption, "accuracy", 1000)]
        assert 0.0 <= row["imagenet_c_mean"] <= 1.0 and 0 < row["imagenet_c_coverage"] <= 1
        severity = pq.read_table(
            results / "metrics" / "efficientnet-lite0" / f"{corruption}-imagenet-c.parquet"
        ).to_pylist()[0]
        assert severity["imagenet_c_n"] == 30
    conditions = pq.read_table(results / "human" / "gaussian_blur-conditions.parquet")
    assert conditions.column("n_trials").to_pylist() == [640] * 8
    assert conditions.column("dv_median").to_pylist()[0] == 0.0  # σ = 0 is the clean image
    similarity = pq.read_table(results / "human" / "similarity" / "curves.parquet").to_pylist()
    assert [(r["corruption_a"], r["corruption_b"]) for r in similarity] == [
        ("uniform_noise", "gaussian_blur")
    ]
    figures = results / "figures"
    for name in ["human-indices", "human-similarity", "r-vs-imagenet-c", "dv-histograms",
                 "robustness", *(f"curves/{c}" for c in sources)]:
        assert (figures / f"{name}.png").stat().st_size > 0, name
    coverage = (results / "metrics" / "coverage.csv").read_text(encoding="utf-8").splitlines()
    assert coverage[0] == ("corruption,n_samples,coverage,imagenet_c_n,imagenet_c_coverage,"
                           "coverage_at_imagenet_c_n")
    assert coverage[1].startswith("uniform_noise,60,") and coverage[1].endswith(",,,")


def test_the_imagenet_noc_set_expands_and_two_of_its_corruptions_run_through_the_pipeline(
        tmp_path):
    # corruptions: one set name for NOC's eight, each planned through the summary (dry run);
    # two of them run (a pixel-wise and a geometric one, a few samples each: every corruption
    # takes the same rules, and each is checked at 224 and 32 px in tests/unit/corruptions)
    summary = tmp_path / "results" / "noc" / "metrics" / "summary.parquet"
    settings = ["run=noc", "sampling={n: 24, shard_size: 24, imagenet_c_n: 0}",
                "bootstrap={replicates: 5}", "binning={bins: 4, min_count: 2}"]
    noc = ["noc_quantization", "noc_blur", "noc_vertical_artifacts", "noc_rain", "noc_border",
           "noc_shear", "noc_brightness", "noc_hue"]
    planned = snakemake(
        str(summary.relative_to(tmp_path)), "-n", "--configfile", str(TEST_CONFIG),
        "--config", *settings, "corruptions=imagenet-noc", workdir=tmp_path)
    assert planned.returncode == 0, planned.stdout[-4000:] + planned.stderr[-4000:]
    for corruption in noc:
        assert f"results/noc/metrics/efficientnet-lite0/{corruption}.parquet" in planned.stdout
    ran = ["noc_rain", "noc_shear"]
    result = snakemake(
        str(summary.relative_to(tmp_path)), "--cores", "2", "--configfile", str(TEST_CONFIG),
        "--config", *settings, f"corruptions=[{', '.join(ran)}]", workdir=tmp_path)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    rows = pq.read_table(summary).to_pylist()
    assert sorted({r["corruption"] for r in rows}) == ran
    for row in rows:
        if row["metric"] == "consistency" and row["classes"] == 1000:
            assert row["n_samples"] == 24 and 0 <= row["dv_min"] < row["dv_max"] <= 1, row
        assert row["R"] is None or 0 <= row["R"] <= 1, row


def test_overlap_accepts_the_noc_candidate_set(tmp_path):
    workdir = _checkout_beside_shared(tmp_path)
    result = snakemake("-n", "--configfile", str(REPO / "config" / "finetune-sample.yaml"),
                       "--config", "corruptions=noc-candidates",
                       "overlap={candidates: noc-candidates}", "human=[]", workdir=workdir)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    planned = result.stdout
    assert "overlap_report" in planned
    for corruption in ("noc_rain", "gaussian_noise", "noc_hue"):
        assert f"overlap-{corruption}" in planned, corruption
