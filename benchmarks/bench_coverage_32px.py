"""Δv coverage of each corruption at 32 px, on the shared CIFAR-10 test images.

For every corruption: N samples, each a test image drawn uniformly, parameters drawn over the
corruption's whole domain as a 32 px run draws them (``sampling.spacing``, the blur lengths
scaled by 32 / 224: ``sampling.uniform_samples(side=32)``; ``--unscaled``: as a 224 px run draws
them), pixel noise from the
sample's keyed seed; corrupted at 32 px and scored with ``vif_small`` (default: the paper's VIF
on 224 px bicubic enlargements, docs/cifar.md); coverage = fraction of 40 equal-width Δv bins
holding at least 20 samples (the VCR paper's Table 2 rule, as ``bench_coverage.py`` at 224 px).

    python benchmarks/bench_coverage_32px.py [--n 2000] [--corruptions vcr] [--method enlarge]
        [--unscaled]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import emit, machine  # noqa: E402

from vcrbench.core.seeding import noise_seed  # noqa: E402
from vcrbench.corruptions.registry import corrupt_uint8  # noqa: E402
from vcrbench.corruptions.sampling import uniform_samples  # noqa: E402
from vcrbench.corruptions.sets import expand_sets  # noqa: E402
from vcrbench.data.cifar_pack import load  # noqa: E402
from vcrbench.vif import delta_v, vif_small  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BINS, MIN_COUNT = 40, 20


def sparse_ranges(sparse: np.ndarray) -> list[str]:
    """Runs of consecutive sparse bins as Δv ranges, e.g. ``["0.000–0.075", "0.975–1.000"]``."""
    ranges, b = [], 0
    while b < len(sparse):
        if sparse[b]:
            end = b
            while end + 1 < len(sparse) and sparse[end + 1]:
                end += 1
            ranges.append(f"{b / len(sparse):.3f}–{(end + 1) / len(sparse):.3f}")
            b = end
        b += 1
    return ranges


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--corruptions", default="vcr")
    parser.add_argument("--method", default="enlarge", choices=("enlarge", "pyramid"))
    parser.add_argument("--spacing", default="visual", choices=("visual", "linear"))
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/cifar10"))
    parser.add_argument("--cache")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--unscaled", action="store_true",
                        help="draw the blur lengths as at 224 px (the registry's domains)")
    args = parser.parse_args()
    side = 224 if args.unscaled else 32
    start = time.perf_counter()
    _, test = load(args.data, args.cache)
    rows = []
    for corruption in expand_sets(args.corruptions.split(",")):
        rng = np.random.default_rng(np.random.SeedSequence([args.seed, 0x32]))
        which = rng.integers(0, len(test), args.n)
        points = uniform_samples(corruption, args.seed, range(args.n), args.spacing, side=side)
        params = {k: np.array([p[k] for p in points]) for k in points[0]}
        seeds = [noise_seed(args.seed, corruption, i) for i in range(args.n)]
        clean = test.images[which]
        corrupted = corrupt_uint8(corruption, clean, params, seeds, torch.device("cpu"))
        dv = delta_v(vif_small(clean.transpose(0, 3, 1, 2), corrupted.transpose(0, 3, 1, 2),
                               method=args.method))
        counts = np.bincount(np.minimum((dv * BINS).astype(int), BINS - 1), minlength=BINS)
        empty = sparse_ranges(counts < MIN_COUNT)
        rows.append({"corruption": corruption, "coverage": float((counts >= MIN_COUNT).mean()),
                     "dv_min": float(dv.min()), "dv_median": float(np.median(dv)),
                     "dv_max": float(dv.max()), "sparse_bins": empty})
        print(json.dumps({**rows[-1], "elapsed_s": round(time.perf_counter() - start)}),
              flush=True)
    lines = [f"N = {args.n} per corruption on the shared CIFAR-10 test images, spacing "
             f"{args.spacing}, parameters drawn for side {side} px, Δv by "
             f"vif_small(method={args.method!r}); {BINS} bins, at least "
             f"{MIN_COUNT} samples; machine {json.dumps(machine(torch.device('cpu')))}; "
             f"{time.perf_counter() - start:.0f} s", "",
             "| corruption | coverage | Δv min | median | max | bins under 20 samples |",
             "|---|---:|---:|---:|---:|---|"]
    lines += [f"| {r['corruption']} | {r['coverage']:.3f} | {r['dv_min']:.3f} | "
              f"{r['dv_median']:.3f} | {r['dv_max']:.3f} | {', '.join(r['sparse_bins']) or '—'} |"
              for r in rows]
    emit("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
