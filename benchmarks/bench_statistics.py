"""The numbers behind docs/statistics.md: the simulations of
``tests/calibration/test_statistics_calibration.py``, counted in full.

Run (a few minutes on 2 cores)::

    python benchmarks/bench_statistics.py

Prints, for images with random difficulty (N = 1,000, M = 20, B = 200, 100 seeds), how often
the 95 % interval of R covers the population R when the bootstrap resamples images and when it
resamples samples; the bias of R with data stopping at Δv 0.67, with and without the right-end
anchor; and how often two human data sets with the same (or shifted) true curve are called
similar (different) by the simultaneous test.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "calibration"))

import test_statistics_calibration as sim  # noqa: E402

from vcrbench.curves.bootstrap import estimate_curve  # noqa: E402
from vcrbench.curves.resampling import cluster_resampling  # noqa: E402
from vcrbench.human.similarity import compare_curves  # noqa: E402


def coverage(n_images: int, seeds: int = 100) -> tuple[int, int]:
    images = samples = 0
    for s in range(seeds):
        dv, ok, image, clean = sim.images_with_random_effects(n_images, 1000, 1000 + s)
        by_image = cluster_resampling({"images": image}, n_boot=200, seed=s)
        e = estimate_curve(dv, ok, bins=20, min_count=20, anchor_outcomes=clean, n_boot=200,
                           resampling=by_image)
        images += e.area_lo <= sim.R_POPULATION <= e.area_hi
        old = estimate_curve(dv, ok, bins=20, min_count=20, anchor=float(clean.mean()),
                             n_boot=200, seed=s)
        samples += old.area_lo <= sim.R_POPULATION <= old.area_hi
    return images, samples


def similarity(seeds: int = 40) -> tuple[int, int]:
    def same(v):
        return 0.9 / (1.0 + np.exp((np.asarray(v) - 0.5) / 0.1))

    def later(v):
        return 0.9 / (1.0 + np.exp((np.asarray(v) - 0.62) / 0.1))

    similar = different = 0
    for s in range(seeds):
        a = sim.human_curve(sim.human_trials(same, 2 * s), "a")
        b = sim.human_curve(sim.human_trials(same, 2 * s + 1), "b")
        c = sim.human_curve(sim.human_trials(later, 2 * s + 1), "c")
        rows = compare_curves({"a": a, "b": b, "c": c}).to_pylist()
        similar += rows[0]["similar"] is True
        different += rows[1]["similar"] is False
    return similar, different


if __name__ == "__main__":
    for n in (20, 200):
        images, samples = coverage(n)
        print(f"{n} images: the 95 % interval covers R in {images}/100 (images resampled), "
              f"{samples}/100 (samples resampled)", flush=True)
    for midpoint in (0.35, 0.5, 0.6):
        anchored, free = sim.right_end_bias(midpoint)
        print(f"data to Δv 0.67, midpoint {midpoint}: bias of R {anchored:+.4f} (anchored at "
              f"chance), {free:+.4f} (free)", flush=True)
    similar, different = similarity()
    print(f"human curves: identical called similar in {similar}/40, shifted called different in "
          f"{different}/40", flush=True)
