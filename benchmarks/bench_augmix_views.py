"""AugMix views of CIFAR-10 training images: the batched views (vcrbench.training.augmix_batch)
against the image-by-image reference, equality and images per second, one thread.

    python benchmarks/bench_augmix_views.py --n 2048

Prints the machine, then a JSON line: images per second of each path (two views per image, as
one training step makes), the speed-up, and whether the views are identical.
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

from vcrbench.data.cifar_pack import load  # noqa: E402
from vcrbench.training.augmix import AUGMIX_OPS, augmix_view, draw_augmix  # noqa: E402
from vcrbench.training.augmix_batch import augmix_views  # noqa: E402
from vcrbench.training.spec import AugMixSettings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2048, help="training images (two views each)")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/cifar10"))
    parser.add_argument("--cache", help="npz cache of a class folder's decoded arrays")
    args = parser.parse_args()
    torch.set_num_threads(1)
    train, _ = load(args.data, args.cache)
    images = torch.as_tensor(train.images[:args.n]).permute(0, 3, 1, 2).contiguous()
    draws = [draw_augmix(np.random.default_rng([0, i, v]), AUGMIX_OPS, AugMixSettings())
             for v in range(2) for i in range(args.n)]
    twice = torch.cat([images, images])
    start = time.perf_counter()
    batched = torch.cat([augmix_views(twice[s:s + args.batch], draws[s:s + args.batch])
                         for s in range(0, len(twice), args.batch)])
    batched_s = time.perf_counter() - start
    start = time.perf_counter()
    reference = torch.stack([augmix_view(twice[i], draws[i]) for i in range(len(twice))])
    reference_s = time.perf_counter() - start
    print(json.dumps({"machine": machine(torch.device("cpu"))}))
    print(json.dumps({"images": args.n, "views": len(twice), "batch": args.batch,
                      "batched_images_per_s": round(args.n / batched_s, 1),
                      "reference_images_per_s": round(args.n / reference_s, 1),
                      "speedup": round(reference_s / batched_s, 2),
                      "identical": bool(torch.equal(batched, reference))}))


if __name__ == "__main__":
    main()
