"""Seconds per fine-tuning epoch of each method (standard, augmix, reva_minus, reva), and the
cost of crafting the PGD counterparts, as a Markdown table.

EfficientNet-Lite0 with its last MBConv block, head and classifier learning (``last:4``), batch
16, on the first ``--images`` training images of ``../shared/data/imagenet-sample`` (outside the
16 human categories), torch with ``--threads`` threads on the CPU. The methods run one after
the other in one process, so their ratios are comparable; the absolute numbers depend on the
machine and on what else runs on it. REVa's targeted corruptions are ``--targeted`` at
ImageNet-C severity 3; the counterparts of reva_minus and reva are crafted once (``--steps``
PGD steps at the default ε = 8/255, α = 2/255) and their time reported separately.

    python benchmarks/bench_finetune_methods.py --images 64 --steps 10
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from vcrbench.data.datasets import build_index, load_images  # noqa: E402
from vcrbench.models import load_model  # noqa: E402
from vcrbench.training.adversarial import craft_counterparts  # noqa: E402
from vcrbench.training.loop import train_epoch  # noqa: E402
from vcrbench.training.spec import PgdSettings, RevaSettings, TrainingSpec  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument("--steps", type=int, default=10, help="PGD steps of the counterparts")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--targeted", nargs="+",
                        default=["gaussian_noise", "defocus_blur", "frost"])
    parser.add_argument("--data", default=str(REPO.parent / "shared/data/imagenet-sample"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    index, _ = build_index("imagefolder", args.data, exclude_categories16=True,
                           limit=args.images)
    device = torch.device("cpu")
    pgd = PgdSettings(steps=args.steps)
    base = TrainingSpec(
        name="bench", base="efficientnet-lite0", corruption=None, fraction=0.5,
        spacing="linear", epochs=1, batch_size=16, trainable="last:4", batchnorm="frozen",
        lr=0.001, momentum=0.9, weight_decay=0.0, nesterov=False, schedule="constant",
        step_size=2, gamma=0.1, seed=0,
        reva=RevaSettings(targeted=tuple(args.targeted), severity=3, pgd=pgd),
    )
    start = time.perf_counter()
    images = load_images(index.column("path").to_pylist())
    adversarial = craft_counterparts(images, index.column("label").to_numpy(),
                                     index.column("image_id").to_pylist(),
                                     load_model("efficientnet-lite0"), pgd, seed=0)
    crafting = time.perf_counter() - start
    rows = [f"| PGD counterparts ({args.steps} steps), once | {crafting:.1f} | "
            f"{crafting / len(images):.3f} |"]
    for method in ("standard", "augmix", "reva_minus", "reva"):
        spec = dataclasses.replace(base, method=method)
        start = time.perf_counter()
        train_epoch(spec, index, 1, None, device,
                    adversarial=adversarial if method.startswith("reva") else None)
        seconds = time.perf_counter() - start
        rows.append(f"| epoch, {method} | {seconds:.1f} | {seconds / len(images):.3f} |")
    from bench_output import machine_line

    print(machine_line())
    print(f"{len(images)} images, {args.threads} thread(s), Lite0 last:4, batch 16\n")
    print("| step | seconds | seconds per image |\n|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
