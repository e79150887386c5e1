"""The `figures` and `--report` targets on the tiny run: they read tables only."""

from __future__ import annotations

import shutil

import pytest
from helpers.images import assert_png
from helpers.workflow import TINY_ARGS, TINY_RESULTS, snakemake

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def tiny_copy(tiny_run, tmp_path_factory):
    """A copy of the session's tiny run, free to modify."""
    workdir = tmp_path_factory.mktemp("figures") / "run"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    return workdir


def _planned_jobs(stdout: str) -> list[str]:
    return [
        line.split()[1].rstrip(":")
        for line in stdout.splitlines()
        if line.startswith(("rule ", "localrule "))
    ]


def test_figures_target_rebuilds_every_figure_from_tables_only(tiny_copy):
    results = tiny_copy / TINY_RESULTS
    figures = results / "figures"
    before = sorted(str(p.relative_to(figures)) for p in figures.rglob("*.png"))
    # the tiny config has an ImageNet-C sample (sampling.imagenet_c_n) and no human data
    assert before == [
        "curves/gaussian_blur.png", "curves/gaussian_noise.png", "dv-histograms.png",
        "r-vs-imagenet-c.png", "robustness.png",
    ]
    assert (results / "metrics" / "coverage.md").read_text(encoding="utf-8").count("\n| ") == 2
    shutil.rmtree(figures)
    dry = snakemake("figures", "-n", *TINY_ARGS, workdir=tiny_copy)
    assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
    jobs = _planned_jobs(dry.stdout)
    assert sorted(set(jobs) - {"figures"}) == [
        "figure_curves", "figure_dv_histograms", "figure_r_vs_imagenet_c", "figure_robustness",
    ], jobs
    real = snakemake("figures", "--cores", "2", *TINY_ARGS, workdir=tiny_copy)
    assert real.returncode == 0, real.stdout[-3000:] + real.stderr[-3000:]
    assert sorted(str(p.relative_to(figures)) for p in figures.rglob("*.png")) == before
    for path in figures.rglob("*.png"):
        assert_png(path)


def test_report_has_every_figure_with_its_caption(tiny_copy, tmp_path):
    report = tmp_path / "report.html"
    result = snakemake("--report", str(report), *TINY_ARGS, workdir=tiny_copy)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    html = report.read_text(encoding="utf-8")
    assert report.stat().st_size > 100_000  # the figures are embedded
    for text in (
        "Robustness curves", "Visual change coverage", "ImageNet-C comparison",
        "r-vs-imagenet-c.png", "dv-histograms.png", "coverage.csv",
        "mean accuracy over the five", "ImageNet-C severity sample",
    ):
        assert text in html, text
    assert "Human comparison" not in html  # the tiny run has no human data
