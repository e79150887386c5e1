"""R under several sampling designs of the same samples, and the paired intervals of its
differences from a reference design (``sampling.spacing``: ``linear``, the paper's uniform
parameter law, against ``visual`` and ``adaptive``).

The designs draw sample ``i`` of a corruption on the same image with the same noise seed
(:mod:`vcrbench.evaluation.samples`); only its parameters differ. Each design's outcomes are
fitted by :func:`vcrbench.vcr.estimation.fit_curves` with the same settings, whose bootstrap
gives every image the same weight in replicate ``b`` whatever the design
(:mod:`vcrbench.curves.resampling`). So replicate ``b`` of one design is paired with replicate
``b`` of the reference, and the 95 % interval of ``R_design − R_reference`` is the percentile
interval of the replicate differences (each R_b the exact area of its replicate curve,
:func:`vcrbench.curves.tables.replicate_areas`), as the retraining table pairs two models.
(With fewer than ``bootstrap.min_units`` images the samples are resampled instead, per design,
and the interval is conservative; ``resampled`` says so.)

Schema of the table (one row per design × property, the reference's own rows included):
``corruption``, ``design``, ``reference`` (strings), ``metric``, ``classes`` (int16), ``R``,
``R_lo``, ``R_hi`` (the design's R and 95 % interval), ``coverage`` (share of the M bins with
at least L samples), ``difference`` (R − R of the reference), ``difference_lo``,
``difference_hi``, ``verdict`` ("higher" / "lower" when the interval excludes 0, "within",
null when R is null), ``resampled``, ``note`` (why a value is null). A null R (too few bins
covered) gives a null difference, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from vcrbench.core.properties import IMAGENET_CLASSES, properties, select
from vcrbench.curves.bootstrap import metric_interval
from vcrbench.curves.tables import replicate_areas
from vcrbench.errors import VcrbenchError
from vcrbench.vcr.estimation import fit_curves

SCHEMA = pa.schema(
    [
        ("corruption", pa.string()),
        ("design", pa.string()),
        ("reference", pa.string()),
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("R", pa.float64()),
        ("R_lo", pa.float64()),
        ("R_hi", pa.float64()),
        ("coverage", pa.float64()),
        ("difference", pa.float64()),
        ("difference_lo", pa.float64()),
        ("difference_hi", pa.float64()),
        ("verdict", pa.string()),
        ("resampled", pa.string()),
        ("note", pa.string()),
    ]
)


def check_paired(outcomes: Mapping[str, pa.Table]) -> None:
    """Refuse designs whose outcome tables do not put the same samples on the same images: the
    sample ids of every table are ``0 … n − 1`` in order, and a sample id two tables share has
    the same image in both. (A design may hold more samples than another, e.g. the reference
    drawn at a larger N for its coverage: its first samples are then the other's; the extra
    ones fall on the same images, whose bootstrap weights are shared.)"""
    if len(outcomes) < 2:
        raise VcrbenchError(f"paired differences need at least two designs, got {list(outcomes)}")
    images = {}
    for name, table in outcomes.items():
        ids = table.column("sample_id").to_numpy()
        if not np.array_equal(ids, np.arange(ids.size)):
            raise VcrbenchError(
                f"design {name!r}: sample ids are not 0 … {ids.size - 1} in order, so its "
                "samples cannot be matched with the other designs' different samples; give "
                "every design's whole outcomes table")
        images[name] = table.column("image_id").to_pylist()
    (first, own), *others = images.items()
    for name, other in others:
        common = min(len(own), len(other))
        differ = [i for i in range(common) if own[i] != other[i]]
        if differ:
            i = differ[0]
            raise VcrbenchError(
                f"designs {first!r} and {name!r} put {len(differ)} samples on different images "
                f"(sample {i}: {own[i]!r} against {other[i]!r}); a paired comparison needs each "
                "sample's image to be the same in every design: draw both from the same image "
                "index, seed and corruption")


def design_differences(
    outcomes: Mapping[str, pa.Table],
    *,
    corruption: str,
    reference: str = "linear",
    model: str = "model",
    bins: int,
    min_count: int,
    n_boot: int,
    seed: int,
    label_classes: int = IMAGENET_CLASSES,
    **fit_options,
) -> pa.Table:
    """R of every design and its paired difference from ``reference`` (module docstring).

    Args:
        outcomes: design name -> its outcomes table (:mod:`vcrbench.evaluation.outcomes`), the
            same samples on the same images (:func:`check_paired`; one may hold more).
        corruption, model: the key of the fits (the sample-bootstrap fallback's seed uses them).
        bins, min_count, n_boot, seed, label_classes, fit_options: as
            :func:`~vcrbench.vcr.estimation.fit_curves` (``min_coverage``, ``min_units``,
            ``right_anchor``), the same for every design.
    """
    if reference not in outcomes:
        raise VcrbenchError(f"reference design {reference!r} is not among {list(outcomes)}")
    check_paired(outcomes)
    fits = {name: fit_curves(table, model=model, corruption=corruption, bins=bins,
                             min_count=min_count, n_boot=n_boot, seed=seed,
                             label_classes=label_classes, **fit_options)
            for name, table in outcomes.items()}
    order = [reference, *(name for name in outcomes if name != reference)]
    rows = []
    for metric, classes in properties(label_classes):
        base = _metrics(fits[reference][2], metric, classes)
        if base is None:
            continue
        base_areas = replicate_areas(fits[reference][1], metric, classes)
        for name in order:
            own = _metrics(fits[name][2], metric, classes)
            row = {"corruption": corruption, "design": name, "reference": reference,
                   "metric": metric, "classes": classes, "difference": None,
                   "difference_lo": None, "difference_hi": None, "verdict": None,
                   **{k: (own or {}).get(k) for k in ("R", "R_lo", "R_hi", "coverage",
                                                       "resampled", "note")}}
            if own is not None and own["R"] is not None and base["R"] is not None:
                row["difference"] = own["R"] - base["R"]
                areas = replicate_areas(fits[name][1], metric, classes)
                if areas.size == base_areas.size and areas.size:
                    lo, hi = metric_interval(areas - base_areas)
                    if np.isfinite(lo) and np.isfinite(hi):
                        row["difference_lo"], row["difference_hi"] = lo, hi
                        row["verdict"] = "higher" if lo > 0 else "lower" if hi < 0 else "within"
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _metrics(metrics: pa.Table, metric: str, classes: int) -> dict | None:
    rows = select(metrics, metric, classes).to_pylist()
    return rows[0] if rows else None
