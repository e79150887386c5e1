"""HMRI and MRSI of a model against a human curve, from the cached curve tables.

A model property is compared with the human curve of the same metric (humans answer 16-way,
so only the model's 16-class accuracy / consistency rows get human-relative values). Point
values come from the two point-estimate curves, intervals (95 %) from pairing bootstrap
replicate ``b`` of the human curve with replicate ``b`` of the model curve (independent
bootstraps, so a draw from their product distribution). Both are integrated on the curves'
common grid (:data:`vcrbench.bootstrap.GRID`, step 0.001) with the exact positive part of the
piecewise-linear interpolant (:func:`vcrbench.metrics.grid_indices`); for these quadratic
splines that agrees with the exact integrals far below the 4th decimal.

Schema of ``metrics/<m>/<c>-human.parquet``: ``model, corruption, metric, classes, HMRI,
HMRI_lo, HMRI_hi, MRSI, MRSI_lo, MRSI_hi, A_h, A_m, human_source`` (the source string says
whose data and, for a transferred curve, from which corruption).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.bootstrap import metric_interval
from vcrbench.errors import VcrbenchError
from vcrbench.metrics import grid_indices

HUMAN_CLASSES = 16
SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("corruption", pa.string()),
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("HMRI", pa.float64()),
        ("HMRI_lo", pa.float64()),
        ("HMRI_hi", pa.float64()),
        ("MRSI", pa.float64()),
        ("MRSI_lo", pa.float64()),
        ("MRSI_hi", pa.float64()),
        ("A_h", pa.float64()),
        ("A_m", pa.float64()),
        ("human_source", pa.string()),
    ]
)


def _select(table: pa.Table, metric: str) -> pa.Table:
    mask = pc.and_(pc.equal(table.column("metric"), metric),
                   pc.equal(table.column("classes"), HUMAN_CLASSES))
    return table.filter(mask)


def _curve(curves: pa.Table, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    rows = _select(curves, metric)
    if rows.num_rows == 0:
        return None
    return rows.column("v").to_numpy(), rows.column("s").to_numpy()


def _replicates(replicates: pa.Table, metric: str) -> np.ndarray:
    rows = _select(replicates, metric)
    return np.array(rows.column("values").to_pylist(), dtype=np.float64)


def human_relative(
    model_curves: pa.Table,
    model_replicates: pa.Table,
    human_curves: pa.Table,
    human_replicates: pa.Table,
    *,
    model: str,
    corruption: str,
    source: str,
) -> pa.Table:
    """HMRI / MRSI rows for every metric both the model and the humans have (module docstring)."""
    rows = []
    for metric in sorted(set(human_curves.column("metric").to_pylist())):
        human = _curve(human_curves, metric)
        mine = _curve(model_curves, metric)
        if human is None or mine is None:
            continue
        if human[0].shape != mine[0].shape or not np.allclose(human[0], mine[0]):
            raise VcrbenchError("human and model curves are not on the same Δv grid")
        grid = human[0]
        point = grid_indices(human[1], mine[1], grid)
        h_reps = _replicates(human_replicates, metric)
        m_reps = _replicates(model_replicates, metric)
        b = min(len(h_reps), len(m_reps))
        if b < 1:
            raise VcrbenchError(f"{corruption} {metric}: no bootstrap replicates to pair")
        paired = grid_indices(h_reps[:b], m_reps[:b], grid)
        h_lo, h_hi = metric_interval(paired["HMRI"])
        m_lo, m_hi = metric_interval(paired["MRSI"])
        rows.append(
            {
                "model": model,
                "corruption": corruption,
                "metric": metric,
                "classes": HUMAN_CLASSES,
                "HMRI": float(point["HMRI"]),
                "HMRI_lo": h_lo,
                "HMRI_hi": h_hi,
                "MRSI": float(point["MRSI"]),
                "MRSI_lo": m_lo,
                "MRSI_hi": m_hi,
                "A_h": float(point["A_h"]),
                "A_m": float(point["A_m"]),
                "human_source": source,
            }
        )
    return pa.Table.from_pylist(rows, schema=SCHEMA)
