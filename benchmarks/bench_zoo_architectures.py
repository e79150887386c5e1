"""Build RobustBench zoo architectures for real on the CPU with this project's timm, and run one
forward pass each: the entries the tests cannot build on the meta device (their constructors read
values of their own tensors), or every entry with ``--all`` (minutes, several GB).

    python benchmarks/bench_zoo_architectures.py [--all] [--forward]

Prints one line per entry: parameters (millions), build seconds, and with ``--forward`` the
logits' shape on one image of the dataset's input side. Exits 1 if any entry fails to build
(entries RobustBench builds on CUDA only are listed apart on a host without CUDA).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from bench_output import machine_line

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers.zoo_files import NOT_ON_META  # noqa: E402

from vcrbench.models import robustbench_zoo  # noqa: E402
from vcrbench.models.sources import _DownloadBlocked, no_downloads  # noqa: E402


def _entries(everything: bool) -> list[tuple[str, str, str]]:
    if not everything:
        return sorted(NOT_ON_META)
    return [(d, t, n) for d in robustbench_zoo.DATASETS for t in robustbench_zoo.THREATS
            for n in robustbench_zoo.entries(d, t)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every entry of the three datasets")
    parser.add_argument("--forward", action="store_true", help="one forward pass each")
    args = parser.parse_args()
    print(machine_line())
    zoo = robustbench_zoo.import_zoo()
    failed, cuda_only = [], []
    for dataset, threat, name in _entries(args.all):
        if (dataset, threat, name) in robustbench_zoo.NEEDS_CUDA and not torch.cuda.is_available():
            cuda_only.append(name)
            continue
        board = zoo.model_dicts[zoo.BenchmarkDataset(dataset)][zoo.ThreatModel(threat)]
        start = time.perf_counter()
        try:
            with no_downloads(), robustbench_zoo._quiet():
                module = board[name]["model"]().eval()
        except _DownloadBlocked:
            print(f"{dataset:9} {threat:12} {name:45} its constructor downloads weights")
            continue
        except Exception as error:  # noqa: BLE001 - reported per entry
            failed.append(name)
            print(f"{dataset:9} {threat:12} {name:45} FAILED {type(error).__name__}: {error}")
            continue
        seconds = time.perf_counter() - start
        params = sum(p.numel() for p in module.parameters()) / 1e6
        line = f"{dataset:9} {threat:12} {name:45} {params:8.1f} M params {seconds:6.1f} s"
        if args.forward:
            side = robustbench_zoo.resolve(name, dataset, threat).input_side
            with torch.inference_mode():
                logits = module(torch.rand(1, 3, side, side))
            line += f"  logits {tuple(logits.shape)}"
        print(line)
        del module
    if cuda_only:
        print(f"built on CUDA only by RobustBench (no CUDA here): {', '.join(cuda_only)}")
    print(f"{len(failed)} failed" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
