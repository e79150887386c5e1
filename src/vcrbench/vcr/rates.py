"""Per-bin rates of one model on one corruption, from its per-sample outcomes (Algorithm 1's
first step; the table ``rates/<m>/<c>.parquet``, schema in :mod:`vcrbench.curves.tables`).

Apart from the curve fitting (:mod:`vcrbench.vcr.estimation`) so that the rates job does not pay
scipy's import (about half a second a job) for the splines it does not fit.
"""

from __future__ import annotations

import pyarrow as pa

from vcrbench.core.properties import IMAGENET_CLASSES, properties
from vcrbench.curves.binning import bin_rates
from vcrbench.curves.tables import CurveTables
from vcrbench.evaluation.outcomes import property_samples


def rates_table(outcomes: pa.Table, *, bins: int, min_count: int,
                label_classes: int = IMAGENET_CLASSES) -> pa.Table:
    """Per-bin counts and rates of every property that has samples (``label_classes``: the
    size of the data set's label space, :func:`~vcrbench.core.properties.properties`)."""
    tables = CurveTables()
    for metric, classes in properties(label_classes):
        samples = property_samples(outcomes, metric, classes)
        if samples.dv.size == 0:
            continue
        tables.add_rates(metric, classes,
                         bin_rates(samples.dv, samples.ok, bins=bins, min_count=min_count))
    return tables.table("rates")
