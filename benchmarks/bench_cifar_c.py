"""CIFAR-10-C-style errors of a trained CIFAR-10 model (``model.pt`` of bench_cifar_train.py).

The test images (all, or ``--images`` of them, the same number per class) are corrupted at 32 px
with each ImageNet-C corruption at CIFAR-10-C's five severities (``vcrbench.corruptions.cifar_c``;
noise seeds keyed by corruption, severity and image), classified, and the error per corruption and
severity is written with the mean corruption error (the unnormalised mean over the corruptions'
five severities that AugMix and REVa report as CIFAR-10-C "mCE" / mean error) and a 95 % bootstrap
interval of that mean over the test images (paired: one image resample for all corruptions).
``--pgd-steps K`` adds the error on white-box PGD images (ε 8/255, step 2/255, K steps);
``--baseline`` evaluates a second model on the same images, with paired intervals of the
differences.

    python benchmarks/bench_cifar_c.py --model /tmp/wrn/model.pt --images 2000 --out wrn-c.md
    python benchmarks/bench_cifar_c.py --model reva/model.pt --baseline std/model.pt \
        --images 2000 --pgd-steps 10
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import emit, machine  # noqa: E402
from cifar_data import load  # noqa: E402
from cifar_models import load_bench_model  # noqa: E402

from vcrbench.core.seeding import noise_seed  # noqa: E402
from vcrbench.corruptions.cifar_c import cifar_c_severities  # noqa: E402
from vcrbench.corruptions.registry import corrupt_uint8  # noqa: E402
from vcrbench.corruptions.sets import expand_sets  # noqa: E402
from vcrbench.training.scratch import predict  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BOOTSTRAP = 2000


def balanced_subset(labels: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of ``n`` images, the same number per class, drawn with ``seed``."""
    classes = np.unique(labels)
    per = n // len(classes)
    rng = np.random.default_rng(seed)
    return np.sort(np.concatenate([rng.choice(np.flatnonzero(labels == c), per, replace=False)
                                   for c in classes]))


def per_image_errors(model, recipe, images, labels, ids, corrupted, args, device, log) -> dict:
    """Per-image errors of one model: ``clean`` (N,), corruption -> (5, N), and with
    ``--pgd-steps`` ``pgd`` (N,) on its own white-box PGD images; bool arrays."""
    def wrong(batch: np.ndarray) -> np.ndarray:
        p = predict(model, torch.as_tensor(batch, device=device), recipe)
        return (p.argmax(1).cpu().numpy() != labels)

    errors = {"clean": wrong(images), "corruptions": {}}
    for corruption, versions in corrupted.items():
        errors["corruptions"][corruption] = np.stack([wrong(v) for v in versions])
        log({"corruption": corruption, "error": [round(float(r.mean()), 4)
                                                 for r in errors["corruptions"][corruption]]})
    if args.pgd_steps:
        from cifar_models import pgd_images

        float_model, float_recipe = model, replace(recipe, precision="fp32")
        adversarial = pgd_images(float_model, float_recipe, images, labels, ids,
                                 steps=args.pgd_steps, eps=args.pgd_eps, alpha=2 / 255,
                                 seed=args.seed, device=device)
        errors["pgd"] = wrong(adversarial)
        log({"pgd_steps": args.pgd_steps, "error": round(float(errors["pgd"].mean()), 4)})
    return errors


def interval(per_image: np.ndarray, draws: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95 % percentile bootstrap interval of a per-image quantity (``draws``: (B, N)
    image indices, the same for every quantity: paired)."""
    lo, hi = np.percentile(per_image[draws].mean(1), [2.5, 97.5])
    return float(per_image.mean()), float(lo), float(hi)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--baseline", help="a second model.pt, evaluated on the same corrupted "
                                           "images: paired intervals of model - baseline")
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/cifar10"))
    parser.add_argument("--cache")
    parser.add_argument("--images", type=int, help="a class-balanced subset of the test set")
    parser.add_argument("--corruptions", default="imagenet-c")
    parser.add_argument("--pgd-steps", type=int, default=0,
                        help="also the error on white-box PGD images (eps --pgd-eps, step 2/255)")
    parser.add_argument("--pgd-eps", type=float, default=8 / 255)
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    start = time.perf_counter()
    device = torch.device(args.device)

    def log(row: dict) -> None:
        print(json.dumps({**row, "elapsed_s": round(time.perf_counter() - start)}), flush=True)

    _, test = load(args.data, args.cache)
    index = (np.arange(len(test)) if args.images is None
             else balanced_subset(test.labels, args.images, args.seed))
    images, labels = test.images[index], test.labels[index]
    ids = [test.image_ids[i] for i in index]
    corrupted = {}
    for corruption in expand_sets(args.corruptions.split(",")):
        versions = []
        for severity, point in enumerate(cifar_c_severities(corruption), start=1):
            params = {k: np.full(len(images), v) for k, v in point.items()}
            seeds = [noise_seed(args.seed, f"cifar-c/{corruption}/{severity}", i)
                     for i in range(len(images))]
            versions.append(corrupt_uint8(corruption, images, params, seeds,
                                          torch.device("cpu")))
        corrupted[corruption] = versions
    paths = {"model": args.model, **({"baseline": args.baseline} if args.baseline else {})}
    results, recipes = {}, {}
    for role, path in paths.items():
        model, recipe = load_bench_model(path, device, args.precision)
        recipes[role] = recipe
        log({"evaluating": role, "model": path})
        results[role] = per_image_errors(model, recipe, images, labels, ids, corrupted, args,
                                         device, log)

    draws = np.random.default_rng(args.seed).integers(0, len(images), (BOOTSTRAP, len(images)))

    def summaries(errors: dict) -> dict[str, np.ndarray]:
        """Per-image quantities: clean error, mean corruption error (over the corruptions' five
        severities), PGD error."""
        out = {"clean error": errors["clean"].astype(float),
               "mean corruption error": np.mean([e.mean(0) for e in
                                                 errors["corruptions"].values()], axis=0)}
        if "pgd" in errors:
            out[f"PGD error (eps {args.pgd_eps * 255:.0f}/255, {args.pgd_steps} steps)"] = (
                errors["pgd"].astype(float))
        return out

    subset = "all" if args.images is None else "class-balanced subset"
    lines = [f"{len(images)} test images ({subset}), precision {args.precision}; machine: "
             f"{json.dumps(machine(device))}", ""]
    for role, path in paths.items():
        errors = results[role]["corruptions"]
        lines += [f"**{role}**: `{path}` ({recipes[role].architecture}, method "
                  f"{recipes[role].method})", "",
                  "| corruption | s1 | s2 | s3 | s4 | s5 | mean |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for corruption, e in errors.items():
            lines.append(f"| {corruption} | " + " | ".join(f"{100 * r.mean():.1f}" for r in e)
                         + f" | {100 * e.mean():.1f} |")
        lines.append("")
    lines += ["| quantity | " + " | ".join(paths) + (" | model − baseline (paired) |"
                                                     if args.baseline else ""),
              "|---|" + "---:|" * (len(paths) + bool(args.baseline))]
    per_role = {role: summaries(results[role]) for role in paths}
    for quantity in per_role["model"]:
        cells = [per_role[role][quantity] for role in paths]
        row = [f"{100 * m:.2f} [{100 * lo:.2f}, {100 * hi:.2f}]"
               for m, lo, hi in (interval(c, draws) for c in cells)]
        if args.baseline:
            m, lo, hi = interval(cells[0] - cells[1], draws)
            row.append(f"{100 * m:+.2f} [{100 * lo:+.2f}, {100 * hi:+.2f}]")
        lines.append(f"| {quantity} | " + " | ".join(row) + " |")
    if args.baseline:
        lower = sum(results["model"]["corruptions"][c].mean()
                    < results["baseline"]["corruptions"][c].mean() for c in corrupted)
        lines += ["", f"The model's error is lower on {lower} of {len(corrupted)} corruptions."]
    lines += ["", f"Errors in %, 95 % percentile bootstrap intervals over the test images "
              f"({BOOTSTRAP} resamples, the same for every column: the difference is paired). "
              f"Wall time {time.perf_counter() - start:.0f} s; first image id {ids[0]}."]
    emit("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
