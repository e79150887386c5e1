"""What capping the instruction set at AVX2 costs the heavy kernels, measured interleaved.

An AVX2-only CPU is approximated on an AVX-512 one by the variables of :data:`AVX2_CAP`
(oneDNN in torch and in OpenVINO, ATen's kernels, numpy's dispatch). They act when a process
starts, so each round runs one child process uncapped and one capped, one after the other, and
the table gives the median of the rounds: on a shared machine whose speed drifts, only such
interleaved pairs compare (docs/architecture.md, "Where the default run's time goes on a CPU
without AVX-512"). Each child measures, on one thread: EfficientNet-Lite0's OpenVINO forward
pass (64 images, pieces of 8, as a prediction job runs it), its eager forward pass (32 images),
and VIF at 224 px (32 pairs, as a scoring job computes it). ``--profile`` also prints, for the
last capped child, ``torch.profiler``'s operators of that VIF call by self CPU time.

    python benchmarks/bench_isa_cap.py --rounds 3 [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AVX2_CAP = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2",
            "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
MEASURES = ("openvino_images_per_s", "eager_images_per_s", "vif_ms_per_pair")


def measure(cache_dir: str, profile: bool = False) -> dict:
    """The child's measurements (one torch thread); with ``profile`` also VIF's operator table
    (``vif_profile``: text)."""
    import numpy as np
    import torch

    from vcrbench.models import load_model
    from vcrbench.models.engines import engine_for
    from vcrbench.vif import vif

    torch.set_num_threads(1)
    model = load_model("efficientnet-lite0", torch.device("cpu"))
    engine = engine_for(model, torch.device("cpu"), "openvino", cache_dir=cache_dir)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(64, 3, 224, 224)).astype(np.float32))
    ref = rng.integers(0, 256, (32, 3, 224, 224), dtype=np.uint8)
    dist = np.clip(ref.astype(int) + rng.integers(-20, 21, ref.shape), 0, 255).astype(np.uint8)
    engine.forward(x[:8])
    vif(ref[:4], dist[:4])
    with torch.no_grad():
        model.module(x[:8])
        start = time.perf_counter()
        engine.forward(x)
        openvino = 64 / (time.perf_counter() - start)
        start = time.perf_counter()
        model.module(x[:32])
        eager = 32 / (time.perf_counter() - start)
    start = time.perf_counter()
    vif(ref, dist)
    result = {"openvino_images_per_s": openvino, "eager_images_per_s": eager,
              "vif_ms_per_pair": (time.perf_counter() - start) / 32 * 1000}
    if profile:
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile as profiler

        with profiler(activities=[ProfilerActivity.CPU]) as prof:
            vif(ref, dist)
        result["vif_profile"] = prof.key_averages().table(sort_by="self_cpu_time_total",
                                                          row_limit=10)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true",
                        help="also VIF's operator table of the last capped child")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.profile)))
        return
    sys.path.insert(0, str(Path(__file__).parent))
    import torch
    from bench_output import machine

    results: dict[str, list[dict[str, float]]] = {"uncapped": [], "AVX2 cap": []}
    vif_profile = None
    with tempfile.TemporaryDirectory() as cache:
        for round_ in range(args.rounds):
            for name, extra in (("uncapped", {}), ("AVX2 cap", AVX2_CAP)):
                env = {k: v for k, v in os.environ.items() if k not in AVX2_CAP}
                profile = (["--profile"] if args.profile and extra
                           and round_ == args.rounds - 1 else [])
                out = subprocess.run([sys.executable, __file__, "--child", cache, *profile],
                                     env={**env, **extra}, capture_output=True, text=True,
                                     check=True)
                row = json.loads(out.stdout.strip().splitlines()[-1])
                vif_profile = row.pop("vif_profile", None) or vif_profile
                results[name].append(row)
                print(name, results[name][-1], flush=True)
    if vif_profile:
        print("VIF, 32 pairs, AVX2 cap, one thread: operators by self CPU time\n" + vif_profile)
    lines = [f"machine: {json.dumps(machine(torch.device('cpu')))}; one thread; median of "
             f"{args.rounds} interleaved rounds (range in brackets)", "",
             "| measure | uncapped | AVX2 cap | cap ÷ uncapped |", "|---|---:|---:|---:|"]
    for key in MEASURES:
        cells, medians = [], []
        for name in results:
            values = [r[key] for r in results[name]]
            medians.append(statistics.median(values))
            cells.append(f"{medians[-1]:.1f} [{min(values):.1f}, {max(values):.1f}]")
        lines.append(f"| {key} | {cells[0]} | {cells[1]} | {medians[1] / medians[0]:.2f} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
