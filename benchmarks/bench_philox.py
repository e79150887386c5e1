"""Throughput of the counter-based draws (``vcrbench.core.philox``) against numpy's per-sample
generators (today's pixel noise, ``corruptions.generators.numpy_generator``), side by side in one
process: uniform and normal float32 and Poisson draws of ``(3, side, side)`` per sample, a batch
of ``--batch`` samples, fastest of ``--repeats`` runs::

    python benchmarks/bench_philox.py --side 224 --batch 16 --threads 1
    python benchmarks/bench_philox.py --device cuda --batch 256   # the draws on a GPU

Poisson rates: ``shot`` is shot noise's ``x * lam`` at ImageNet-C's severity 1 (``lam = 60``,
``x`` uniform pixels in [0, 1]: rates 0–60, both methods), then a constant 3 and 1000.
numpy runs on the CPU, one sample after another, whatever ``--device``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import machine_line  # noqa: E402

from vcrbench.core import philox  # noqa: E402
from vcrbench.corruptions.generators import numpy_generator  # noqa: E402


def fastest(work, repeats: int, device: torch.device) -> float:
    """The fastest of ``repeats`` runs of ``work()`` (after one warm-up), in seconds."""
    work()
    best = float("inf")
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        work()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--side", type=int, default=224)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    shape = (3, args.side, args.side)
    per_sample = int(np.prod(shape))
    seeds = torch.arange(1000, 1000 + args.batch, dtype=torch.int64, device=device)
    host_seeds = seeds.tolist()
    pixels = torch.rand((args.batch, *shape), generator=torch.Generator().manual_seed(0),
                        dtype=torch.float64)
    rates = {"shot": pixels * 60.0, "3": torch.full_like(pixels, 3.0),
             "1000": torch.full_like(pixels, 1000.0)}

    def numpy_draw(kind: str, rate: np.ndarray | None = None):
        def work():
            for i, seed in enumerate(host_seeds):
                rng = numpy_generator(seed)
                if kind == "poisson":
                    rng.poisson(rate[i])
                else:
                    getattr(rng, kind)(shape, dtype=np.float32)
        return work

    cases = [
        ("uniform float32", lambda: philox.uniform(seeds, shape, 1), numpy_draw("random")),
        ("normal float32", lambda: philox.normal(seeds, shape, 1),
         numpy_draw("standard_normal")),
    ]
    for name, rate in rates.items():
        on_device = rate.to(device)
        cases.append((f"poisson rate {name}", lambda r=on_device: philox.poisson(seeds, r, 1),
                      numpy_draw("poisson", rate.numpy())))
    print(machine_line(args.device))
    print(f"draws of {shape} per sample, batch {args.batch}, {args.threads} CPU thread(s), "
          f"philox on {device}, numpy on the CPU; fastest of {args.repeats}")
    print("| draw | philox draws/s | philox ms/sample | numpy draws/s | numpy ms/sample |")
    print("|---|---|---|---|---|")
    draws = args.batch * per_sample
    for name, ours, theirs in cases:
        a, b = fastest(ours, args.repeats, device), fastest(theirs, args.repeats,
                                                            torch.device("cpu"))
        print(f"| {name} | {draws / a:.3g} | {1000 * a / args.batch:.3f} | {draws / b:.3g} | "
              f"{1000 * b / args.batch:.3f} |")


if __name__ == "__main__":
    main()
