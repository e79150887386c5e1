"""Δv coverage of each corruption at 32 px, on the shared CIFAR-10 test images.

For every corruption: N samples, each a test image drawn uniformly, parameters drawn over the
corruption's whole domain as a 32 px run draws them (``sampling.spacing``, the blur lengths
scaled by 32 / 224: ``sampling.uniform_samples(side=32)``; ``--unscaled``: as a 224 px run draws
them), pixel noise from the
sample's keyed seed; corrupted at 32 px and scored with ``vif_small`` (default: the paper's VIF
on 224 px bicubic enlargements, docs/cifar.md); coverage = fraction of 40 equal-width Δv bins
holding at least 20 samples (the VCR paper's Table 2 rule, as ``bench_coverage.py`` at 224 px).

``--spacing adaptive`` (:mod:`vcrbench.corruptions.adaptive`): the pilot is scored first on its
own test images (share ``--pilot-share`` of N), then the run's N; the table adds the pilot's
reachable bins, the coverage of those, the Δv ranges it finds unreachable and the pilot's
scoring time as a share of the run's.

    python benchmarks/bench_coverage_32px.py [--n 2000] [--corruptions vcr] [--method enlarge]
        [--unscaled] [--spacing visual|linear|adaptive] [--pilot-share 0.1] [--threads 1]
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
from vcrbench.corruptions import adaptive  # noqa: E402
from vcrbench.corruptions.registry import corrupt_uint8  # noqa: E402
from vcrbench.corruptions.sampling import uniform_samples  # noqa: E402
from vcrbench.corruptions.sets import expand_sets  # noqa: E402
from vcrbench.curves import reachability  # noqa: E402
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
    parser.add_argument("--spacing", default="visual", choices=("visual", "linear", "adaptive"))
    parser.add_argument("--pilot-share", type=float, default=adaptive.PILOT_SHARE)
    parser.add_argument("--min-count", type=int, default=MIN_COUNT,
                        help="L (20; scale it with N: 5 at N = 500)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's)")
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/cifar10"))
    parser.add_argument("--cache")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--unscaled", action="store_true",
                        help="draw the blur lengths as at 224 px (the registry's domains)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    side = 224 if args.unscaled else 32
    start = time.perf_counter()
    _, test = load(args.data, args.cache)
    rows = []
    ids = [str(k) for k in range(len(test))]

    def score(corruption, points, images, seeds):
        params = {k: np.array([p[k] for p in points]) for k in points[0]}
        clean = test.images[images]
        dv = []
        for at in range(0, len(points), 250):  # bounded memory: 250 enlargements at a time
            part = slice(at, at + 250)
            corrupted = corrupt_uint8(corruption, clean[part],
                                      {k: v[part] for k, v in params.items()}, seeds[part],
                                      torch.device("cpu"))
            dv.append(delta_v(vif_small(clean[part].transpose(0, 3, 1, 2),
                                        corrupted.transpose(0, 3, 1, 2), method=args.method)))
        return np.concatenate(dv)

    for corruption in expand_sets(args.corruptions.split(",")):
        rng = np.random.default_rng(np.random.SeedSequence([args.seed, 0x32]))
        which = rng.integers(0, len(test), args.n)
        seeds = [noise_seed(args.seed, corruption, i) for i in range(args.n)]
        pilot_s, reachable, extra = 0.0, None, {}
        if args.spacing == "adaptive":
            t0 = time.perf_counter()

            def pilot_score(points, first, corruption=corruption):
                count = first + len(points)
                images = [int(k) for k in adaptive.pilot_images(ids, args.seed, corruption,
                                                                 count)[first:]]
                return score(corruption, points, images,
                             adaptive.pilot_noise_seeds(args.seed, corruption, count)[first:])

            pilot = adaptive.pilot_design(corruption, args.seed, args.n, pilot_score, side=side,
                                          share=args.pilot_share, bins=BINS)
            pilot_s = time.perf_counter() - t0
            points = adaptive.adaptive_samples(corruption, args.seed, args.n, pilot, side=side,
                                               bins=BINS)
            reachable = pilot["dv"]
            extra = {"pilot_n": int(len(pilot["dv"]))}
        else:
            points = uniform_samples(corruption, args.seed, range(args.n), args.spacing,
                                     side=side)
        t0 = time.perf_counter()
        dv = score(corruption, points, which, seeds)
        run_s = time.perf_counter() - t0
        counts = np.bincount(np.minimum((dv * BINS).astype(int), BINS - 1), minlength=BINS)
        empty = sparse_ranges(counts < args.min_count)
        row = {"corruption": corruption, "coverage": float((counts >= args.min_count).mean()),
               "dv_min": float(dv.min()), "dv_median": float(np.median(dv)),
               "dv_max": float(dv.max()), "sparse_bins": empty}
        if reachable is not None:
            reachable = reachability.reached_bins(reachable, dv, BINS)  # as the coverage table
            row.update(extra, reachable_bins=int(reachable.sum()),
                       reachable_coverage=float((counts >= args.min_count)[reachable].mean()),
                       unreachable=reachability.unreachable_ranges(~reachable),
                       pilot_cost=pilot_s / run_s)
        rows.append(row)
        print(json.dumps({**rows[-1], "elapsed_s": round(time.perf_counter() - start)}),
              flush=True)
    lines = [f"N = {args.n} per corruption on the shared CIFAR-10 test images, spacing "
             f"{args.spacing}, parameters drawn for side {side} px, Δv by "
             f"vif_small(method={args.method!r}); {BINS} bins, at least "
             f"{args.min_count} samples; machine {json.dumps(machine(torch.device('cpu')))}; "
             f"{time.perf_counter() - start:.0f} s", "",
             "| corruption | coverage | Δv min | median | max | bins under 20 samples |",
             "|---|---:|---:|---:|---:|---|"]
    lines += [f"| {r['corruption']} | {r['coverage']:.3f} | {r['dv_min']:.3f} | "
              f"{r['dv_median']:.3f} | {r['dv_max']:.3f} | {', '.join(r['sparse_bins']) or '—'} |"
              for r in rows]
    if args.spacing == "adaptive":
        lines += ["", "| corruption | pilot samples | reachable bins | coverage of reachable "
                  "| unreachable Δv | pilot time / run time |", "|---|---:|---:|---:|---|---:|"]
        lines += [f"| {r['corruption']} | {r['pilot_n']} | {r['reachable_bins']} | "
                  f"{r['reachable_coverage']:.3f} | {', '.join(r['unreachable']) or '—'} | "
                  f"{r['pilot_cost']:.2f} |" for r in rows]
    emit("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
