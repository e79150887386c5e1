"""The cached tables the REVa report reads for one model, as the per-sample tables of
:func:`vcrbench.reva.report.reva_tables`.

``files`` is one model's part of the report rule's mapping (rules/functions/reva.smk,
``reva_inputs()``): ``imagenet_c[set][corruption]`` -> samples / scored / predictions shards,
``attacks[set][attack]`` -> scored / predictions, ``curves[corruption]`` -> the weak and the
evaluation set's metrics and replicates, ``clean[set]`` -> clean predictions.

The comparison's mapping (``reva_comparison_inputs()``) has, per method label, the
clean predictions ``clean`` of the evaluation images, ``imagenet_c[corruption]`` -> samples /
scored / predictions shards, and ``white_box[attack]`` and ``transfer[attack]`` -> scored /
predictions (:func:`load_comparison_inputs`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.core.tables import read_table, read_tables
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.outcomes import sample_outcomes
from vcrbench.reva.comparison import MethodInputs


def _outcomes(index: pa.Table, scored: list[str], predictions: list[str], clean: pa.Table
              ) -> pa.Table:
    return sample_outcomes(index, read_tables(scored, ["sample_id", "image_id", "dv"]),
                           read_tables(predictions), clean)


def severity_outcomes(index: pa.Table, shards: Mapping[str, list[str]], clean: pa.Table
                      ) -> pa.Table:
    """``image_id``, ``severity`` (1–5), ``correct`` (1000 classes; null without a label),
    ``dv`` of every sample of a set's ImageNet-C severity sample."""
    outcomes = _outcomes(index, shards["scored"], shards["predictions"], clean)
    samples = read_tables(shards["samples"], ["sample_id", "severity"])
    if samples.column("sample_id").to_pylist() != outcomes.column("sample_id").to_pylist():
        raise VcrbenchError("ImageNet-C samples and their outcomes do not match; re-run the "
                            "reva imagenet-c rules")
    return pa.table({
        "image_id": outcomes.column("image_id"),
        "severity": samples.column("severity"),
        "correct": outcomes.column("correct"),
        "dv": outcomes.column("dv"),
    })


def attack_outcomes(index: pa.Table, files: Mapping[str, str], clean: pa.Table) -> pa.Table:
    """``image_id``, ``correct`` (1000 classes), ``dv`` of a set's adversarial images."""
    outcomes = _outcomes(index, [files["scored"]], [files["predictions"]], clean)
    return outcomes.select(["image_id", "correct", "dv"])


def load_model_inputs(files: Mapping, indexes: Mapping[str, pa.Table]) -> dict:
    """Read one model's tables (module docstring) for ``reva_tables``: ``clean``,
    ``severities``, ``attacks`` and ``curves``."""
    clean = {s: read_table(path) for s, path in files["clean"].items()}
    severities = {
        s: {c: severity_outcomes(indexes[s], shards, clean[s]) for c, shards in by.items()}
        for s, by in files["imagenet_c"].items()
    }
    attacks = {
        s: {a: attack_outcomes(indexes[s], f, clean[s]) for a, f in by.items()}
        for s, by in files["attacks"].items()
    }
    curves = {
        c: {
            s: (read_table(f[f"{s}_metrics"]), read_table(f[f"{s}_replicates"]))
            for s in ("weak", "evaluation")
        }
        for c, f in files["curves"].items()
    }
    return {"clean": clean, "severities": severities, "attacks": attacks, "curves": curves}


def load_comparison_inputs(files: Mapping, models: Mapping[str, str], index: pa.Table
                           ) -> dict[str, MethodInputs]:
    """Read the comparison's tables (module docstring; ``models``: label -> model string):
    method label -> its :class:`~vcrbench.reva.comparison.MethodInputs` on the evaluation
    images ``index``, in the order of ``models``."""
    methods = {}
    for label, model in models.items():
        f = files[label]
        clean = read_table(f["clean"])
        methods[label] = MethodInputs(
            model=model, clean=clean,
            severities={c: severity_outcomes(index, shards, clean)
                        for c, shards in f["imagenet_c"].items()},
            white_box={a: attack_outcomes(index, p, clean) for a, p in f["white_box"].items()},
            transfer={a: attack_outcomes(index, p, clean) for a, p in f["transfer"].items()},
        )
    return methods


def correct_count(table: pa.Table) -> int:
    """Samples with ``correct`` true (a check for logs)."""
    return int(pc.sum(pc.cast(pc.fill_null(table.column("correct"), False), pa.int64())).as_py()
               or 0)
