"""From conditions to Δv: the trials of a model-vs-human experiment get the Δv of their
condition's measured stimuli, and each condition is summarised.

Trial ``j`` of a condition (in file order) gets the Δv of image ``perm[j mod K]`` of that
condition's distribution of K measured stimuli (:mod:`vcrbench.human.stimuli`), ``perm`` a
permutation keyed by ``(seed, experiment, condition)`` (stream
:data:`~vcrbench.core.seeding.TRIAL_DV`). So the human rates per Δv bin mix trials of
neighbouring conditions as their stimuli would; what is lost is the pairing of a trial's answer
with its own image's Δv (a documented approximation: the data do not record the image).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.core.seeding import TRIAL_DV
from vcrbench.errors import VcrbenchError


def assign_dv(trials: pa.Table, stimuli: pa.Table, *, seed: int, experiment: str) -> pa.Table:
    """``trials`` with ``dv`` set from the per-condition distributions of ``stimuli``
    (module docstring)."""
    conditions = trials.column("condition").to_numpy(zero_copy_only=False).astype(np.float64)
    order = np.argsort(trials.column("order").to_numpy(), kind="stable")
    stim_condition = stimuli.column("condition").to_numpy()
    stim_dv = stimuli.column("dv").to_numpy()
    dv = np.full(trials.num_rows, np.nan)
    for level in np.unique(conditions):
        values = stim_dv[stim_condition == level]
        if values.size == 0:
            raise VcrbenchError(f"human data: condition {level:g} has no measured stimuli")
        perm = TRIAL_DV.rng(seed, f"{experiment}-{level!r}").permutation(values.size)
        rows = order[conditions[order] == level]
        dv[rows] = values[perm[np.arange(rows.size) % values.size]]
    index = trials.schema.get_field_index("dv")
    return trials.set_column(index, "dv", pa.array(dv, pa.float64()))


def condition_summary(stimuli: pa.Table, accuracy: pa.Table) -> pa.Table:
    """Per condition: the accuracy table joined with Δv median and quartiles of the stimuli."""
    stats = {"dv_median": [], "dv_q25": [], "dv_q75": []}
    for level in accuracy.column("condition").to_pylist():
        values = pc.filter(stimuli.column("dv"), pc.equal(stimuli.column("condition"), level))
        q = np.quantile(values.to_numpy(), [0.5, 0.25, 0.75]) if len(values) else [np.nan] * 3
        for key, value in zip(stats, q, strict=True):
            stats[key].append(float(value))
    for key, values in stats.items():
        accuracy = accuracy.append_column(key, pa.array(values, pa.float64()))
    return accuracy
