"""OpenCLIP's class-prompt text embeddings: encoding the 1000 prompts once (rule
openclip_text_embeddings) against what every prediction job of the model saves by reading them.

    python benchmarks/bench_openclip_embeddings.py --arch ViT-B-32 --threads 1

Random weights of ``--arch`` are saved to a temporary checkpoint and loaded as
``openclip:<arch>?pretrained=<file>`` (the cost does not depend on the weights' values). Prints
the machine, then a JSON line: [wall, CPU] seconds to write the artifact, to load the model
encoding the prompts (a prediction job without the artifact), to load it from the artifact
(with the one-prompt check), and the seconds saved per prediction job (CPU seconds are the
figure to trust on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import machine_line  # noqa: E402

from vcrbench.models import load_model  # noqa: E402
from vcrbench.models.openclip_zoo import embeddings_path, write_text_embeddings  # noqa: E402
from vcrbench.models.registry import parse_model_name  # noqa: E402


def _seconds(call) -> tuple[float, float]:
    """(wall, CPU) seconds of ``call()`` (CPU: this process's, all threads)."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return round(time.perf_counter() - wall, 2), round(time.process_time() - cpu, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", default="ViT-B-32", help="an OpenCLIP architecture")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (a job's cores)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    import open_clip

    with tempfile.TemporaryDirectory() as folder:
        checkpoint = Path(folder) / "weights.pt"
        torch.manual_seed(0)
        torch.save(open_clip.create_model(args.arch).state_dict(), checkpoint)
        name = f"openclip:{args.arch}?pretrained={checkpoint}"
        models = Path(folder) / "models"
        write = _seconds(lambda: write_text_embeddings(parse_model_name(name),
                                                            embeddings_path(models, name)))
        encoding = _seconds(lambda: load_model(name))
        cached = _seconds(lambda: load_model(name, models_dir=models))
    print(machine_line())
    print(json.dumps({
        "arch": args.arch, "threads": args.threads, "seconds": "[wall, cpu]",
        "write_embeddings": write,
        "load_encoding_prompts": encoding,
        "load_from_embeddings": cached,
        "saved_per_prediction_job": [
            round(a - b, 2) for a, b in zip(encoding, cached, strict=True)
        ],
    }))


if __name__ == "__main__":
    main()
