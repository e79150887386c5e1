"""Which Δv at 32 px ranks corrupted images as the paper's Δv at 224 px does?

The paper's VIF needs a 4-level steerable pyramid, which needs 72 px; a 32 x 32 image allows
2 levels. Candidates for Δv at 32 px (:data:`CANDIDATES`):

- ``pyramid2``: the paper's VIF with a 2-level pyramid (4 sub-bands, the port's windows by
  position: 3, 3, 5, 5);
- ``enlarge224``: the paper's VIF (4 levels) on both images enlarged 7x to 224 px (bicubic, for
  scoring only);
- ``enlarge96``: the same at 3x (96 px, the smallest multiple of 32 the 4 levels accept);
- ``enlarge72``: the same on a 72 px enlargement (2.25x, the pyramid's minimum).

Evidence: shared ImageNet images prepared at 224 px are corrupted with the VCR set's 14
corruptions at parameters drawn as a run draws them (``visual`` spacing); the paper's Δv is
computed at 224 px; the clean and corrupted images are then reduced to 32 px (area average,
the way CIFAR's 32 px images were made from larger photographs) and each candidate scores the
reduced pair. Per corruption, the Spearman rank correlation of each candidate with the paper's
Δv says how well it keeps the order of visual change, and the mean absolute difference how far
its values are from the paper's (Δv's bins are absolute, so a shifted scale moves samples between
bins). The pooled rows put all corruptions together: one Δv axis must also order different
corruptions as the paper's does. Written as a Markdown table.

    python calibration/dv_at_32px.py --images 40 --samples 60 --out results/calibration/dv32.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from scipy.stats import spearmanr

from vcrbench.corruptions.registry import corrupt_uint8
from vcrbench.corruptions.sampling import sample_parameters
from vcrbench.corruptions.sets import expand_sets
from vcrbench.data.datasets import prepare_image
from vcrbench.vif import delta_v, vif

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "data" / "imagenet-sample"
CANDIDATES = ("pyramid2", "enlarge224", "enlarge96", "enlarge72")


def reduce(images: np.ndarray, side: int) -> np.ndarray:
    """(B, H, W, 3) uint8 -> (B, side, side, 3) uint8 by area averaging (PIL BOX)."""
    return np.stack([np.asarray(Image.fromarray(i).resize((side, side), Image.Resampling.BOX))
                     for i in images])


def enlarge(images: np.ndarray, side: int) -> np.ndarray:
    """(B, h, w, 3) uint8 -> (B, side, side, 3) uint8, bicubic (PIL)."""
    return np.stack([np.asarray(Image.fromarray(i).resize((side, side),
                                                          Image.Resampling.BICUBIC))
                     for i in images])


def chw(images: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2))


def candidate_dv(name: str, clean: np.ndarray, corrupted: np.ndarray) -> np.ndarray:
    """Δv of 32 px pairs (B, 32, 32, 3) uint8 by candidate ``name``: (B,)."""
    if name == "pyramid2":
        return delta_v(vif(chw(clean), chw(corrupted), levels=2))
    side = int(name.removeprefix("enlarge"))
    return delta_v(vif(chw(enlarge(clean, side)), chw(enlarge(corrupted, side))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=40)
    parser.add_argument("--samples", type=int, default=60, help="samples per corruption")
    parser.add_argument("--corruptions", default="vcr")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(2)

    files = sorted(SAMPLE.glob("*.JPEG"))
    if not files:
        sys.exit(f"no images in {SAMPLE}: this tool needs ../shared/data/imagenet-sample")
    rng = np.random.default_rng(args.seed)
    chosen = rng.choice(len(files), args.images, replace=False)
    prepared = np.stack([prepare_image(files[i]) for i in sorted(chosen)])
    rows = []
    start = time.perf_counter()
    for corruption in expand_sets(args.corruptions):
        which = rng.integers(0, len(prepared), args.samples)
        points = [sample_parameters(corruption, rng) for _ in range(args.samples)]
        params = {k: np.array([p[k] for p in points]) for k in points[0]}
        seeds = rng.integers(0, 2**62, args.samples)
        clean = prepared[which]
        corrupted = corrupt_uint8(corruption, clean, params, seeds, torch.device("cpu"))
        paper = delta_v(vif(chw(clean), chw(corrupted)))
        small_clean, small_corrupted = reduce(clean, 32), reduce(corrupted, 32)
        row = {"corruption": corruption, "dv224_range": f"{paper.min():.2f}–{paper.max():.2f}",
               "paper": paper}
        for name in CANDIDATES:
            dv = candidate_dv(name, small_clean, small_corrupted)
            row[name] = float(spearmanr(paper, dv).statistic)
            row[f"{name}_mae"] = float(np.abs(dv - paper).mean())
            row[f"{name}_dv"] = dv
        rows.append(row)
        print(corruption, {c: round(row[c], 3) for c in CANDIDATES},
              f"{time.perf_counter() - start:.0f} s", flush=True)
    lines = ["Spearman correlation with the paper's Δv at 224 px (mean absolute difference of Δv "
             "in brackets).", "",
             "| corruption | Δv at 224 px | " + " | ".join(CANDIDATES) + " |",
             "|---|---|" + "---:|" * len(CANDIDATES)]
    lines += [f"| {r['corruption']} | {r['dv224_range']} | "
              + " | ".join(f"{r[c]:.3f} ({r[c + '_mae']:.3f})" for c in CANDIDATES) + " |"
              for r in rows]
    for label, reducer in (("mean", np.mean), ("worst", np.min)):
        lines.append(f"| **{label}** | | " + " | ".join(
            f"**{reducer([r[c] for r in rows]):.3f}**" for c in CANDIDATES) + " |")
    paper_all = np.concatenate([r["paper"] for r in rows])
    pooled = []
    for c in CANDIDATES:
        dv_all = np.concatenate([r[f"{c}_dv"] for r in rows])
        pooled.append(f"**{spearmanr(paper_all, dv_all).statistic:.3f} "
                      f"({np.abs(dv_all - paper_all).mean():.3f})**")
    lines.append("| **all corruptions pooled** | | " + " | ".join(pooled) + " |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
