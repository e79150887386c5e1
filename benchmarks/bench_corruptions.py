"""Throughput of ``vcrbench.corruptions`` next to the peers, as a Markdown table.

For every corruption: milliseconds per 224 x 224 image when corrupting batches of 64 with
``apply_corruption`` (parameters drawn uniformly over the whole domain, as the benchmark does, and
at ImageNet-C severity 3 / a typical Albumentations setting, which is what the peer column runs),
and the peer's milliseconds per image (``imagecorruptions`` at severity 3, one image at a time;
Albumentations transforms). ``imagecorruptions`` 1.1.2 only imports with a stand-in
``pkg_resources``, and its Gaussian and glass blur need skimage's old ``multichannel`` argument,
and its fog numpy 1's ``np.float_``, so they get small compatibility shims (the timing is the
package's own code). NOC's corruptions have no peer (the paper published no code); they are
timed at the middle of the paper's range.

    python benchmarks/bench_corruptions.py                 # CPU, torch with 2 threads
    python benchmarks/bench_corruptions.py --device cuda   # adds images/s on the GPU
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from vcrbench.core.allocator import restart_with_job_allocator
from vcrbench.core.seeding import noise_seed
from vcrbench.corruptions import CORRUPTIONS, apply_corruption, imagenet_c_samples, uniform_samples

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "imagenet-sample"
ALBUMENTATIONS_SETTING = {
    "blur": {"ksize": 7.0},
    "median_blur": {"ksize": 7.0},
    "hue_saturation_value": {"hue_shift": 20.0, "sat_shift": 30.0, "val_shift": 20.0},
    "color_jitter": {"brightness": 1.2, "contrast": 0.8, "saturation": 1.2, "hue": 0.1},
    "uniform_noise": {"width": 0.3},
}


def load_images(n: int) -> np.ndarray:
    """``n`` real 224 px images (short side 256, centre crop), skimage's if the sample is absent."""
    files = sorted(SAMPLE.glob("*.JPEG"))[:n] if SAMPLE.is_dir() else []
    if not files:
        from skimage import data

        files = [Image.fromarray(f()) for f in (data.astronaut, data.chelsea, data.coffee)]
    out = []
    for i in range(n):
        f = files[i % len(files)]
        image = (Image.open(f) if isinstance(f, Path) else f).convert("RGB")
        w, h = image.size
        s = 256 / min(w, h)
        image = image.resize((round(w * s), round(h * s)), Image.BILINEAR)
        w, h = image.size
        left, top = (w - 224) // 2, (h - 224) // 2
        out.append(np.asarray(image.crop((left, top, left + 224, top + 224))))
    return np.stack(out)


def best_of(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Best wall time and best process CPU time of ``repeats`` runs (after a warm-up), seconds.

    CPU time (all threads of this process) is what the work costs; wall time also counts the
    waits for a core when the machine is shared.
    """
    fn()
    wall, cpu = float("inf"), float("inf")
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu


def imagecorruptions_module():
    """``imagecorruptions.corruptions`` with the two compatibility shims, or None."""
    if importlib.util.find_spec("imagecorruptions") is None:
        return None
    if "pkg_resources" not in sys.modules and importlib.util.find_spec("pkg_resources") is None:
        stub = types.ModuleType("pkg_resources")
        stub.resource_filename = lambda pkg, name: os.path.join(  # type: ignore[attr-defined]
            os.path.dirname(sys.modules[pkg].__file__), name)
        sys.modules["pkg_resources"] = stub
    if not hasattr(np, "float_"):  # its fog uses numpy 1's alias, gone in numpy 2
        np.float_ = np.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import imagecorruptions.corruptions as module
    from skimage.filters import gaussian

    def gaussian_compat(image, sigma, multichannel=None, **kwargs):
        return gaussian(image, sigma=sigma, channel_axis=-1 if multichannel else None, **kwargs)

    module.gaussian = gaussian_compat
    return module


def peer_timer(name: str, images: np.ndarray) -> tuple[str, Callable[[], object]] | None:
    """(peer label, a function corrupting ``images`` one by one) for a corruption, if any."""
    spec = CORRUPTIONS[name]
    if spec.source == "noc":  # the NOC paper published no code
        return None
    if spec.source == "imagenet-c":
        module = imagecorruptions_module()
        if module is None:
            return None
        fn = getattr(module, name)
        pil = [Image.fromarray(x) for x in images]
        return "imagecorruptions sev 3", lambda: [np.uint8(fn(p, 3)) for p in pil]
    if spec.source == "albumentations":
        if importlib.util.find_spec("albumentations") is None:
            return None
        import albumentations as A

        setting = ALBUMENTATIONS_SETTING[name]
        transform = {
            "blur": lambda: A.Blur(blur_limit=(7, 7), p=1.0),
            "median_blur": lambda: A.MedianBlur(blur_limit=(7, 7), p=1.0),
            "hue_saturation_value": lambda: A.HueSaturationValue(
                hue_shift_limit=(20, 20), sat_shift_limit=(30, 30), val_shift_limit=(20, 20),
                p=1.0),
            "color_jitter": lambda: A.ColorJitter(
                brightness=(setting["brightness"],) * 2, contrast=(setting["contrast"],) * 2,
                saturation=(setting["saturation"],) * 2, hue=(setting["hue"],) * 2, p=1.0),
        }[name]()
        return "albumentations", lambda: [transform(image=x)["image"] for x in images]
    rng = np.random.default_rng(0)
    return "numpy one-liner", lambda: [
        np.uint8(np.round(np.clip(x / 255 + rng.uniform(-0.3, 0.3, x.shape), 0, 1) * 255))
        for x in images]


def typical_setting(name: str) -> dict[str, float]:
    """The setting the peer column runs: ImageNet-C severity 3, a typical Albumentations
    setting, or (NOC) the middle of the paper's range, else of the way from clean to strongest."""
    spec = CORRUPTIONS[name]
    if spec.imagenet_c_severities is not None:
        return imagenet_c_samples(name)[2]
    if name in ALBUMENTATIONS_SETTING:
        return ALBUMENTATIONS_SETTING[name]
    return {k: (sum(spec.source_range[k]) / 2 if k in spec.source_range
                else (spec.identity[k] + spec.strongest[k]) / 2) for k in spec.parameters}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-images", type=int, default=4)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", nargs="*", default=None, help="corruption names")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    images = load_images(args.batch)
    batch = torch.from_numpy(images).permute(0, 3, 1, 2).float().div(255).to(device)
    names = args.only or list(CORRUPTIONS)

    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    from bench_output import machine_line

    print(machine_line(args.device))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch {args.batch}, "
          f"224 x 224, device {device}, {os.cpu_count()} CPUs, load average {load}; best of "
          f"{args.repeats} runs\n")
    header = ("| corruption | ours, whole domain: wall / CPU (ms/img) | ours, peer's setting: "
              "wall / CPU (ms/img) | peer | peer: wall / CPU (ms/img) | speed-up (CPU) |")
    if device.type == "cuda":
        header += " GPU images/s (whole domain) |"
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for name in names:
        spec = CORRUPTIONS[name]
        seeds = [noise_seed(0, name, i) for i in range(args.batch)]
        sampled = uniform_samples(name, 0, range(args.batch))
        domain = {k: [p[k] for p in sampled] for k in spec.parameters}
        typical = typical_setting(name)
        fixed = {k: [v] * args.batch for k, v in typical.items()}

        def run(params, batch=batch, name=name, seeds=seeds):
            out = apply_corruption(name, batch, params, seeds)
            if out.is_cuda:
                torch.cuda.synchronize()
            return out

        per_image = 1e3 / args.batch
        wall_d, cpu_d = (t * per_image for t in best_of(lambda p=domain, f=run: f(p),
                                                         args.repeats))
        wall_t, cpu_t = (t * per_image for t in best_of(lambda p=fixed, f=run: f(p),
                                                        args.repeats))
        peer = peer_timer(name, images[: args.peer_images])
        if peer is None:
            label, peer_cell, speedup = "–", "–", "–"
        else:
            label, fn = peer
            wall_p, cpu_p = (t * 1e3 / args.peer_images for t in best_of(fn, 1))
            peer_cell, speedup = f"{wall_p:.1f} / {cpu_p:.1f}", f"{cpu_p / cpu_t:.1f}x"
        row = (f"| {name} | {wall_d:.1f} / {cpu_d:.1f} | {wall_t:.1f} / {cpu_t:.1f} | {label} | "
               f"{peer_cell} | {speedup} |")
        if device.type == "cuda":
            row += f" {1e3 / wall_d:.0f} |"
        print(row, flush=True)


if __name__ == "__main__":
    restart_with_job_allocator()  # the allocator settings of the workflow's jobs
    main()
