"""Top-1 agreement of a reduced precision (bf16) with fp32 on the corrupted images of a scored
shard of a finished run, made again from its samples shard as a predict job makes them.

A scored shard stored without pixels (the default) holds checksums, not images: the images
are regenerated from the samples shard and the run's prepared store on ``--device`` and
checked against those checksums (:func:`vcrbench.evaluation.scoring.regenerate_images`), then
classified once in fp32 and once in ``--other``; prints both throughputs and the agreement::

    python benchmarks/precision_agreement.py RUN/results/bench gaussian_noise \\
        --model efficientnet-lite0 --device cuda --batch 512 --other bf16

``benchmarks/gpu_check.py`` runs it on the shard its Snakemake step wrote.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


def agreement(results: Path, corruption: str, *, shard: int = 0, model: str,
              device: str = "cpu", batch: int = 64, engine: str = "eager",
              other: str = "bf16") -> dict:
    """Classify the regenerated images of ``results/scored/<corruption>/shard-<shard>``
    in fp32 and in ``other``: {images, seconds per precision, differ, agreement}."""
    from vcrbench.core.tables import read_table
    from vcrbench.data.prepared import PreparedImages, store_path
    from vcrbench.evaluation.predictions import Inference
    from vcrbench.evaluation.scoring import regenerate_images

    scored = read_table(results / "scored" / corruption / f"shard-{shard}.parquet")
    if "image" in scored.column_names:
        from vcrbench.evaluation.scoring import decode_images

        images = decode_images(scored.column("image"))
    else:
        index_path = results / "data" / "index.parquet"
        clean = PreparedImages(store_path(index_path), read_table(index_path))
        samples = read_table(results / "samples" / corruption / f"shard-{shard}.parquet")
        images = regenerate_images(scored, samples, clean, batch_size=batch, device=device)
    top1, seconds = {}, {}
    for precision in ("fp32", other):
        inference = Inference(model, device, batch, precision, engine=engine)
        inference.decisions(images[:8])  # load and warm up
        start = time.perf_counter()
        top1[precision] = inference.decisions(images)["top1"].to_numpy()
        seconds[precision] = time.perf_counter() - start
    differ = int(np.sum(top1["fp32"] != top1[other]))
    return {"images": len(images), "seconds": seconds, "differ": differ,
            "agreement": 1 - differ / len(images)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path, help="a run's results folder (RUN/results/NAME)")
    parser.add_argument("corruption")
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--model", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--engine", default="eager")
    parser.add_argument("--other", default="bf16", help="the precision compared with fp32")
    args = parser.parse_args()
    result = agreement(args.results, args.corruption, shard=args.shard, model=args.model,
                       device=args.device, batch=args.batch, engine=args.engine,
                       other=args.other)
    n = result["images"]
    for precision, seconds in result["seconds"].items():
        print(f"{precision}: {n} images in {seconds:.2f} s ({n / seconds:.0f} images/s)")
    print(f"top-1 agreement {args.other} / fp32 on {args.corruption} shard {args.shard} "
          f"({args.model}, {args.device}): {result['agreement']:.4f} "
          f"({result['differ']} of {n} differ)")


if __name__ == "__main__":
    main()
