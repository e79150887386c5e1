"""The ImageNet-C comparison: a model's accuracy on the five fixed severities, next to its VCR.

ImageNet-C reports a corruption's robustness as the mean accuracy over its five severities
(Hendrycks & Dietterich 2019); the VCR paper (Fig. 5, Table 2) sets that against R_a and the Δv
coverage of the two test sets. The ImageNet-C sample of a run (``sampling.imagenet_c_n``: each
image at severities 1–5, see :mod:`vcrbench.evaluation.samples`) is scored and classified like
the uniform one; this module reduces its outcomes.

Schema of ``metrics/<m>/<c>-imagenet-c.parquet`` (one row per property that has samples):
``model``, ``corruption``, ``metric``, ``classes`` (as the VCR metrics), ``imagenet_c_mean``
(mean over the five severities of the per-severity rate), ``rate_s1`` … ``rate_s5`` (rate at
each severity; null where a severity has no sample), ``imagenet_c_coverage`` (Δv coverage of the
ImageNet-C sample with the run's M and L), ``imagenet_c_n`` (samples with the property).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.curves.binning import coverage
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.outcomes import OUTCOME_COLUMNS
from vcrbench.evaluation.samples import IMAGENET_C_LEVELS

SEVERITY_COLUMNS = tuple(f"rate_s{s}" for s in range(1, IMAGENET_C_LEVELS + 1))
SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("corruption", pa.string()),
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("imagenet_c_mean", pa.float64()),
        *[(name, pa.float64()) for name in SEVERITY_COLUMNS],
        ("imagenet_c_coverage", pa.float64()),
        ("imagenet_c_n", pa.int64()),
    ]
)


def severity_metrics(
    outcomes: pa.Table,
    severities: pa.Table,
    *,
    model: str,
    corruption: str,
    bins: int,
    min_count: int,
) -> pa.Table:
    """Per-severity rates and their mean for every property (module docstring).

    Args:
        outcomes: per-sample outcomes (:func:`vcrbench.evaluation.outcomes.sample_outcomes`) of the
            ImageNet-C sample.
        severities: its samples table(s): ``sample_id``, ``severity`` (1–5).
    """
    level = dict(
        zip(
            severities.column("sample_id").to_pylist(),
            severities.column("severity").to_pylist(),
            strict=True,
        )
    )
    try:
        severity = np.array([level[i] for i in outcomes.column("sample_id").to_pylist()])
    except KeyError as error:
        raise VcrbenchError(f"sample {error} has outcomes but no severity") from None
    if severity.size and not np.isin(severity, range(1, IMAGENET_C_LEVELS + 1)).all():
        raise VcrbenchError("ImageNet-C samples must have severities 1 to 5 (is this sample "
                            "uniform?)")
    dv_all = outcomes.column("dv").to_numpy()
    cover = float(coverage(dv_all, bins=bins, min_count=min_count)) if dv_all.size else 0.0
    rows = []
    for (metric, classes), (column, _) in OUTCOME_COLUMNS.items():
        success = outcomes.column(column).to_numpy(zero_copy_only=False)
        known = np.array([v is not None for v in success])
        if not known.any():
            continue
        ok = success[known].astype(bool)
        levels = severity[known]
        rates = {
            name: (float(ok[levels == s].mean()) if (levels == s).any() else None)
            for s, name in enumerate(SEVERITY_COLUMNS, start=1)
        }
        present = [r for r in rates.values() if r is not None]
        rows.append(
            {
                "model": model,
                "corruption": corruption,
                "metric": metric,
                "classes": classes,
                "imagenet_c_mean": float(np.mean(present)),
                **rates,
                "imagenet_c_coverage": cover,
                "imagenet_c_n": int(ok.size),
            }
        )
    return pa.Table.from_pylist(rows, schema=SCHEMA)
