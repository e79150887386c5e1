"""Benchmark of vcrbench.vif: pairs per second at 224 x 224 and peak memory of a batch of 64.

Run::

    python benchmarks/bench_vif.py                     # CPU, torch with 1 and 2 threads
    python benchmarks/bench_vif.py --threads 2         # only 2 threads
    python benchmarks/bench_vif.py --device cuda       # a GPU as well (reference stays on CPU)
    python benchmarks/bench_vif.py --profile-events --baseline 009753f  # ops per chunk

``--profile-events``: torch profiler events (every aten call, views included) of one ``vif``
call on a chunk of 8 and of 32 pairs at 224 px on the CPU, one thread, the CPU time per pair
(process time, best of ``--repeat``, versions interleaved) and the peak resident set increase of
the call in a fresh process; for this tree also with one pass per chunk (``CPU_PASS_PIXELS =
None``, what a GPU runs); with ``--baseline REV`` the same for ``src/vcrbench/vif.py`` as it
was at git revision REV, side by side (issue 50: events per chunk, not per pair, since a GPU
runs each as a kernel launch).

Side by side in one run: the batched torch VIF (``fast`` and ``exact``, one call on a batch of
64 pairs, best of ``--repeat``) and the slow per-image reference of the tests
(tests/helpers/vif_reference.py: pyrtools' pyramid + numpy) spread over a
``multiprocessing.Pool`` of 2 single-threaded processes (after a warm-up; the workers load the
pairs themselves). Pairs: centre crops of ../shared/data/imagenet-sample (generated textures
when absent) against a Gaussian-noise version.
Peak memory: the peak resident set (Linux VmHWM) of a fresh process that scores one
batch of 64 pairs, total and above the same process just before the call (for CUDA,
``torch.cuda.max_memory_allocated``). The machine's load average is printed: on a shared machine
the numbers move with it. ``OMP_WAIT_POLICY`` is PASSIVE unless set (``--omp-wait-policy``): on
a machine busy with other work, spinning OpenMP threads otherwise wait for descheduled ones at
every barrier, and two torch threads become several times slower than one.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
IMAGENET = REPO.parent / "shared" / "data" / "imagenet-sample"
SIZE = 224


def make_pairs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n (reference, distorted) pairs as two (n, 3, 224, 224) uint8 arrays, deterministically."""
    rng = np.random.default_rng(seed)
    refs = []
    files = sorted(IMAGENET.glob("*.JPEG")) if IMAGENET.is_dir() else []
    if files:
        from PIL import Image

        for path in files[: n * 7 : 7][:n]:
            with Image.open(path) as im:
                im = im.convert("RGB")
                w, h = im.size
                left, top = (w - SIZE) // 2, (h - SIZE) // 2
                refs.append(np.array(im.crop((left, top, left + SIZE, top + SIZE))))
    while len(refs) < n:  # generated textures: smoothed noise at a few scales
        from scipy import ndimage

        img = sum(ndimage.gaussian_filter(rng.normal(size=(SIZE, SIZE, 3)), (s, s, 0)) * s
                  for s in (1, 3, 8))
        refs.append(np.clip(128 + img / img.std() * 45, 0, 255).astype(np.uint8))
    ref = np.stack(refs)
    dist = np.clip(ref + rng.normal(0, 15, ref.shape), 0, 255).round().astype(np.uint8)
    return ref.transpose(0, 3, 1, 2).copy(), dist.transpose(0, 3, 1, 2).copy()


# ----------------------------------------------------------------------------- reference


_WORKER: dict = {}


def _worker_init(n: int) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from helpers.vif_reference import vif_reference

    ref, dist = make_pairs(n)
    _WORKER.update(fn=vif_reference, ref=ref.transpose(0, 2, 3, 1), dist=dist.transpose(0, 2, 3, 1))


def _worker_vif(i: int) -> float:
    return _WORKER["fn"](_WORKER["ref"][i], _WORKER["dist"][i])


def reference_seconds(n: int, processes: int) -> tuple[float, np.ndarray]:
    """Wall time of the per-image reference on n pairs over a pool of processes."""
    env = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                          "MKL_NUM_THREADS")}
    for k in env:
        os.environ[k] = "1"  # one thread per worker: the processes are the parallelism
    try:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(processes, initializer=_worker_init, initargs=(n,)) as pool:
            pool.map(_worker_vif, range(processes), chunksize=1)  # warm-up
            t = time.perf_counter()
            values = pool.map(_worker_vif, range(n), chunksize=1)
            return time.perf_counter() - t, np.array(values)
    finally:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ----------------------------------------------------------------------------- torch


def torch_seconds(ref, dist, precision: str, device: str, repeat: int) -> tuple[float, np.ndarray]:
    import torch

    from vcrbench.vif import vif

    vif(ref[:4], dist[:4], precision=precision, device=device)  # warm-up
    best, values = float("inf"), None
    for _ in range(repeat):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t = time.perf_counter()
        values = vif(ref, dist, precision=precision, device=device, chunk_size=len(ref))
        best = min(best, time.perf_counter() - t)
    return best, values


def _status_mb(field: str) -> float | None:
    """A memory line of /proc/self/status in MB (None where there is no such file)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def memory_probe(precision: str, device: str, n: int, revision: str | None = None,
                 whole: bool = False) -> None:
    """Run in a fresh process: print the peak memory of scoring one batch of n pairs.

    Linux: VmHWM (peak resident set) after resetting it through /proc/self/clear_refs just
    before the call, and VmRSS at that moment. Elsewhere ru_maxrss (which on Linux would also
    count the parent's peak: it survives exec). ``revision``: vif.py at that git revision;
    ``whole``: one pass per chunk on the CPU too.
    """
    import torch

    from vcrbench import vif as module

    module = module_at(revision) if revision else module
    vif = (_whole_chunks(module) if whole else None) or module.vif
    ref, dist = make_pairs(n)
    small_ref, small_dist = ref[:1, :, :80, :80].copy(), dist[:1, :, :80, :80].copy()
    vif(small_ref, small_dist, precision=precision, device=device)  # imports, filters, caches
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS to the current one
    except OSError:
        pass
    before = _status_mb("VmRSS") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    vif(ref, dist, precision=precision, device=device, chunk_size=n)
    peak = _status_mb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    gpu = torch.cuda.max_memory_allocated() / 2**20 if device.startswith("cuda") else None
    print(json.dumps({"peak_mb": peak, "before_mb": before, "gpu_mb": gpu}))


def memory(precision: str, device: str, n: int, threads: int, revision: str | None = None,
           whole: bool = False) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    extra = (["--memory-revision", revision] if revision else []) + (
        ["--memory-whole"] if whole else [])
    out = subprocess.run(
        [sys.executable, __file__, "--memory-probe", precision, "--device", device,
         "--pairs", str(n), *extra], capture_output=True, text=True, env=env, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- profiler events


def module_at(revision: str):
    """vcrbench.vif as it was at a git revision, imported under another name."""
    import importlib.util
    import tempfile

    source = subprocess.run(["git", "-C", str(REPO), "show", f"{revision}:src/vcrbench/vif.py"],
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "vif_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("vif_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _whole_chunks(module):
    """A copy of the module's vif with one pass per chunk on the CPU too (as on a GPU), or
    None where the module has no CPU passes."""
    if getattr(module, "CPU_PASS_PIXELS", None) is None:
        return None

    def vif(*args, **kwargs):
        saved, module.CPU_PASS_PIXELS = module.CPU_PASS_PIXELS, None
        try:
            return module.vif(*args, **kwargs)
        finally:
            module.CPU_PASS_PIXELS = saved

    return vif


def profile_events(baseline: str | None, repeat: int, sizes=(8, 32)) -> None:
    """Print profiler events per chunk, CPU ms per pair and peak memory at each chunk size
    (one CPU thread)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    import vcrbench.vif as current

    torch.set_num_threads(1)
    ref, dist = make_pairs(max(sizes))
    versions = {"this tree": (current.vif, None, False)}
    if _whole_chunks(current) is not None:
        versions["this tree, whole chunks (as on GPUs)"] = (_whole_chunks(current), None, True)
    if baseline:
        versions[f"at {baseline}"] = (module_at(baseline).vif, baseline, False)
    print(f"# VIF (fast) on the CPU, 1 thread, {SIZE} px: torch profiler events per chunk\n")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    values, events, best = {}, {}, {}
    for name, (fn, _, _) in versions.items():
        fn(ref[:4], dist[:4])  # warm-up: filters, caches
        for n in sizes:
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                values[name, n] = fn(ref[:n], dist[:n], chunk_size=n)
            events[name, n] = len(prof.events())
    for _ in range(repeat):  # versions interleaved: a shared machine's load hits all alike
        for n in sizes:
            for name, (fn, _, _) in versions.items():
                t = time.process_time()
                fn(ref[:n], dist[:n], chunk_size=n)
                best[name, n] = min(best.get((name, n), float("inf")), time.process_time() - t)
    print("| vif.py | pairs per chunk | profiler events | CPU ms per pair (best of "
          f"{repeat}) | peak RSS increase (MB) | max abs VIF difference to this tree |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (_, revision, whole) in versions.items():
        for n in sizes:
            mem = memory("fast", "cpu", n, 1, revision=revision, whole=whole)
            diff = np.abs(values[name, n] - values["this tree", n]).max()
            print(f"| {name} | {n} | {events[name, n]} | {best[name, n] / n * 1e3:.2f} | "
                  f"{mem['peak_mb'] - mem['before_mb']:.0f} | {diff:.1e} |")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


# ----------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=64, help="batch of pairs (default 64)")
    parser.add_argument("--reference-pairs", type=int, default=64)
    parser.add_argument("--processes", type=int, default=2, help="reference pool size")
    parser.add_argument("--threads", default="1,2", help="torch threads, comma-separated")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-probe", choices=["fast", "exact"], help=argparse.SUPPRESS)
    parser.add_argument("--memory-revision", help=argparse.SUPPRESS)
    parser.add_argument("--memory-whole", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile-events", action="store_true",
                        help="profiler events per chunk of 8 and 32 pairs (and ms per pair)")
    parser.add_argument("--baseline", help="with --profile-events: also vif.py at this git "
                        "revision, side by side")
    parser.add_argument("--omp-wait-policy", default="passive", choices=["passive", "active"],
                        help="OMP_WAIT_POLICY for torch when not set in the environment")
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", args.omp_wait_policy.upper())  # before torch
    if args.memory_probe:
        memory_probe(args.memory_probe, args.device, args.pairs, args.memory_revision,
                     args.memory_whole)
        return
    if args.profile_events:
        profile_events(args.baseline, args.repeat)
        return

    import torch

    ref, dist = make_pairs(args.pairs)
    source = "ImageNet sample" if IMAGENET.is_dir() else "generated textures"
    from bench_output import machine_line

    print(f"# VIF at {SIZE}x{SIZE}: {args.pairs} pairs ({source} vs Gaussian noise σ=15)\n")
    print(machine_line(), "\n")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"cores: {os.cpu_count()}, torch {torch.__version__}, "
          f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}\n")

    t_ref, v_ref = reference_seconds(args.reference_pairs, args.processes)
    ref_rate = args.reference_pairs / t_ref
    rows = [("reference (pyrtools + numpy, per image)", f"{args.processes} processes",
             args.reference_pairs, t_ref, ref_rate, None, None)]
    devices = ["cpu"] if args.device == "cpu" else ["cpu", args.device]
    thread_counts = [int(t) for t in args.threads.split(",")]
    for device in devices:
        # on a GPU the CPU threads hardly matter: one setting, the largest
        for threads in thread_counts if device == "cpu" else [max(thread_counts)]:
            torch.set_num_threads(threads)
            for precision in ("fast", "exact"):
                t, values = torch_seconds(ref, dist, precision, device, args.repeat)
                n = min(len(v_ref), len(values))
                err = float(np.abs(values[:n] - v_ref[:n]).max())
                rows.append((f"vcrbench.vif {precision} on {device}", f"{threads} threads",
                             args.pairs, t, args.pairs / t, args.pairs / t / ref_rate, err))
    print("| implementation | parallelism | pairs | seconds | pairs/s | × reference | "
          "max abs diff to reference |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, par, n, t, rate, speedup, err in rows:
        sp = "1.0" if speedup is None else f"{speedup:.1f}"
        e = "–" if err is None else f"{err:.1e}"
        print(f"| {name} | {par} | {n} | {t:.2f} | {rate:.1f} | {sp} | {e} |")

    print(f"\nPeak memory, one batch of {args.pairs} pairs in a fresh process "
          "(peak resident set; increase over the same process just before the call):\n")
    print("| precision | device | peak RSS (MB) | increase (MB) | peak CUDA allocated (MB) |")
    print("|---|---|---:|---:|---:|")
    for device in devices:
        for precision in ("fast", "exact"):
            m = memory(precision, device, args.pairs, max(thread_counts))
            gpu = "–" if m["gpu_mb"] is None else f"{m['gpu_mb']:.0f}"
            print(f"| {precision} | {device} | {m['peak_mb']:.0f} | "
                  f"{m['peak_mb'] - m['before_mb']:.0f} | {gpu} |")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    from vcrbench.core.allocator import restart_with_job_allocator

    restart_with_job_allocator()  # the allocator settings of the workflow's jobs
    main()
