"""Training in slices, end to end on the CPU (docs/cifar.md, "Training in slices"): a tiny train
entry (fastnet, 3 epochs on 20 shared CIFAR-10 images a class) is trained

  A. in a first slice stopped after one epoch (``stop_after_epochs=1``: Snakemake finishes the
     epoch it has started, so 1 or 2 epochs), packed;
  B. resumed in a fresh working folder from A's pack (nothing else carried);
  C. uninterrupted, in a third folder;

and B's final model and training log must equal C's byte for byte, B must have trained only the
epochs A had not packed, and a dry run in B must have nothing left to do. Prints each slice's
time. About 2.5 minutes on the 2 shared development cores.

    python benchmarks/bench_train_slices.py [--data ../shared/data/cifar10] [--work DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from vcrbench.config import workflow_config  # noqa: E402
from vcrbench.training.slice_run import run_slice  # noqa: E402

CONFIG = """run: slice-test
seed: 3
device: cpu
dataset: {{source: imagefolder, path: {data}/test, classes: cifar10, size: native, per_class: 2}}
train:
  - name: fastnet
    architecture: fastnet
    preset: fast
    recipe: {{epochs: 3, batch_size: 64, warmup_epochs: 1, precision: fp32}}
    data: {{source: imagefolder, path: {data}/train, classes: cifar10, size: native,
            per_class: 20}}
models: [trained:fastnet]
corruptions: [gaussian_noise]
threads: {{train: 1}}
"""
MODEL = Path("results/slice-test/models/fastnet")


def _trained_epochs(workdir: Path) -> list[int]:
    """The epochs Snakemake ran in ``workdir`` (its logs)."""
    text = "".join(p.read_text() for p in (workdir / ".snakemake" / "log").glob("*.log"))
    return sorted(int(e) for e in re.findall(r"trained=fastnet, epoch=(\d+)", text))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/cifar10")
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="train-slices-"))
    config = work / "slice-test.yaml"
    work.mkdir(parents=True, exist_ok=True)
    config.write_text(CONFIG.format(data=args.data.resolve()))
    common = {"snakefile": REPO / "Snakefile", "margin": 5.0}
    folders = {k: work / k for k in "ABC"}
    seconds = {}
    for key, kwargs in (("A", {"stop_after_epochs": 1}), ("B", {"carry": work / "pack-A"}),
                        ("C", {})):
        folders[key].mkdir()
        start = time.perf_counter()
        report = run_slice([str(config)], workflow_config([config], REPO), 10.0,
                           work / f"pack-{key}", workdir=folders[key], **common, **kwargs)
        seconds[key] = time.perf_counter() - start
        print(f"slice {key}: {report.before} -> {report.after}, {report.stopped}, "
              f"{seconds[key]:.0f} s; packed "
              + ", ".join(f"{p.name} {p.stat().st_size / 2**20:.1f} MiB" for p in report.packed))
    packed_a = _trained_epochs(folders["A"])
    assert packed_a and max(packed_a) < 3, f"slice A was not interrupted: {packed_a}"
    resumed = _trained_epochs(folders["B"])
    assert resumed == list(range(max(packed_a) + 1, 4)), (
        f"slice B trained epochs {resumed} after A's {packed_a}")
    for name in ("model.pt", "training-log.parquet", "training-log.csv"):
        b, c = _digest(folders["B"] / MODEL / name), _digest(folders["C"] / MODEL / name)
        assert b == c, f"{name} differs between the resumed and the uninterrupted training"
    dry = subprocess.run([sys.executable, "-m", "snakemake", "-n", "train", "--snakefile",
                          str(REPO / "Snakefile"), "--configfile", str(config), "--cores", "1"],
                         cwd=folders["B"], capture_output=True, text=True, check=True)
    assert "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[-2000:]
    print(f"A trained epochs {packed_a}, B resumed with {resumed}; model.pt and the training "
          "log of B equal C's byte for byte; a dry run in B has nothing to do")


if __name__ == "__main__":
    main()
