"""Eq. 1 and the per-image robustness scores of the per-input resilient analyser.

For pool image ``x`` with label ``y`` and its N neighbours ``x'_i``
(:mod:`vcrbench.reva.analyser`)::

    ms(x'_i) = 0 if f(x'_i) = y else max_k p_k(x'_i)      (Eq. 1: misprediction score)
    rho(x)   = (1 / N) sum_i ms(x'_i)                     (robustness score; high = weak)

Schema of ``reva/resilience.parquet`` (one row per pool image, sorted by ``image_id``):
``image_id``, ``label`` (int16), ``wnid``, ``category16`` (int8, −1 none), ``pool``
(``training`` or ``evaluation``), ``clean_top1`` (int16), ``clean_p_top1`` (float32),
``clean_correct`` (bool), ``n_neighbours``, ``n_mispredicted`` (int32), ``rho``,
``fraction_mispredicted`` (float64, in [0, 1]), ``score`` (float64: ``rho`` or
``fraction_mispredicted``, per ``reva.analyser.score``), ``unstable`` (bool: ``rho > 0``, or
``fraction_mispredicted > unstable_fraction`` for the fraction score).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.errors import VcrbenchError

SCORES = ("misprediction", "fraction")

SCHEMA = pa.schema([
    ("image_id", pa.string()), ("label", pa.int16()), ("wnid", pa.string()),
    ("category16", pa.int8()), ("pool", pa.string()), ("clean_top1", pa.int16()),
    ("clean_p_top1", pa.float32()), ("clean_correct", pa.bool_()),
    ("n_neighbours", pa.int32()), ("n_mispredicted", pa.int32()), ("rho", pa.float64()),
    ("fraction_mispredicted", pa.float64()), ("score", pa.float64()), ("unstable", pa.bool_()),
])


def misprediction_scores(top1: np.ndarray, p_top1: np.ndarray, label: np.ndarray) -> np.ndarray:
    """Eq. 1 per neighbour: 0 where the decision is the label, else its probability (float64)."""
    top1, label = np.asarray(top1), np.asarray(label)
    return np.where(top1 == label, 0.0, np.asarray(p_top1, np.float64))


def resilience_table(pool_index: pa.Table, clean: pa.Table, neighbours: pa.Table, *, pool: str,
                     score: str = "misprediction", unstable_fraction: float = 0.3) -> pa.Table:
    """The scores of every pool image (module docstring).

    Args:
        pool_index: the pool images (``data/index.parquet`` columns).
        clean: ``image_id``, ``top1``, ``p_top1``: the model on the clean images.
        neighbours: ``image_id``, ``neighbour``, ``top1``, ``p_top1``: one row per neighbour.
        pool: ``training`` or ``evaluation`` (written in every row).
    """
    if score not in SCORES:
        raise VcrbenchError(f"reva.analyser.score must be one of {SCORES}, got {score!r}")
    ids = pool_index.column("image_id").to_pylist()
    labels = pool_index.column("label").to_numpy().astype(np.int64)
    unlabelled = [i for i, label in zip(ids, labels, strict=True) if label < 0]
    if unlabelled:
        raise VcrbenchError(f"the analyser needs labelled pool images; unlabelled: "
                            f"{unlabelled[:5]}")
    row = {image_id: k for k, image_id in enumerate(ids)}
    clean_ids = clean.column("image_id").to_pylist()
    if sorted(clean_ids) != sorted(ids):
        raise VcrbenchError("clean predictions and the pool index hold different images")
    order = np.array([row[i] for i in clean_ids])
    clean_top1 = np.empty(len(ids), np.int64)
    clean_p = np.empty(len(ids), np.float32)
    clean_top1[order] = clean.column("top1").to_numpy()
    clean_p[order] = clean.column("p_top1").to_numpy()

    owner_ids = neighbours.column("image_id").to_pylist()
    missing = sorted(set(owner_ids) - set(row))
    if missing:
        raise VcrbenchError(f"neighbours of images not in the pool: {missing[:5]}")
    owner = np.array([row[i] for i in owner_ids], np.int64)
    counts = np.bincount(owner, minlength=len(ids))
    if counts.size and (counts.min() < 1 or counts.min() != counts.max()):
        uneven = [ids[k] for k in np.flatnonzero(counts != counts.max())][:5]
        raise VcrbenchError(f"every pool image needs the same number N >= 1 of neighbours; "
                            f"these differ: {uneven}")
    top1 = neighbours.column("top1").to_numpy()
    ms = misprediction_scores(top1, neighbours.column("p_top1").to_numpy(), labels[owner])
    wrong = np.bincount(owner, weights=top1 != labels[owner], minlength=len(ids))
    n = counts.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.bincount(owner, weights=ms, minlength=len(ids)) / n
        fraction = wrong / n
    ranking = rho if score == "misprediction" else fraction
    unstable = rho > 0 if score == "misprediction" else fraction > unstable_fraction
    return pa.table({
        "image_id": pa.array(ids, pa.string()),
        "label": pa.array(labels, pa.int16()),
        "wnid": pool_index.column("wnid"),
        "category16": pool_index.column("category16").cast(pa.int8()),
        "pool": pa.array([pool] * len(ids), pa.string()),
        "clean_top1": pa.array(clean_top1, pa.int16()),
        "clean_p_top1": pa.array(clean_p, pa.float32()),
        "clean_correct": pa.array(clean_top1 == labels, pa.bool_()),
        "n_neighbours": pa.array(counts, pa.int32()),
        "n_mispredicted": pa.array(wrong.astype(np.int64), pa.int32()),
        "rho": pa.array(rho, pa.float64()),
        "fraction_mispredicted": pa.array(fraction, pa.float64()),
        "score": pa.array(ranking, pa.float64()),
        "unstable": pa.array(unstable, pa.bool_()),
    }, schema=SCHEMA)
