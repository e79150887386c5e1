"""Benchmark of the estimation stage: one spline fit and a 200-replicate bootstrap at M = 40.

Run::

    python benchmarks/bench_estimation.py               # timings (a few seconds)
    python benchmarks/bench_estimation.py --coverage    # + coverage of the 95 % interval of R
                                                        #   (100 data sets × 3 curves, minutes)

Data: N uniform Δv samples, success ~ Bernoulli(s(Δv)) for a known monotone curve s.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from vcrbench.curves.binning import bin_rates
from vcrbench.curves.bootstrap import estimate_curve
from vcrbench.curves.splines import fit_many, fit_monotone_spline

CURVES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "linear": lambda v: 0.9 - 0.8 * v,
    "logistic": lambda v: 0.8 / (1.0 + np.exp((v - 0.6) * 12.0)),
    "step": lambda v: np.where(v < 0.5, 0.9, 0.2),
}
FINE = np.linspace(0.0, 1.0, 200_001)


def simulate(curve, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0.0, 1.0, n)
    return dv, rng.uniform(size=n) < curve(dv)


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def timings(n: int, bins: int, min_count: int, n_boot: int) -> None:
    curve = CURVES["logistic"]
    dv, ok = simulate(curve, n, 0)
    r = bin_rates(dv, ok, bins, min_count)
    p = r.present
    x, y, w = r.centers[p], r.rates[p], r.counts[p]
    t_sic = best_of(lambda: fit_monotone_spline(x, y, w, 0.8), 5)
    lam = fit_monotone_spline(x, y, w, 0.8).lam
    t_one = best_of(lambda: fit_monotone_spline(x, y, w, 0.8, lam=lam), 20)
    t_batch = best_of(lambda: fit_many([x] * 200, [y] * 200, [w] * 200, [0.8] * 200, lam), 3)
    t_boot = best_of(
        lambda: estimate_curve(
            dv, ok, bins=bins, min_count=min_count, anchor=0.8, n_boot=n_boot, seed=0
        ),
        3,
    )
    print(f"N = {n}, M = {bins}, L = {min_count}, present bins = {int(p.sum())}, λ = {lam:.3g}")
    print(f"  fit with SIC choice of λ (29 candidates, one LP): {1e3 * t_sic:8.1f} ms")
    print(f"  fit with fixed λ (one LP, one solver call):       {1e3 * t_one:8.1f} ms")
    print(f"  fixed-λ fits in 25-fit block LPs, per fit:        {1e3 * t_batch / 200:8.1f} ms")
    print(f"  estimate_curve, B = {n_boot} (fit + bootstrap + bands): {t_boot:8.2f} s")


def coverage(n: int, bins: int, min_count: int, n_boot: int, datasets: int) -> None:
    for name, curve in CURVES.items():
        anchor = float(curve(np.array(0.0)))
        r_true = float(np.trapezoid(curve(FINE), FINE))
        hits, errs, widths = 0, [], []
        t = time.perf_counter()
        for s in range(datasets):
            dv, ok = simulate(curve, n, 1000 + s)
            e = estimate_curve(
                dv, ok, bins=bins, min_count=min_count, anchor=anchor, n_boot=n_boot, seed=s
            )
            hits += e.area_lo <= r_true <= e.area_hi
            errs.append(e.area - r_true)
            widths.append(e.area_hi - e.area_lo)
        print(
            f"  {name:8s} covered {hits}/{datasets}  bias {np.mean(errs):+.4f}  "
            f"rmse {np.sqrt(np.mean(np.square(errs))):.4f}  mean width {np.mean(widths):.4f}  "
            f"({time.perf_counter() - t:.0f} s)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--bins", type=int, default=40)
    ap.add_argument("--min-count", type=int, default=20)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--coverage", action="store_true", help="also measure interval coverage")
    ap.add_argument("--datasets", type=int, default=100)
    a = ap.parse_args()
    from bench_output import machine_line

    print(machine_line())
    timings(a.n, a.bins, a.min_count, a.n_boot)
    if a.coverage:
        print(f"coverage of the 95 % interval of R ({a.datasets} data sets, B = {a.n_boot}):")
        coverage(a.n, a.bins, a.min_count, a.n_boot, a.datasets)


if __name__ == "__main__":
    main()
