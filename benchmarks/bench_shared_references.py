"""Benchmark of VIF with shared references: a scoring job's VIF with each clean image's share
(its pyramid, GSM field, eigenvalues and ``den``) computed once per chunk
(``vcrbench.vif.vif(..., reference_index=...)`` in one call over the shard; ``score_shard``
makes the same call per block of 256 samples) against once per pair (what it did before), on
the pairs of real samples shards.

Run::

    python benchmarks/bench_shared_references.py                        # the default run's shard
    python benchmarks/bench_shared_references.py --dataset cifar10 --samples-per-image 5

``--dataset builtin``: the default run's images (the photographs shipped in installed packages,
224 px), a uniform samples shard of ``--samples`` samples (the default run: 400 a shard over its
few images, so each image has tens of samples). ``--dataset cifar10``: ``--images`` test images
of ../shared/data/cifar10 at 32 px, each at ``--samples-per-image`` samples (REVa's ImageNet-C
shards hold the five severities of each image), scored on 224 px enlargements
(``scoring.small_images: enlarge``). Each round times both ways in one process, one after the
other, alternating which goes first; the values are compared (largest difference printed: the
batched linear algebra may round the last bits differently). One thread by default, as a
scoring job of a 2-core run has. The machine (CPU model, ISA extensions, an instruction-set cap
in force) is printed with the numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))


def shard_pairs(args: argparse.Namespace):
    """(image ids, clean images (N, 3, S, S), corrupted images (N, 3, S, S)) of one shard."""
    from vcrbench.data.datasets import build_index
    from vcrbench.data.prepared import DecodedImages
    from vcrbench.evaluation.samples import make_samples
    from vcrbench.evaluation.scoring import corrupted_batches

    if args.dataset == "builtin":
        index, _ = build_index("builtin")
        samples = make_samples(index.column("image_id").to_pylist(), args.corruption, seed=0,
                               mode="uniform", n=args.samples, shard_size=args.samples, shard=0)
    else:
        folder = REPO.parent / "shared" / "data" / "cifar10" / "test"
        index, _ = build_index("imagefolder", str(folder), classes="cifar10", size="native",
                               per_class=args.images // 10)
        ids = index.column("image_id").to_pylist()
        samples = make_samples(ids, args.corruption, seed=0, mode="imagenet-c",
                               n=len(ids) * args.samples_per_image,
                               shard_size=len(ids) * args.samples_per_image, shard=0, side=32)
    clean = DecodedImages(index)
    refs, dists = [], []
    for _, original, corrupted in corrupted_batches(samples, clean, batch_size=64):
        refs.append(original)
        dists.append(corrupted)
    return (samples.column("image_id").to_pylist(), np.concatenate(refs).transpose(0, 3, 1, 2),
            np.concatenate(dists).transpose(0, 3, 1, 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", choices=("builtin", "cifar10"), default="builtin")
    parser.add_argument("--corruption", default="gaussian_noise")
    parser.add_argument("--samples", type=int, default=400, help="builtin: samples in the shard")
    parser.add_argument("--images", type=int, default=200, help="cifar10: test images")
    parser.add_argument("--samples-per-image", type=int, default=5, help="cifar10")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import torch

    from vcrbench.vif import vif_any_size

    torch.set_num_threads(args.threads)
    ids, refs, dists = shard_pairs(args)
    order, first, index = np.unique(ids, return_index=True, return_inverse=True)
    unique = refs[first]
    ways = {
        "per pair": lambda: vif_any_size(refs, dists),
        "shared": lambda: vif_any_size(unique, dists, reference_index=index),
    }
    vif_any_size(refs[:2], dists[:2])  # warm-up: the first call pays for torch's set-up
    times: dict[str, list[float]] = {name: [] for name in ways}
    values = {}
    for r in range(args.rounds):
        for name in (list(ways) if r % 2 == 0 else list(ways)[::-1]):
            start = time.perf_counter()
            values[name] = ways[name]()
            times[name].append(time.perf_counter() - start)
    n = len(ids)
    from bench_output import machine_line

    print(machine_line())
    print(f"{args.dataset}: {n} samples of {args.corruption} over {len(order)} images "
          f"({n / len(order):.1f} a image), side {refs.shape[-1]} px")
    for name, t in times.items():
        t = np.array(t) * 1000 / n
        print(f"  {name:9s} {np.median(t):7.2f} ms a sample (median of {args.rounds}; "
              f"{t.min():.2f} to {t.max():.2f})")
    ratio = np.median(times["per pair"]) / np.median(times["shared"])
    print(f"  speed-up {ratio:.2f}x; largest |difference| of the values "
          f"{np.abs(values['shared'] - values['per pair']).max():.1e}")


if __name__ == "__main__":
    main()
