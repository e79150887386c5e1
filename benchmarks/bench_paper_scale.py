"""The per-corruption chain at a chosen N: prepare, corrupt + VIF, infer, write; and the pipeline
through Snakemake against plain eager PyTorch on the same forward passes.

Two modes, both on the shared ImageNet images (``../shared/data/imagenet-sample``, reused
cyclically when N exceeds them) or on synthetic ImageNet-sized JPEGs (``--synthetic``: 500 x 375
px, quality 90, like ImageNet's validation images):

``chain`` (default): the library functions the workflow's jobs call, in one process, stage by
stage, printing each stage's throughput, the end-to-end wall time, the peak resident memory and
the bytes on disk per sample with and without stored pixels::

    python benchmarks/bench_paper_scale.py --n 2000 --corruptions gaussian_noise gaussian_blur
    python benchmarks/bench_paper_scale.py --device cuda --n 50000 --images 50000 --synthetic \\
        --model "torchvision:resnet50?weights=none" --batch 512     # a GPU machine

``snakemake``: the pipeline from scratch through the per-bin rates (index, prepared images,
samples, scoring, clean and corrupted predictions, outcomes and rates) in a fresh folder, timed
as a whole, then -- in the same run, on the same machine state -- the same number of forward
passes in plain eager PyTorch with decoding (every image file decoded, resized and cropped,
then the model's eager forward pass in batches, on all the job's threads). Prints both wall
times and their ratio::

    python benchmarks/bench_paper_scale.py --mode snakemake --images 400 --n 800 \\
        --corruptions gaussian_noise gaussian_blur --cores 2

Extra ``--config KEY=VALUE`` pairs are passed to Snakemake (e.g. ``inference.engine=...``);
``--no-baseline`` skips the eager baseline and ``--keep DIR`` keeps the run's folder there
(``benchmarks/gpu_check.py`` does both). On CUDA the chain also prints the peak GPU memory, and
each shard's progress (with the seconds of each stage so far) goes to standard error as it
finishes, so a run cut short still tells; ``--profile FILE`` writes ``torch.profiler``'s
operator tables of one shard (host and GPU time) to FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO.parent / "shared" / "data" / "imagenet-sample"


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's finished children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    """Peak resident memory of this process and its finished children, MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def image_files(n_images: int, synthetic: bool, folder: Path) -> list[Path]:
    """``n_images`` image files: the shared sample's (cycled as copies when more are asked for,
    each copy a file of its own so that it is decoded again), or synthetic 500 x 375 JPEGs in
    WNID-named files (labels cycle over the 1,000 classes)."""
    from PIL import Image

    from vcrbench.data.imagenet import wnids

    folder.mkdir(parents=True, exist_ok=True)
    if synthetic:
        rng = np.random.default_rng(0)
        files = []
        base = rng.integers(0, 256, (12, 16, 3), np.uint8)
        for i in range(n_images):
            # smooth random images compress like photographs, unlike white noise
            small = np.clip(base.astype(int) + rng.integers(-40, 41, base.shape), 0, 255)
            image = Image.fromarray(small.astype(np.uint8)).resize((500, 375), Image.BICUBIC)
            path = folder / f"{wnids()[i % 1000]}_{i:06d}.JPEG"
            image.save(path, quality=90)
            files.append(path)
        return files
    shared = sorted(SAMPLE.glob("*.JPEG"))
    if not shared:
        raise SystemExit(f"no images in {SAMPLE}; use --synthetic")
    files = []
    for i in range(n_images):
        source = shared[i % len(shared)]
        copy = folder / (source.name if i < len(shared)
                         else f"{source.stem.split('_')[0]}_copy{i:06d}.JPEG")
        shutil.copyfile(source, copy)
        files.append(copy)
    return files


def chain(args: argparse.Namespace) -> None:
    """Every stage of the per-corruption chain, in one process, timed."""
    import pyarrow as pa
    import torch

    from vcrbench.core.jobs import set_threads
    from vcrbench.core.tables import write_table
    from vcrbench.data.prepared import PreparedImages, write_store
    from vcrbench.evaluation.predictions import Inference, predict_scored
    from vcrbench.evaluation.samples import make_samples
    from vcrbench.evaluation.scoring import score_shard
    from vcrbench.models import resolve_device

    set_threads(args.threads)
    device = resolve_device(args.device)
    work = Path(tempfile.mkdtemp(prefix="bench-paper-scale-"))
    try:
        files = image_files(args.images, args.synthetic, work / "images")
        ids = [f"img{i:06d}" for i in range(len(files))]
        index = pa.table({"image_id": ids, "path": [str(f) for f in files]})
        rows = []

        start = time.perf_counter()
        write_store([str(f) for f in files], work / "index-prepared.npy", threads=args.threads)
        clean = PreparedImages(work / "index-prepared.npy", index)
        rows.append(("prepare (decode, resize, crop)", len(files), time.perf_counter() - start))

        inference = Inference.from_config(args.model, str(device), {
            "batch_size": args.batch, "precision": args.precision, **dict(args.inference)},
            None)
        inference.decisions(clean.images(ids[: min(8, len(ids))]))  # load + warm up
        total_start = time.perf_counter()
        bytes_with = bytes_without = 0
        n_total = 0
        for corruption in args.corruptions:
            for shard in range(-(-args.n // args.shard_size)):
                profiler = shard_profiler(args.profile, device) if (
                    args.profile and corruption == args.corruptions[0] and shard == 1) else None
                samples = make_samples(ids, corruption, seed=0, mode="uniform", n=args.n,
                                       shard_size=args.shard_size, shard=shard)
                t = time.perf_counter()
                scored = score_shard(samples, clean, batch_size=args.vif_batch, device=device,
                                     store_images=False)
                rows.append((f"corrupt + VIF {corruption}", samples.num_rows,
                             time.perf_counter() - t))
                t = time.perf_counter()
                predictions = predict_scored(scored, inference, samples=samples, clean=clean,
                                             corruption_device=str(device),
                                             batch_size=args.vif_batch)
                rows.append((f"re-corrupt + infer {corruption}", samples.num_rows,
                             time.perf_counter() - t))
                t = time.perf_counter()
                write_table(scored, work / "scored.parquet")
                write_table(predictions, work / "predictions.parquet")
                rows.append(("write tables", samples.num_rows, time.perf_counter() - t))
                bytes_without += (work / "scored.parquet").stat().st_size
                bytes_without += (work / "predictions.parquet").stat().st_size
                if args.measure_pixels and shard == 0:
                    with_pixels = score_shard(samples, clean, batch_size=args.vif_batch,
                                              device=device, store_images=True)
                    write_table(with_pixels, work / "scored-pixels.parquet")
                    bytes_with = (work / "scored-pixels.parquet").stat().st_size / samples.num_rows
                if profiler is not None:
                    write_profile(profiler, args.profile, device)
                n_total += samples.num_rows
                elapsed = time.perf_counter() - total_start
                stages = {}
                for stage, _, seconds in rows[1:]:
                    stage = " ".join(stage.split(" ")[:3]) if "+" in stage else stage
                    stages[stage] = stages.get(stage, 0.0) + seconds
                print(f"{corruption} shard {shard}: {n_total} samples in {elapsed:.1f} s "
                      f"({n_total / elapsed:.1f} samples/s; so far "
                      + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()) + ")",
                      file=sys.stderr, flush=True)
        if device.type == "cuda":
            torch.cuda.synchronize()
        total = time.perf_counter() - total_start
    finally:
        shutil.rmtree(work, ignore_errors=True)

    merged: dict[str, list[float]] = {}
    for stage, n, seconds in rows:
        merged.setdefault(stage, [0, 0.0])
        merged[stage][0] += n
        merged[stage][1] += seconds
    print(f"device {device}, model {args.model}, {args.threads} threads, "
          f"{len(files)} {'synthetic' if args.synthetic else 'shared'} images, "
          f"N = {args.n} x {len(args.corruptions)} corruptions")
    print(f"{'stage':40s} {'items':>8s} {'seconds':>9s} {'items/s':>9s}")
    for stage, (n, seconds) in merged.items():
        print(f"{stage:40s} {n:8d} {seconds:9.2f} {n / seconds:9.1f}")
    print(f"end to end after prepare: {n_total} samples in {total:.1f} s "
          f"({n_total / total:.1f} samples/s)")
    print(f"peak resident memory: {peak_rss_mb():.0f} MB")
    if device.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB "
              f"allocated, {torch.cuda.max_memory_reserved(device) / 2**20:.0f} MiB reserved "
              f"({torch.cuda.get_device_name(device)})")
    print(f"disk per sample without pixels (scored + predictions): "
          f"{bytes_without / n_total:.0f} bytes")
    if args.measure_pixels:
        print(f"disk per sample of a scored shard with pixels: {bytes_with:.0f} bytes")


def shard_profiler(path: Path, device):
    """A started ``torch.profiler`` of the host and, on CUDA, the GPU (for one shard)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + (
        [ProfilerActivity.CUDA] if device.type == "cuda" else [])
    profiler = profile(activities=activities)
    profiler.__enter__()
    return profiler


def write_profile(profiler, path: Path, device) -> None:
    """Stop ``profiler`` and write its operator tables (by host time, and by GPU time on CUDA)
    to ``path``: where a shard's time goes when the GPU sits idle."""
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()
    profiler.__exit__(None, None, None)
    averages = profiler.key_averages()
    tables = [("self CPU time", averages.table(sort_by="self_cpu_time_total", row_limit=40))]
    if device.type == "cuda":
        tables.append(("self GPU time",
                       averages.table(sort_by="self_device_time_total", row_limit=25)))
    path.write_text("".join(f"=== shard 1 by {name}\n{table}\n" for name, table in tables))
    print(f"profile of shard 1 written to {path}", file=sys.stderr, flush=True)


def pipeline_config(args: argparse.Namespace, images: Path) -> dict:
    return {
        "run": "bench",
        "seed": 0,
        "dataset": {"source": "imagefolder", "path": str(images)},
        "corruptions": list(args.corruptions),
        "sampling": {"mode": "uniform", "n": args.n, "shard_size": args.shard_size,
                     "imagenet_c_n": 0},
        "models": [args.model],
        "device": args.device,
        "inference": {"batch_size": args.batch, **dict(args.inference)},
        "threads": {"score": 1, "predict": 1, "estimate": 1},
    }


EAGER_BASELINE = r"""
import inspect, json, sys, time
import numpy as np, torch
from vcrbench.core.jobs import set_threads
from vcrbench.data.datasets import prepare_image
from vcrbench.models import load_model, predict
files, n, threads, batch, name = json.loads(sys.argv[1])
# plain eager PyTorch (channels-last, fp32): the reference engine, whatever the default is
EAGER = {"engine": "eager"} if "engine" in inspect.signature(predict).parameters else {}
set_threads(threads)
start = time.perf_counter()
model = load_model(name, torch.device("cpu"))
done = 0
while done < n:
    k = min(batch, n - done)
    images = np.stack([prepare_image(files[(done + i) % len(files)]) for i in range(k)])
    predict(model, images, batch_size=batch, **EAGER)
    done += k
print(time.perf_counter() - start)
"""


def through_snakemake(args: argparse.Namespace) -> None:
    """The pipeline through the per-bin rates from scratch, then eager PyTorch, same run."""
    import yaml

    work = Path(tempfile.mkdtemp(prefix="bench-pipeline-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        files = image_files(args.images, args.synthetic, work / "images")
        config = work / "config.yaml"
        config.write_text(yaml.safe_dump(pipeline_config(args, work / "images")))
        slug = args.model.replace(":", "-").replace("/", "-")
        targets = [f"results/bench/rates/{slug}/{c}.parquet" for c in args.corruptions]
        command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
                   "--directory", str(work), "--configfile", str(config), "--cores",
                   str(args.cores), *targets]
        for pair in args.config:
            command += ["--config", pair]
        start, cpu = time.perf_counter(), children_cpu_seconds()
        result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        pipeline = time.perf_counter() - start
        pipeline_cpu = children_cpu_seconds() - cpu
        if result.returncode != 0:
            raise SystemExit(result.stdout[-3000:] + result.stderr[-3000:])
        results = work / "results" / "bench"
        size = sum(p.stat().st_size for p in results.rglob("*") if p.is_file())
        if args.no_baseline:
            print(f"pipeline through the per-bin rates: {pipeline:.1f} s wall, "
                  f"{pipeline_cpu:.1f} CPU-s ({len(args.corruptions)} corruptions x {args.n} "
                  f"samples + {args.images} clean images, {args.model}, device {args.device}, "
                  f"--cores {args.cores}, results {size / 1e6:.1f} MB)")
            return
        n_forward = args.n * len(args.corruptions) + args.images
        payload = json.dumps([[str(f) for f in files], n_forward, args.cores, args.batch,
                              args.model])
        start, cpu = time.perf_counter(), children_cpu_seconds()
        eager = subprocess.run([sys.executable, "-c", EAGER_BASELINE, payload], cwd=REPO,
                               capture_output=True, text=True, env={**os.environ})
        eager_wall = time.perf_counter() - start
        eager_cpu = children_cpu_seconds() - cpu
        if eager.returncode != 0:
            raise SystemExit(eager.stderr[-3000:])
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    sys.path.insert(0, str(REPO / "benchmarks"))
    import torch
    from bench_output import machine

    print("machine:", json.dumps(machine(torch.device("cpu"))))
    print(f"pipeline through the per-bin rates: {pipeline:.1f} s wall, {pipeline_cpu:.1f} CPU-s "
          f"({len(args.corruptions)} corruptions x {args.n} samples + {args.images} clean "
          f"images, {args.model}, --cores {args.cores}, results {size / 1e6:.1f} MB)")
    print(f"eager PyTorch, the same {n_forward} forward passes with decoding, "
          f"{args.cores} threads: {eager_wall:.1f} s wall, {eager_cpu:.1f} CPU-s")
    print(f"ratio pipeline / eager: {pipeline / eager_wall:.2f} wall, "
          f"{pipeline_cpu / eager_cpu:.2f} CPU time")


def key_value(text: str) -> tuple[str, object]:
    key, _, value = text.partition("=")
    import yaml

    return key, yaml.safe_load(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=["chain", "snakemake"], default="chain")
    parser.add_argument("--n", type=int, default=2000, help="samples per corruption")
    parser.add_argument("--images", type=int, default=1000, help="clean images")
    parser.add_argument("--synthetic", action="store_true",
                        help="synthetic 500 x 375 JPEGs instead of the shared images")
    parser.add_argument("--corruptions", nargs="+", default=["gaussian_noise", "gaussian_blur"])
    parser.add_argument("--model", default="efficientnet-lite0")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--batch", type=int, default=64, help="inference batch")
    parser.add_argument("--vif-batch", type=int, default=32)
    parser.add_argument("--shard-size", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2, help="threads of the chain process")
    parser.add_argument("--cores", type=int, default=2, help="snakemake --cores")
    parser.add_argument("--inference", type=key_value, nargs="*", default=[],
                        help="extra inference settings KEY=VALUE (chain mode)")
    parser.add_argument("--config", nargs="*", default=[],
                        help="extra snakemake --config KEY=VALUE pairs (snakemake mode)")
    parser.add_argument("--no-baseline", action="store_true",
                        help="snakemake mode: time the pipeline only, no eager baseline")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="snakemake mode: run in DIR and keep it (default: a temporary one)")
    parser.add_argument("--profile", type=Path, metavar="FILE",
                        help="chain mode: profile the first corruption's second shard with "
                             "torch.profiler (host and GPU) and write its tables to FILE (none "
                             "when N fits one shard); that shard's time, profiler overhead "
                             "included, counts in the throughputs")
    parser.add_argument("--measure-pixels", action="store_true",
                        help="also write one shard with pixels to measure its bytes per sample")
    args = parser.parse_args()
    if args.mode == "chain":
        chain(args)
    else:
        through_snakemake(args)


if __name__ == "__main__":
    from vcrbench.core.allocator import restart_with_job_allocator

    restart_with_job_allocator()  # the allocator settings of the workflow's jobs
    main()
