"""Per-sample outcomes: was the corrupted image classified correctly, and consistently with the
clean image, in the 1000-class and the 16-class space.

Schema of ``outcomes/<m>/<c>.parquet`` (one row per sample, ``sample_id`` order):
``sample_id`` (int64), ``image_id`` (string), ``dv`` (float64), ``clean_correct``,
``correct``, ``consistent``, ``clean_correct16``, ``correct16``, ``consistent16`` (bool; the
accuracy columns are null where the image has no label in that space).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.core.tables import read_table, read_tables
from vcrbench.errors import VcrbenchError

#: Each property of an ImageNet run (:mod:`vcrbench.core.properties`) -> (outcome column,
#: clean-outcome column); :func:`outcome_columns` for any label space.
OUTCOME_COLUMNS: dict[tuple[str, int], tuple[str, str | None]] = {
    ("accuracy", 1000): ("correct", "clean_correct"),
    ("consistency", 1000): ("consistent", None),
    ("accuracy", 16): ("correct16", "clean_correct16"),
    ("consistency", 16): ("consistent16", None),
}


def outcome_columns(metric: str, classes: int) -> tuple[str, str | None]:
    """(outcome column, clean-outcome column) of a property: the 16-class columns for 16, the
    label space's own (``correct``, ``consistent``) for any other count (1000, 10, 100)."""
    return OUTCOME_COLUMNS[(metric, 16 if classes == 16 else 1000)]


def _masked(values: np.ndarray, known: np.ndarray) -> pa.Array:
    return pa.array(values, pa.bool_(), mask=~known)


def sample_outcomes(
    index: pa.Table, scored: pa.Table, predictions: pa.Table, clean: pa.Table
) -> pa.Table:
    """Join scored samples, their predictions, the clean predictions and the labels."""
    if (
        scored.num_rows != predictions.num_rows
        or not pc.all(pc.equal(scored.column("sample_id"), predictions.column("sample_id"))).as_py()
    ):
        raise VcrbenchError("scored shards and prediction shards do not hold the same samples")
    image_row = {image_id: i for i, image_id in enumerate(index.column("image_id").to_pylist())}
    clean_row = {image_id: i for i, image_id in enumerate(clean.column("image_id").to_pylist())}
    image_ids = scored.column("image_id").to_pylist()
    try:
        rows = np.array([image_row[i] for i in image_ids], dtype=np.int64)
        clean_rows = np.array([clean_row[i] for i in image_ids], dtype=np.int64)
    except KeyError as error:
        raise VcrbenchError(
            f"image {error} of a scored shard is not in the index / clean predictions"
        ) from None
    label = index.column("label").to_numpy()[rows]
    category = index.column("category16").to_numpy()[rows]
    top1 = predictions.column("top1").to_numpy()
    top1_16 = predictions.column("top1_16").to_numpy()
    clean_top1 = clean.column("top1").to_numpy()[clean_rows]
    clean_top1_16 = clean.column("top1_16").to_numpy()[clean_rows]
    has_label, has_category = label >= 0, category >= 0
    return pa.table(
        {
            "sample_id": scored.column("sample_id"),
            "image_id": scored.column("image_id"),
            "dv": scored.column("dv"),
            "clean_correct": _masked(clean_top1 == label, has_label),
            "correct": _masked(top1 == label, has_label),
            "consistent": pa.array(top1 == clean_top1, pa.bool_()),
            "clean_correct16": _masked(clean_top1_16 == category, has_category),
            "correct16": _masked(top1_16 == category, has_category),
            "consistent16": pa.array(top1_16 == clean_top1_16, pa.bool_()),
        }
    )


def read_outcomes(index: str, scored: list[str], predictions: list[str], clean: str) -> pa.Table:
    """:func:`sample_outcomes` of the cached tables: index, scored and prediction shards (the
    same samples, in order) and the clean predictions."""
    return sample_outcomes(
        read_table(index),
        read_tables(scored, ["sample_id", "image_id", "dv"]),
        read_tables(predictions),
        read_table(clean),
    )


class PropertySamples(NamedTuple):
    """The samples that have one property: ``(n,)`` arrays."""

    dv: np.ndarray
    ok: np.ndarray
    #: clean success of each sample's image (None for consistency)
    clean_ok: np.ndarray | None
    image_id: np.ndarray


def property_samples(outcomes: pa.Table, metric: str, classes: int) -> PropertySamples:
    """Δv, success, clean success (None for consistency) and image of the samples that have the
    property. Samples without a label in that space are left out of accuracy.
    """
    column, clean_column = outcome_columns(metric, classes)
    success = outcomes.column(column)
    keep = pc.is_valid(success).to_numpy(zero_copy_only=False)
    dv = outcomes.column("dv").to_numpy()[keep]
    ok = success.to_numpy(zero_copy_only=False)[keep].astype(bool)
    clean_ok = None
    if clean_column is not None:
        clean_ok = outcomes.column(clean_column).to_numpy(zero_copy_only=False)[keep].astype(bool)
    images = np.asarray(outcomes.column("image_id").to_pylist(), dtype=object)[keep]
    return PropertySamples(dv, ok, clean_ok, images.astype(str))
