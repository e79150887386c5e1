"""Δv coverage of the uniform (VCR) sample against the ImageNet-C severity sample (paper Table 2).

For every corruption: N samples drawn by the pipeline's own stage functions
(:func:`vcrbench.evaluation.samples.make_samples`,
:func:`vcrbench.evaluation.scoring.score_shard`) on the 1,000 real ImageNet images of
``../shared/data/imagenet-sample``; coverage = fraction of 40 equal-width Δv bins holding at
least 20 samples. ImageNet-C corruptions are also sampled in ``imagenet-c`` mode
(N/5 images at each of the five severities).

    python benchmarks/bench_coverage.py [--n 2000] [--workers 2] [--corruptions a,b,...]
                                        [--spacing visual|linear|adaptive] [--no-imagenet-c]
                                        [--seed 0] [--save DIR] [--min-count 20]
                                        [--pilot-share 0.1]

``--spacing adaptive`` scores each corruption's pilot first (the workflow's rule pilot:
:func:`vcrbench.corruptions.adaptive.pilot_design` with
:func:`vcrbench.evaluation.samples.pilot_samples`), then draws the run from it; the table adds
the reachable bins, their coverage, the unreachable Δv and the pilot's scoring time as a share of
the run's.

Prints a Markdown table; run on a quiet machine (about 10 minutes for all 14 at N = 2000,
2 cores).
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "imagenet-sample"
BINS, MIN_COUNT = 40, 20
#: Published coverage (VCR paper, Table 2): corruption -> (ImageNet-C, VCR test set).
PAPER = {
    "brightness": (0.590, 1.000),
    "gaussian_blur": (0.564, 0.974),
    "defocus_blur": (0.538, 0.923),
    "shot_noise": (0.462, 0.590),
    "frost": (0.436, 1.000),
    "gaussian_noise": (0.436, 0.872),
    "impulse_noise": (0.385, 0.641),
    "motion_blur": (0.333, 0.974),
    "glass_blur": (0.333, 0.949),
}


def _dv(job: tuple[str, str, int, int, str, int, float]
        ) -> tuple[str, str, np.ndarray, dict[str, np.ndarray], float, dict | None]:
    corruption, mode, n, shard_size, spacing, seed, share = job
    import torch

    torch.set_num_threads(1)
    from design_samples import adaptive_pilot, scored_shards

    from vcrbench.corruptions import CORRUPTIONS
    from vcrbench.data.datasets import build_index

    index, _ = build_index("imagefolder", str(SAMPLE))
    ids = index.column("image_id").to_pylist()
    extra, pilot = {}, None
    if mode == "uniform" and spacing == "adaptive":
        extra, pilot = adaptive_pilot(ids, index, corruption, seed=seed, n=n, share=share,
                                      bins=BINS)
    start = time.perf_counter()
    values, params = [], []
    for samples, scored in scored_shards(
        ids, index, corruption, seed=seed, mode=mode, n=n, shard_size=shard_size,
        spacing=spacing if mode == "uniform" else "visual", **extra,
    ):
        values.append(scored.column("dv").to_numpy())
        params.append({p: samples.column(p).to_numpy() for p in CORRUPTIONS[corruption].parameters})
    joined = {p: np.concatenate([shard[p] for shard in params]) for p in params[0]}
    return (corruption, mode, np.concatenate(values), joined, time.perf_counter() - start,
            pilot)


def main() -> None:
    from vcrbench.corruptions import CORRUPTIONS
    from vcrbench.curves.binning import coverage

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--corruptions", default=",".join(CORRUPTIONS))
    parser.add_argument("--spacing", default="visual", choices=["visual", "linear", "adaptive"])
    parser.add_argument("--min-count", type=int, default=MIN_COUNT,
                        help="L (20; scale it with N: 5 at N = 500)")
    parser.add_argument("--pilot-share", type=float, default=0.1)
    parser.add_argument("--no-imagenet-c", action="store_true", help="only the uniform sample")
    parser.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    parser.add_argument("--save", help="folder to save each sample's Δv and parameters to (.npz)")
    args = parser.parse_args()
    if not SAMPLE.is_dir():
        raise SystemExit(f"{SAMPLE} is absent")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    names = args.corruptions.split(",")
    jobs = [(c, "uniform", args.n, 250, args.spacing, args.seed, args.pilot_share)
            for c in names]
    jobs += [
        (c, "imagenet-c", args.n, 250, args.spacing, args.seed, args.pilot_share)
        for c in names
        if CORRUPTIONS[c].imagenet_c_severities is not None and not args.no_imagenet_c
    ]
    results: dict[tuple[str, str], tuple[np.ndarray, float]] = {}
    pilots: dict[str, dict] = {}
    with ProcessPoolExecutor(args.workers) as pool:
        for corruption, mode, dv, params, seconds, pilot in pool.map(_dv, jobs):
            results[(corruption, mode)] = (dv, seconds)
            if pilot is not None:
                pilots[corruption] = pilot
            if args.save:
                Path(args.save).mkdir(parents=True, exist_ok=True)
                np.savez(Path(args.save) / f"{corruption}-{mode}.npz", dv=dv, **params)
    from bench_output import machine_line

    print(machine_line())
    print(
        f"N = {args.n} per corruption and mode, {args.spacing} spacing, {BINS} bins, "
        f"L = {args.min_count}, "
        f"{SAMPLE.name} (1,000 ImageNet images), seed {args.seed}\n"
    )
    print(
        "| corruption | coverage, uniform (ours) | coverage, ImageNet-C severities (ours) "
        "| paper: ImageNet-C | paper: VCR | Δv min–max (uniform) | s per 1000 samples |"
    )
    print("|---|---|---|---|---|---|---|")
    for c in names:
        dv, seconds = results[(c, "uniform")]
        imagenet_c = results.get((c, "imagenet-c"))
        c_cov = f"{coverage(imagenet_c[0], BINS, args.min_count):.3f}" if imagenet_c else "–"
        paper_c, paper_vcr = PAPER.get(c, (None, None))
        print(
            f"| {c} | {coverage(dv, BINS, args.min_count):.3f} | {c_cov} | "
            f"{paper_c if paper_c is not None else '–'} | "
            f"{paper_vcr if paper_vcr is not None else '–'} | "
            f"{dv.min():.3f}–{dv.max():.3f} | {1000 * seconds / dv.size:.1f} |"
        )
    if pilots:
        from vcrbench.curves.reachability import bin_of, reached_bins, unreachable_ranges

        print("\n| corruption | pilot samples | reachable bins | coverage of reachable "
              "| unreachable Δv | pilot time / run time |\n|---|---:|---:|---:|---|---:|")
        for c in names:
            dv, seconds = results[(c, "uniform")]
            reach = reached_bins(pilots[c]["dv"], dv, BINS)  # as the coverage table
            counts = np.bincount(bin_of(dv, BINS), minlength=BINS)
            print(f"| {c} | {len(pilots[c]['dv'])} | {reach.sum()} | "
                  f"{(counts[reach] >= args.min_count).mean():.3f} | "
                  f"{', '.join(unreachable_ranges(~reach)) or '—'} | "
                  f"{pilots[c]['seconds'] / seconds:.2f} |")


if __name__ == "__main__":
    main()
