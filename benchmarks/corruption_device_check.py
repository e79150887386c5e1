"""The corruptions on a device, in one short command (about a minute for the 14 VCR corruptions
on one H200)::

    PYTHONPATH=src python3 benchmarks/corruption_device_check.py            # --device cuda
    PYTHONPATH=src python3 benchmarks/corruption_device_check.py --device cpu --batch 32

For each corruption, on real 224 px images where ``../shared`` has them (else skimage's), with
parameters drawn over the whole domain, it prints one Markdown row with:

- ``same bytes``: two calls on the same batch give the same bytes (must);
- ``batch-free``: each sample of a batch of ``--batch`` made alone, and inside a batch of 5
  (must equal its bytes in the large batch: a sample's bytes may not depend on its batch);
- ``ops at 16 / B``: torch operator events of one call at batch 16 and at ``--batch`` (equal
  for batched code; the profiler's CPU view, on CUDA the launches);
- ``vs cpu``: on another device than the CPU, the share of values that differ from the CPU's
  bytes and the largest difference in grey levels (float round-off: a few values by one level);
- ``ms/sample``: the best of 3 calls at ``--batch`` (synchronised), and samples/s.

Exits non-zero when a must-equal check fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).parent))
from bench_corruption_ops import batch_of  # noqa: E402
from bench_corruptions import load_images  # noqa: E402
from bench_output import machine_line  # noqa: E402

from vcrbench.core.allocator import restart_with_job_allocator  # noqa: E402
from vcrbench.corruptions import apply_corruption  # noqa: E402
from vcrbench.corruptions.sets import expand_sets  # noqa: E402


def synchronise(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def corrupt(name: str, x: torch.Tensor, params: dict, seeds: list[int],
            rows: slice | list[int] | None = None) -> torch.Tensor:
    """``apply_corruption`` on the selected rows of a batch (all by default)."""
    if rows is not None:
        index = list(range(len(seeds)))[rows] if isinstance(rows, slice) else list(rows)
        x = x[index]
        params = {k: v[index] for k, v in params.items()}
        seeds = [seeds[i] for i in index]
    return apply_corruption(name, x, params, seeds)


def events(name: str, x: torch.Tensor, params: dict, seeds: list[int]) -> int:
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        corrupt(name, x, params, seeds)
    return len(prof.events())


def check(name: str, images: np.ndarray, device: torch.device, batch: int) -> tuple[str, bool]:
    """One corruption's row and whether its must-equal checks passed."""
    x, params, seeds = batch_of(name, images, batch)
    x = x.to(device)
    first = corrupt(name, x, params, seeds)
    same = torch.equal(first, corrupt(name, x, params, seeds))
    alone = all(torch.equal(corrupt(name, x, params, seeds, [i]), first[i:i + 1])
                for i in (0, batch // 2, batch - 1))
    inside = torch.equal(corrupt(name, x, params, seeds, slice(3, 8)), first[3:8])
    small = batch_of(name, images, 16)
    small_ops = events(name, small[0].to(device), small[1], small[2])
    large_ops = events(name, x, params, seeds)
    if device.type != "cpu":
        cpu = corrupt(name, x.cpu(), params, seeds).to(torch.int16)
        gap = (first.cpu().to(torch.int16) - cpu).abs()
        versus = f"{float((gap > 0).float().mean()):.2e}, max {int(gap.max())}"
    else:
        versus = "-"
    best = float("inf")
    for _ in range(3):
        synchronise(device)
        start = time.perf_counter()
        corrupt(name, x, params, seeds)
        synchronise(device)
        best = min(best, time.perf_counter() - start)
    ok = same and alone and inside
    row = (f"| {name} | {'yes' if same else 'NO'} | {'yes' if alone and inside else 'NO'} | "
           f"{small_ops} / {large_ops} | {versus} | {1000 * best / batch:.3f} | "
           f"{batch / best:,.0f} |")
    return row, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--only", nargs="*", default=["vcr"], help="corruptions or sets")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("--device cuda: torch sees no CUDA GPU here; use --device cpu", file=sys.stderr)
        return 2
    print(machine_line(args.device))
    images = load_images(16)
    print(f"\n| corruption | same bytes | batch-free | ops at 16 / {args.batch} | vs cpu "
          f"(share differing, max levels) | ms/sample at {args.batch} | samples/s |")
    print("|---|---|---|---|---|---|---|")
    failed = []
    for name in expand_sets(args.only):
        try:
            row, ok = check(name, images, device, args.batch)
        except Exception as error:  # report and go on: one broken corruption, one row
            row, ok = f"| {name} | ERROR: {type(error).__name__}: {error} | | | | | |", False
        print(row, flush=True)
        if not ok:
            failed.append(name)
    print("FAILED: " + ", ".join(failed) if failed else "\nall must-equal checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    restart_with_job_allocator()  # the allocator settings of the workflow's jobs
    sys.exit(main())
