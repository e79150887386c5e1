"""Inference throughput (images/s) of registry models per engine, their agreement with eager
PyTorch, and optionally their sample accuracy.

Throughput is end to end through :func:`vcrbench.models.predict`: uint8 (N, 224, 224, 3)
random images (seed 0) -> resize/normalise -> forward -> softmax -> top-1 and 16-class
decision. The engines run side by side in one process on the same images: after one warm-up
call per engine (which converts or loads the engine), ``--rounds`` rounds each time every
engine once, in turn; the table gives the median round, per thread count. Peak RSS is measured
in a fresh child process per engine (load the model, build the engine, predict the N images).

``--agreement`` classifies the shared 1,000-image ImageNet sample and a corrupted shard
(``--corrupted`` samples, half gaussian_noise, half gaussian_blur, parameters drawn over the
sampled domain as the pipeline draws them, on sample images) with every engine and compares each
with eager PyTorch: top-1 and 16-class decisions identical, the largest |Δ p_top1|, and every
image whose top-1 differs with its p_top1 under both engines. ``--accuracy`` measures clean
top-1 on the sample and 16-class accuracy on its 207 images of the 16 categories.

Examples::

    python benchmarks/bench_inference.py                      # Lite0/1/2, eager, 2 threads
    python benchmarks/bench_inference.py --models efficientnet-lite0 \\
        --engines eager,openvino --threads 1,2 --agreement
    python benchmarks/bench_inference.py --accuracy
    python benchmarks/bench_inference.py --device cuda --precision bf16 \\
        --models "torchvision:resnet50?weights=none" efficientnet-lite0 --images 4096
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from vcrbench.models import load_model, predict, resolve_device

SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "imagenet-sample"
LITES = ["efficientnet-lite0", "efficientnet-lite1", "efficientnet-lite2"]
#: The corrupted shard of ``--agreement``: corruptions, run seed of their parameters and noise.
AGREEMENT_CORRUPTIONS = ("gaussian_noise", "gaussian_blur")
AGREEMENT_SEED = 22


def engine_options(engine: str) -> dict:
    """``predict`` keywords of a name of ``--engines`` (``eager+compile``: torch.compile)."""
    if engine == "eager+compile":
        return {"engine": "eager", "compile": True}
    return {"engine": engine}


def random_images(n: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, (n, 224, 224, 3), dtype=np.uint8)


def throughput(
    name: str, engines: list[str], device: torch.device, precision: str, batch_size: int,
    n_images: int, rounds: int, cache_dir: str,
) -> dict[str, float]:
    """Images per second of ``predict`` per engine: median of ``rounds`` interleaved rounds."""
    model = load_model(name, device)
    images = random_images(n_images)
    options = {"batch_size": batch_size, "precision": precision, "device": device,
               "cache_dir": cache_dir}
    for engine in engines:  # warm-up: builds (converts, or loads the cached) engine
        predict(model, images[:batch_size], **engine_options(engine), **options)
    times: dict[str, list[float]] = {engine: [] for engine in engines}
    for _ in range(rounds):
        for engine in engines:
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            predict(model, images, **engine_options(engine), **options)
            if device.type == "cuda":
                torch.cuda.synchronize()
            times[engine].append(time.perf_counter() - start)
    return {engine: n_images / statistics.median(t) for engine, t in times.items()}


def peak_rss_mb(name: str, engine: str, args: argparse.Namespace, threads: int) -> float:
    """Peak resident memory (MB, Linux ``VmHWM``: ``ru_maxrss`` would include the parent's
    peak, inherited across fork and exec) of a fresh process that loads ``name``, builds
    ``engine`` and predicts ``--images`` random images."""
    code = (
        "import sys, torch\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from bench_inference import random_images\n"
        "from vcrbench.models import load_model, predict\n"
        f"torch.set_num_threads({threads})\n"
        f"model = load_model({name!r}, {args.device!r})\n"
        f"predict(model, random_images({args.images}), batch_size={args.batch_size}, "
        f"precision={args.precision!r}, cache_dir={args.cache_dir!r}, "
        f"**{engine_options(engine)!r})\n"
        "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent)],
        check=True, capture_output=True, text=True,
    )
    return float(out.stdout.strip().splitlines()[-1]) / 1024  # VmHWM is in kB


def sample_images() -> tuple[list[Path], np.ndarray, np.ndarray]:
    """Sample files, their (1000, 224, 224, 3) prepared images and labels."""
    from vcrbench.data.datasets import prepare_image
    from vcrbench.data.imagenet import label_of_filename

    files = sorted(SAMPLE.glob("*.JPEG"))
    labels = np.array([label_of_filename(f) for f in files])
    return files, np.stack([prepare_image(f) for f in files]), labels


def corrupted_shard(clean: np.ndarray, n: int) -> tuple[list[str], np.ndarray]:
    """``n`` corrupted sample images (half per corruption of :data:`AGREEMENT_CORRUPTIONS`):
    parameters as the pipeline's uniform sampling draws them for sample ids 0..n/2-1, image
    ``(7 * id) % 1000``, noise seeded by the id. Returns (labels for the report, images)."""
    from vcrbench.corruptions import corrupt_uint8, uniform_samples

    names, images = [], []
    per = n // len(AGREEMENT_CORRUPTIONS)
    for corruption in AGREEMENT_CORRUPTIONS:
        ids = list(range(per))
        points = uniform_samples(corruption, AGREEMENT_SEED, ids)
        picks = [(7 * i) % len(clean) for i in ids]
        for start in range(0, per, 50):
            stop = min(per, start + 50)
            params = {p: np.array([pt[p] for pt in points[start:stop]]) for p in points[0]}
            images.append(corrupt_uint8(corruption, clean[picks[start:stop]], params,
                                        ids[start:stop], torch.device("cpu")))
        names += [
            f"{corruption} #{i} (image {picks[i]}, "
            + ", ".join(f"{p}={v:.3g}" for p, v in points[i].items()) + ")"
            for i in ids
        ]
    return names, np.concatenate(images)


def agreement(
    name: str, engines: list[str], sets: dict[str, tuple[list[str], np.ndarray]],
    batch_size: int, cache_dir: str,
) -> None:
    """Print each engine's agreement with eager PyTorch on each image set."""
    model = load_model(name)
    for set_name, (labels, images) in sets.items():
        start = time.perf_counter()
        eager = predict(model, images, batch_size=batch_size, engine="eager")
        print(f"\n{name}, {set_name} ({len(images)} images): eager "
              f"{time.perf_counter() - start:.0f} s", flush=True)
        for engine in engines:
            if engine == "eager":
                continue
            start = time.perf_counter()
            other = predict(model, images, batch_size=batch_size, cache_dir=cache_dir,
                            **engine_options(engine))
            seconds = time.perf_counter() - start
            differ = np.flatnonzero(other["top1"] != eager["top1"])
            differ16 = int((other["top1_16"] != eager["top1_16"]).sum())
            dp = np.abs(other["p_top1"].astype(np.float64) - eager["p_top1"])
            same = np.setdiff1d(np.arange(len(images)), differ)
            print(
                f"- {engine} ({seconds:.0f} s): top-1 identical on {len(images) - len(differ)} "
                f"/ {len(images)} ({100 * (1 - len(differ) / len(images)):.2f} %), 16-class "
                f"decision differs on {differ16}; max |Δ p_top1| {dp[same].max():.2e} where "
                f"top-1 agrees (median {np.median(dp[same]):.1e})"
            )
            for i in differ:
                print(f"    differs: {labels[i]}: eager {eager['top1'][i]} "
                      f"(p={eager['p_top1'][i]:.4f}), {engine} {other['top1'][i]} "
                      f"(p={other['p_top1'][i]:.4f})")


def sample_accuracy(
    name: str, device: torch.device, precision: str, batch_size: int, engine: str,
    cache_dir: str,
) -> tuple[float, float]:
    """(top-1 on the 1,000 sample images, 16-class accuracy on its 207 16-category images)."""
    from vcrbench.data.imagenet16 import label_to_category16

    _, images, labels = sample_images()
    out = predict(
        load_model(name, device), images, batch_size=batch_size, precision=precision,
        device=device, cache_dir=cache_dir, **engine_options(engine),
    )
    category = label_to_category16()[labels]
    in16 = category >= 0
    acc16 = float((out["top1_16"][in16] == category[in16]).mean())
    return float((out["top1"] == labels).mean()), acc16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=LITES)
    parser.add_argument("--engines", default="eager",
                        help="comma-separated: eager, openvino, auto, eager+compile "
                        "(torch.compile); eager is the reference")
    parser.add_argument("--device", default="cpu", help="auto | cpu | cuda")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    parser.add_argument("--threads", default="2", help="torch CPU threads, comma-separated")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--images", type=int, default=256, help="images timed per model")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per engine")
    parser.add_argument("--no-rss", action="store_true", help="skip the peak-RSS processes")
    parser.add_argument("--cache-dir", default=None,
                        help="engine cache (default: a temporary folder, removed at the end, "
                        "so the first warm-up call converts)")
    parser.add_argument("--agreement", action="store_true",
                        help=f"compare the engines with eager on {SAMPLE} and a corrupted shard")
    parser.add_argument("--corrupted", type=int, default=400,
                        help="corrupted images of --agreement")
    parser.add_argument(
        "--accuracy", action="store_true", help=f"also measure accuracy on {SAMPLE}"
    )
    args = parser.parse_args()
    temporary_cache = args.cache_dir is None
    args.cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="vcrbench-engines-")
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    thread_counts = [int(t) for t in args.threads.split(",")]
    device = resolve_device(args.device)
    if device.type == "cuda":
        where = torch.cuda.get_device_name(device)
        thread_counts = thread_counts[:1]
    else:
        where = "CPU"
    from bench_output import machine_line

    print(f"# {where}, torch {torch.__version__}, batch {args.batch_size}, {args.images} "
          f"images, median of {args.rounds} interleaved rounds\n")
    print(machine_line(str(device)), "\n")
    header = "| model | engine | threads | images/s | ms/image | × eager | peak RSS (MB) |"
    rule = "|---|---|---:|---:|---:|---:|---:|"
    if args.accuracy:
        header += " top-1 (1000) | 16-class (207) |"
        rule += "---:|---:|"
    print(header)
    print(rule)
    for name in args.models:
        for threads in thread_counts:
            torch.set_num_threads(threads)
            rates = throughput(name, engines, device, args.precision, args.batch_size,
                               args.images, args.rounds, args.cache_dir)
            for engine, rate in rates.items():
                ratio = f"{rate / rates['eager']:.2f}" if "eager" in rates else "n/a"
                rss = "n/a" if args.no_rss else f"{peak_rss_mb(name, engine, args, threads):.0f}"
                row = (f"| {name} | {engine} | {threads} | {rate:.1f} | {1000 / rate:.1f} | "
                       f"{ratio} | {rss} |")
                if args.accuracy:
                    if SAMPLE.is_dir():
                        top1, acc16 = sample_accuracy(name, device, args.precision,
                                                      args.batch_size, engine, args.cache_dir)
                        row += f" {top1:.3f} | {acc16:.3f} |"
                    else:
                        row += " n/a | n/a |"
                print(row, flush=True)
    if args.agreement:
        torch.set_num_threads(thread_counts[-1])
        files, clean, _ = sample_images()
        sets = {"shared sample": ([f.name for f in files], clean),
                "corrupted shard": corrupted_shard(clean, args.corrupted)}
        for name in args.models:
            agreement(name, engines, sets, args.batch_size, args.cache_dir)
    if temporary_cache:
        shutil.rmtree(args.cache_dir, ignore_errors=True)
    else:
        print("\n" + json.dumps({"cache_dir": args.cache_dir}))


if __name__ == "__main__":
    main()
