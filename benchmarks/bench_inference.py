"""Inference throughput (images/s) of registry models, and optionally their sample accuracy.

Throughput is end to end through :func:`vcrbench.models.predict`: uint8 (N, 224, 224, 3)
random images (seed 0) -> resize/normalise -> forward -> softmax -> top-1 and 16-class
decision, after one warm-up batch. ``--accuracy`` also measures clean top-1 on the shared
1,000-image ImageNet sample and 16-class accuracy on its 207 images of the 16 categories.

Examples::

    python benchmarks/bench_inference.py                      # Lite0/1/2, CPU, 2 threads
    python benchmarks/bench_inference.py --accuracy
    python benchmarks/bench_inference.py --device cuda --precision bf16 \\
        --models "torchvision:resnet50?weights=none" efficientnet-lite0 --images 4096
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from vcrbench.models import load_model, predict, resolve_device

SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "imagenet-sample"
LITES = ["efficientnet-lite0", "efficientnet-lite1", "efficientnet-lite2"]


def throughput(
    name: str, device: torch.device, precision: str, batch_size: int, n_images: int
) -> float:
    """Images per second of ``predict`` on ``n_images`` random images."""
    model = load_model(name, device)
    images = np.random.default_rng(0).integers(0, 256, (n_images, 224, 224, 3), dtype=np.uint8)
    predict(model, images[:batch_size], batch_size=batch_size, precision=precision, device=device)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    predict(model, images, batch_size=batch_size, precision=precision, device=device)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return n_images / (time.perf_counter() - start)


def sample_accuracy(
    name: str, device: torch.device, precision: str, batch_size: int
) -> tuple[float, float]:
    """(top-1 on the 1,000 sample images, 16-class accuracy on its 207 16-category images)."""
    from vcrbench.data.datasets import prepare_image
    from vcrbench.data.imagenet import label_of_filename
    from vcrbench.data.imagenet16 import label_to_category16

    files = sorted(SAMPLE.glob("*.JPEG"))
    labels = np.array([label_of_filename(f) for f in files])
    images = np.stack([prepare_image(f) for f in files])
    out = predict(
        load_model(name, device), images, batch_size=batch_size, precision=precision, device=device
    )
    category = label_to_category16()[labels]
    in16 = category >= 0
    acc16 = float((out["top1_16"][in16] == category[in16]).mean())
    return float((out["top1"] == labels).mean()), acc16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=LITES)
    parser.add_argument("--device", default="cpu", help="auto | cpu | cuda")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--images", type=int, default=256, help="images timed per model")
    parser.add_argument(
        "--accuracy", action="store_true", help=f"also measure accuracy on {SAMPLE}"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    if device.type == "cuda":
        where = torch.cuda.get_device_name(device)
    else:
        where = f"CPU, {args.threads} threads"
    print(f"# {where}, torch {torch.__version__}, batch {args.batch_size}, {args.images} images\n")
    header = "| model | device | precision | images/s | ms/image |"
    rule = "|---|---|---|---:|---:|"
    if args.accuracy:
        header += " top-1 (1000) | 16-class (207) |"
        rule += "---:|---:|"
    print(header)
    print(rule)
    for name in args.models:
        rate = throughput(name, device, args.precision, args.batch_size, args.images)
        row = f"| {name} | {device.type} | {args.precision} | {rate:.1f} | {1000 / rate:.1f} |"
        if args.accuracy:
            if SAMPLE.is_dir():
                top1, acc16 = sample_accuracy(name, device, args.precision, args.batch_size)
                row += f" {top1:.3f} | {acc16:.3f} |"
            else:
                row += " n/a | n/a |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
