"""Δv of the smallest setting of each discretised blur that changes a 32 px image.

At 32 px a 3 x 3 box or median kernel, a 3-tap motion streak and one 1 px glass-blur shuffle
are the weakest settings of those corruptions that change the image at all; their Δv says how
much of the low Δv range the corruption can reach (docs/cifar.md, "Δv coverage at 32 px"). Scored
with ``vif_small`` (enlarge) on the first N shared CIFAR-10 test images.

    python benchmarks/bench_smallest_blur_32px.py [--n 40] [--data ../shared/data/cifar10]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import emit  # noqa: E402

from vcrbench.corruptions.registry import corrupt_uint8  # noqa: E402
from vcrbench.data.cifar_pack import load  # noqa: E402
from vcrbench.vif import delta_v, vif_small  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: The weakest setting of each corruption that changes a 32 px image.
SMALLEST = (
    ("blur", {"ksize": 3.0}),
    ("median_blur", {"ksize": 3.0}),
    ("motion_blur", {"radius": 1.0, "sigma": 3.0}),
    ("glass_blur", {"sigma": 0.0, "max_delta": 1.0, "iterations": 1.0}),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/cifar10"))
    parser.add_argument("--cache")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    _, test = load(args.data, args.cache)
    clean = test.images[: args.n]
    lines = [f"first {len(clean)} shared CIFAR-10 test images, Δv by vif_small(enlarge)", "",
             "| corruption | setting | Δv min | median | max |", "|---|---|---:|---:|---:|"]
    for name, point in SMALLEST:
        params = {k: np.full(len(clean), v) for k, v in point.items()}
        out = corrupt_uint8(name, clean, params, list(range(len(clean))), torch.device("cpu"))
        dv = delta_v(vif_small(clean.transpose(0, 3, 1, 2), out.transpose(0, 3, 1, 2)))
        lines.append(f"| {name} | {point} | {dv.min():.3f} | {np.median(dv):.3f} | "
                     f"{dv.max():.3f} |")
    emit("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
