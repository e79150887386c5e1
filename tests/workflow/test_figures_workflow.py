"""The `figures` and `--report` targets on the tiny run: they read tables only."""

from __future__ import annotations

import shutil

import pytest
from helpers.browser import INSTALL, Browser, chromium
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


@pytest.fixture(scope="module")
def report(tiny_copy, tmp_path_factory):
    """The tiny run's report (after the figures test above rebuilt its figures)."""
    path = tmp_path_factory.mktemp("report") / "report.html"
    result = snakemake("--report", str(path), *TINY_ARGS, workdir=tiny_copy)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return path


def test_report_has_every_figure_with_its_caption(report):
    html = report.read_text(encoding="utf-8")
    assert report.stat().st_size > 100_000  # the figures are embedded
    for text in (
        "1. Summary", "2. Robustness curves", "3. ImageNet-C comparison",
        "4. Visual change coverage", "r-vs-imagenet-c.png", "dv-histograms.png", "summary.html",
        "coverage.html", "mean accuracy over the five", "ImageNet-C severity sample",
    ):
        assert text in html, text
    assert "Human comparison" not in html  # the tiny run has no human data


def test_every_figure_png_fits_the_report(tiny_copy):
    figures = sorted((tiny_copy / TINY_RESULTS / "figures").rglob("*.png"))
    assert figures
    for path in figures:
        width, height = assert_png(path)
        assert height <= 1000, (path.name, width, height)
        assert width >= height, (path.name, width, height)  # landscape


# What a reader does: open a category, view its first item, view the summary table.
_NAVIGATE = """
(async () => {
  const settle = () => new Promise(r => setTimeout(r, 400));
  const link = text => [...document.querySelectorAll('a')].find(
      a => a.textContent.trim() === text);
  const out = {};
  out.categories = [...document.querySelectorAll('a')].map(a => a.textContent.trim())
      .filter(t => /^[0-9]+[.] /.test(t));
  link('1. Summary').click();
  await settle();
  const rows = () => [...document.querySelectorAll('table tbody tr')].filter(
      tr => tr.querySelector('td a'));
  out.items = rows().map(tr => tr.cells[0].textContent.trim());
  rows()[0].querySelector('td:last-child a').click();
  await settle();
  const img = document.querySelector('div.p-3 > img');
  out.first = img ? img.src.slice(0, 22) : null;
  if (img) {
    const box = img.getBoundingClientRect();
    out.box = [box.left, box.top, box.right, box.bottom, innerWidth, innerHeight];
  }
  const table = rows().find(tr => tr.cells[0].textContent.trim() === 'summary table');
  table.querySelector('td:last-child a').click();
  await settle();
  const frame = document.querySelector('iframe');
  out.frame = frame ? frame.src.slice(0, 15) : null;
  out.table = frame ? new TextDecoder().decode(Uint8Array.from(
      atob(frame.src.split(',')[1]), c => c.charCodeAt(0))) : '';
  return out;
})()
"""


@pytest.mark.skipif(chromium() is None, reason=f"no Chromium to render the report: {INSTALL}")
def test_report_in_a_browser_opens_on_the_summary_with_png_and_the_table(report, tmp_path):
    with Browser(1366, 768) as browser:
        browser.open(report)
        browser.settle(1.0)
        seen = browser.evaluate(_NAVIGATE)
        browser.settle(0.5)
        browser.screenshot(tmp_path / "report.png")
        errors = list(browser.errors)
    assert errors == [], errors
    assert seen["categories"] == ["1. Summary", "2. Robustness curves",
                                  "3. ImageNet-C comparison", "4. Visual change coverage"]
    assert seen["items"] == ["R per model and corruption", "summary table"], seen["items"]
    assert seen["first"].startswith("data:image/png"), seen["first"]
    left, top, right, bottom, width, height = seen["box"]
    assert 0 <= left and 0 <= top and right <= width and bottom <= height, seen["box"]
    assert seen["frame"].startswith("data:text/html"), seen["frame"]
    assert '<table class="sortable">' in seen["table"] and "R [95 % CI]" in seen["table"]
