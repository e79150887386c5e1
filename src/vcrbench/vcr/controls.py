"""The VCR retraining experiment's positive control, read off a finished run's tables
(``vcrbench control retraining``; config/control-vcr-retraining-cifar10.yaml).

The retraining table (``metrics/retraining.md``) puts each fine-tuned model against its base.
A positive control needs the model fine-tuned *with* the augmentation against the same model
fine-tuned *without* it (same base, recipe, budget and images): :func:`retraining_control`
passes that pair to the same function (:func:`vcrbench.vcr.retraining.retraining_table`), so R
before → after reads control → augmented, and the interval of the change pairs bootstrap
replicate ``b`` of one model with replicate ``b`` of the other (both resample the same images
with the same weights: an image-level paired interval). Nothing is recomputed: the run's
summary and curve replicates are read as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vcrbench.core.tables import read_table
from vcrbench.errors import VcrbenchError
from vcrbench.vcr.retraining import retraining_markdown, retraining_table


def retraining_control(run: Path, model: str, control: str, folders: Mapping[str, str]) -> str:
    """Markdown of ``model`` (fine-tuned with the augmentation) against ``control`` (the same
    fine-tuning without it) on every corruption of ``model`` in the run's summary.

    ``run``: the results folder; ``folders``: each of the two models' folder name under
    ``curves/`` (``vcrbench.config.model_slug``)."""
    run = Path(run)
    summary_file = run / "metrics" / "summary.parquet"
    if not summary_file.is_file():
        raise VcrbenchError(f"{summary_file} does not exist: give the folder of a finished run "
                            "(results/<run>)")
    summary = read_table(summary_file)
    rows = summary.to_pylist()
    for name, role in ((model, "--model"), (control, "--control")):
        if not any(r["model"] == name for r in rows):
            known = ", ".join(sorted({r["model"] for r in rows}))
            raise VcrbenchError(f"{role} {name!r} is not a model of {summary_file}: choose "
                                f"among {known}")
    corruptions = sorted({r["corruption"] for r in rows if r["model"] == model})
    replicates = {
        (name, corruption): read_table(run / "curves" / folders[name]
                                       / f"{corruption}-replicates.parquet")
        for name in (model, control) for corruption in corruptions
    }
    table = retraining_table(summary, [(model, control)], replicates)
    return (f"# {model} against its control {control}\n\n"
            f"Run: `{run}`. Columns: control → augmented (difference [95 % interval of "
            "the difference, image bootstrap paired across the two models]).\n\n"
            + retraining_markdown(table).replace("| base |", "| control |", 1))
