"""Torch operations per batch of each corruption at two batch sizes (is the code batched?).

A corruption that loops over its samples in Python, or draws per sample on the host, runs more
torch operations the larger the batch; a batched one runs the same number at every batch size.
For each corruption this counts the operator events of one ``apply_corruption`` call under
``torch.profiler`` (CPU activity: every ATen operator call, nested ones included) at two batch
sizes, on real 224 px images where ``../shared`` has them, with parameters drawn over the whole
domain (``uniform_samples``), and prints a Markdown table with the ratio of the two counts
(the goal: within 10 % of 1) and the milliseconds per sample of the larger batch on the torch
threads asked for.

    python benchmarks/bench_corruption_ops.py                       # the 14 VCR corruptions
    python benchmarks/bench_corruption_ops.py --only gaussian_noise --batches 16 256
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch
from bench_corruptions import load_images
from torch.profiler import ProfilerActivity, profile

from vcrbench.core.allocator import restart_with_job_allocator
from vcrbench.core.seeding import noise_seed
from vcrbench.corruptions import apply_corruption, get_corruption, uniform_samples
from vcrbench.corruptions.sets import expand_sets


def batch_of(name: str, images: np.ndarray, size: int) -> tuple[torch.Tensor, dict, list[int]]:
    """``size`` images (repeating the given ones), their drawn parameters and noise seeds."""
    spec = get_corruption(name)
    index = np.arange(size) % len(images)
    x = torch.from_numpy(images[index]).permute(0, 3, 1, 2).float().div(255.0)
    points = uniform_samples(name, 7, range(size))
    params = {p: np.array([point[p] for point in points]) for p in spec.parameters}
    return x, params, [noise_seed(7, name, i) for i in range(size)]


def count_events(name: str, images: np.ndarray, size: int) -> tuple[int, float]:
    """(operator events of one call, ms per sample of a second, unprofiled call)."""
    x, params, seeds = batch_of(name, images, size)
    apply_corruption(name, x, params, seeds)  # warm-up: lazy loads (frost photographs)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        apply_corruption(name, x, params, seeds)
    events = len(prof.events())
    start = time.perf_counter()
    apply_corruption(name, x, params, seeds)
    return events, (time.perf_counter() - start) * 1e3 / size


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=["vcr"], help="corruptions or sets")
    parser.add_argument("--batches", nargs=2, type=int, default=[16, 256])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    small, large = args.batches
    images = load_images(16)
    print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"{args.threads} thread(s), 224 px, batches {small} and {large}\n")
    print(f"| corruption | events at {small} | events at {large} | ratio | "
          f"ms/sample at {large} |")
    print("|---|---|---|---|---|")
    for name in expand_sets(args.only):
        n_small, _ = count_events(name, images, small)
        n_large, ms = count_events(name, images, large)
        print(f"| {name} | {n_small} | {n_large} | {n_large / n_small:.2f} | {ms:.2f} |",
              flush=True)


if __name__ == "__main__":
    restart_with_job_allocator()  # the allocator settings of the workflow's jobs
    main()
