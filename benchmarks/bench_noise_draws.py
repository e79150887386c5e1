"""Host time of the per-sample work of scoring and inference jobs that runs on the job's threads
(``vcrbench.core.threads``): the pixel-noise draws (numpy, one generator per sample) and the
BLAKE2b checksums of corrupted images, per sample at 1 thread and at ``--threads``, in one
process (side by side)::

    python benchmarks/bench_noise_draws.py --side 224 --samples 256 --threads 2
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
from bench_output import machine  # noqa: E402

from vcrbench.corruptions.noise import _draw  # noqa: E402
from vcrbench.evaluation.scoring import pixel_checksums  # noqa: E402


def per_sample_ms(work, n: int, repeats: int) -> float:
    """The fastest of ``repeats`` runs of ``work()``, in ms per sample."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return 1000 * best / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--side", type=int, default=224)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    seeds = list(range(1000, 1000 + args.samples))
    like = torch.zeros(1)
    images = np.random.default_rng(0).integers(
        0, 256, (args.samples, args.side, args.side, 3), dtype=np.uint8)
    shape = (3, args.side, args.side)
    rows = {}
    for threads in (1, args.threads):
        torch.set_num_threads(threads)
        rows[threads] = {
            "normal_ms": per_sample_ms(lambda: _draw(seeds, shape, "standard_normal", like),
                                       args.samples, args.repeats),
            "uniform_ms": per_sample_ms(lambda: _draw(seeds, shape, "random", like),
                                        args.samples, args.repeats),
            "checksum_ms": per_sample_ms(lambda: pixel_checksums(images), args.samples,
                                         args.repeats),
        }
    print(json.dumps({"machine": machine(torch.device("cpu")), "side": args.side,
                      "samples": args.samples, "per_sample_ms": {
                          str(k): {m: round(v, 3) for m, v in r.items()}
                          for k, r in rows.items()}}))


if __name__ == "__main__":
    main()
