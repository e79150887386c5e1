"""CIFAR-10-C-style errors of a trained CIFAR-10 model (``model.pt`` of bench_cifar_train.py).

The test images (all, or ``--images`` of them, the same number per class) are corrupted at 32 px
with each ImageNet-C corruption at CIFAR-10-C's five severities (``vcrbench.corruptions.cifar_c``;
noise seeds keyed by corruption, severity and image), classified, and the error per corruption and
severity is written with the mean corruption error (the unnormalised mean over the corruptions'
five severities that AugMix and REVa report as CIFAR-10-C "mCE" / mean error) and a 95 % bootstrap
interval of that mean over the test images (paired: one image resample for all corruptions).

    python benchmarks/bench_cifar_c.py --model /tmp/wrn/model.pt --images 2000 --out wrn-c.md
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
from cifar_data import load  # noqa: E402

from vcrbench.core.seeding import noise_seed  # noqa: E402
from vcrbench.corruptions.cifar_c import cifar_c_severities  # noqa: E402
from vcrbench.corruptions.registry import corrupt_uint8  # noqa: E402
from vcrbench.corruptions.sets import expand_sets  # noqa: E402
from vcrbench.training.scratch import ScratchRecipe, new_state, predict  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BOOTSTRAP = 2000


def balanced_subset(labels: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of ``n`` images, the same number per class, drawn with ``seed``."""
    classes = np.unique(labels)
    per = n // len(classes)
    rng = np.random.default_rng(seed)
    return np.sort(np.concatenate([rng.choice(np.flatnonzero(labels == c), per, replace=False)
                                   for c in classes]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/cifar10"))
    parser.add_argument("--cache")
    parser.add_argument("--images", type=int, help="a class-balanced subset of the test set")
    parser.add_argument("--corruptions", default="imagenet-c")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    start = time.perf_counter()
    device = torch.device(args.device)
    checkpoint = torch.load(args.model, map_location="cpu", weights_only=True)
    recipe = ScratchRecipe.from_dict({**checkpoint["recipe"], "precision": args.precision})
    model = new_state(recipe, device).model
    model.load_state_dict(checkpoint["state_dict"])
    _, test = load(args.data, args.cache)
    index = (np.arange(len(test)) if args.images is None
             else balanced_subset(test.labels, args.images, args.seed))
    images, labels = test.images[index], test.labels[index]
    ids = [test.image_ids[i] for i in index]

    def wrong(batch: np.ndarray) -> np.ndarray:
        p = predict(model, torch.as_tensor(batch, device=device), recipe)
        return (p.argmax(1).cpu().numpy() != labels)

    clean_wrong = wrong(images)
    errors: dict[str, np.ndarray] = {}  # corruption -> (5, N) bool
    for corruption in expand_sets(args.corruptions.split(",")):
        rows = []
        for severity, point in enumerate(cifar_c_severities(corruption), start=1):
            params = {k: np.full(len(images), v) for k, v in point.items()}
            seeds = [noise_seed(args.seed, f"cifar-c/{corruption}/{severity}", i)
                     for i in range(len(images))]
            corrupted = corrupt_uint8(corruption, images, params, seeds, torch.device("cpu"))
            rows.append(wrong(corrupted))
        errors[corruption] = np.stack(rows)
        print(json.dumps({"corruption": corruption,
                          "error": [round(float(r.mean()), 4) for r in rows],
                          "elapsed_s": round(time.perf_counter() - start)}), flush=True)

    per_image = np.mean([e.mean(0) for e in errors.values()], axis=0)  # (N,) mean error
    rng = np.random.default_rng(args.seed)
    draws = rng.integers(0, len(per_image), (BOOTSTRAP, len(per_image)))
    boot = per_image[draws].mean(1)
    mean = float(per_image.mean())
    lo, hi = np.percentile(boot, [2.5, 97.5])
    lines = [f"Model `{args.model}` ({recipe.architecture}), {len(images)} test images "
             f"({'all' if args.images is None else 'class-balanced subset'}), "
             f"precision {args.precision}; machine: {json.dumps(machine(device))}", "",
             "| corruption | s1 | s2 | s3 | s4 | s5 | mean |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for corruption, e in errors.items():
        lines.append(f"| {corruption} | " + " | ".join(f"{100 * r.mean():.1f}" for r in e)
                     + f" | {100 * e.mean():.1f} |")
    lines += ["", f"Clean error: {100 * clean_wrong.mean():.2f} %. Mean corruption error over "
              f"{len(errors)} corruptions x 5 severities: {100 * mean:.2f} % (95 % interval over "
              f"the test images: {100 * lo:.2f}–{100 * hi:.2f}). Wall time "
              f"{time.perf_counter() - start:.0f} s; first image id {ids[0]}."]
    emit("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
