"""A fine-tuned model against its control, from a finished run's tables (positive controls of
the VCR retraining experiment, issue 32; config/control-vcr-retraining-cifar10.yaml).

The retraining table (``metrics/retraining.md``) puts each fine-tuned model against its base.
A positive control needs the model fine-tuned *with* the augmentation against the same model
fine-tuned *without* it (same base, recipe, budget and images): this script passes that pair to
the same function (:func:`vcrbench.vcr.retraining.retraining_table`), so R before → after reads
control → augmented, and the interval of the change pairs bootstrap replicate ``b`` of one model
with replicate ``b`` of the other (both resample the same images with the same weights: an
image-level paired interval). Nothing is recomputed: the run's summary and curve replicates are
read as they are.

    python benchmarks/bench_retraining_control.py \
        --run results/control-vcr-retraining-cifar10 \
        --model finetuned:fastnet-gaussian-noise --control finetuned:fastnet-control
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import emit  # noqa: E402

from vcrbench.config import model_slug  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.vcr.retraining import retraining_markdown, retraining_table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a finished run's results folder")
    parser.add_argument("--model", required=True, help="the augmented fine-tuned model")
    parser.add_argument("--control", required=True, help="the same fine-tuning without it")
    parser.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    args = parser.parse_args()
    summary = read_table(args.run / "metrics" / "summary.parquet")
    corruptions = sorted({r["corruption"] for r in summary.to_pylist()
                          if r["model"] == args.model})
    replicates = {
        (model, corruption): read_table(args.run / "curves" / model_slug(model)
                                        / f"{corruption}-replicates.parquet")
        for model in (args.model, args.control) for corruption in corruptions
    }
    table = retraining_table(summary, [(args.model, args.control)], replicates)
    text = (f"# {args.model} against its control {args.control}\n\n"
            f"Run: `{args.run}`. Columns: control → augmented (difference [95 % interval of "
            "the difference, image bootstrap paired across the two models]).\n\n"
            + retraining_markdown(table).replace("| base |", "| control |", 1))
    emit(text, args.out)


if __name__ == "__main__":
    main()
