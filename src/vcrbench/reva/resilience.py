"""Eq. 1 and the per-image robustness scores of the per-input resilient analyser.

For pool image ``x`` with label ``y`` and its N neighbours ``x'_i``
(:mod:`vcrbench.reva.analyser`; ``f`` the model's top-1 decision, ``p`` its softmax)::

    ms(x'_i) = 0 if f(x'_i) = y else max_k p_k(x'_i)      (Eq. 1: misprediction score)
    rho(x)   = (1 / N) sum_i ms(x'_i)                     (robustness score; high = weak)

``ms`` and ``rho`` are probabilities in [0, 1]. The fraction of mispredicted neighbours is the
second score (``reva.analyser.score: fraction``, the authors' ImageNet-100 script).

Schema of ``reva/resilience.parquet`` (one row per pool image, sorted by ``image_id``):
``image_id`` (string), ``label`` (int16), ``wnid`` (string), ``category16`` (int8, −1 none),
``pool`` (``training`` or ``evaluation``), ``clean_top1`` (int16), ``clean_p_top1`` (float32),
``clean_correct`` (bool), ``n_neighbours``, ``n_mispredicted`` (int32), ``rho`` (float64,
Eq. 1), ``fraction_mispredicted`` (float64, ``n_mispredicted / n_neighbours``), ``score``
(float64: ``rho`` or ``fraction_mispredicted``, the ranking score), ``unstable`` (bool:
``score > 0`` for ``misprediction``, ``fraction_mispredicted > unstable_fraction`` for
``fraction``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.errors import VcrbenchError

#: Values of ``reva.analyser.score``.
SCORES = ("misprediction", "fraction")
#: Values of the ``pool`` column (``reva.pool``).
POOLS = ("training", "evaluation")

SCHEMA = pa.schema([
    ("image_id", pa.string()), ("label", pa.int16()), ("wnid", pa.string()),
    ("category16", pa.int8()), ("pool", pa.string()), ("clean_top1", pa.int16()),
    ("clean_p_top1", pa.float32()), ("clean_correct", pa.bool_()),
    ("n_neighbours", pa.int32()), ("n_mispredicted", pa.int32()), ("rho", pa.float64()),
    ("fraction_mispredicted", pa.float64()), ("score", pa.float64()), ("unstable", pa.bool_()),
])


def _named(ids: list[str]) -> str:
    """A short list of image ids for a message."""
    shown = ", ".join(ids[:5])
    return f"{shown} (and {len(ids) - 5} more)" if len(ids) > 5 else shown


def misprediction_scores(top1: np.ndarray, p_top1: np.ndarray, label: np.ndarray) -> np.ndarray:
    """Eq. 1 per neighbour: ``(n,)`` float64, 0 where the top-1 decision ``top1`` is the label,
    else its softmax probability ``p_top1`` (``(n,)`` arrays, one entry per neighbour)."""
    top1, label = np.asarray(top1, np.int64), np.asarray(label, np.int64)
    return np.where(top1 == label, 0.0, np.asarray(p_top1, np.float64))


def resilience_table(pool_index: pa.Table, clean: pa.Table, neighbours: pa.Table, *, pool: str,
                     score: str = "misprediction", unstable_fraction: float = 0.3) -> pa.Table:
    """The scores of every pool image (module docstring).

    Args:
        pool_index: the pool images (``data/index.parquet`` columns; every label known).
        clean: ``image_id``, ``top1``, ``p_top1``: the model on the clean pool images, one row
            per pool image.
        neighbours: ``image_id``, ``neighbour`` (int32), ``top1`` (int16), ``p_top1``
            (float32): one row per neighbour; every pool image has the same number N >= 1.
        pool: ``training`` or ``evaluation`` (written in every row).
        score: ``misprediction`` (rank by ``rho``) or ``fraction``.
        unstable_fraction: the ``fraction`` score's threshold for ``unstable``, in [0, 1].

    Raises:
        VcrbenchError: naming the images that break the requirements above.
    """
    if score not in SCORES:
        raise VcrbenchError(f"reva.analyser.score must be one of {SCORES}, got {score!r}")
    if pool not in POOLS:
        raise VcrbenchError(f"the pool must be one of {POOLS}, got {pool!r}")
    if not 0.0 <= float(unstable_fraction) <= 1.0:
        raise VcrbenchError(f"reva.analyser.unstable_fraction must be in [0, 1], got "
                            f"{unstable_fraction!r}")
    pool_index = pool_index.sort_by("image_id")
    ids = pool_index.column("image_id").to_pylist()
    if len(set(ids)) != len(ids):
        raise VcrbenchError("the pool index lists an image twice")
    labels = pool_index.column("label").to_numpy().astype(np.int64)
    unlabelled = [i for i, label in zip(ids, labels, strict=True) if label < 0]
    if unlabelled:
        raise VcrbenchError(f"the analyser needs labelled pool images; {len(unlabelled)} have "
                            f"no label: {_named(unlabelled)}")
    row = {image_id: k for k, image_id in enumerate(ids)}
    clean_ids = clean.column("image_id").to_pylist()
    if len(clean_ids) != len(ids) or set(clean_ids) != set(ids):
        strangers = sorted(set(clean_ids) ^ set(ids))
        raise VcrbenchError("the clean predictions and the pool index do not hold the same "
                            f"images, one row each (differing: {_named(strangers)})")
    order = np.array([row[i] for i in clean_ids], np.int64)
    clean_top1 = np.empty(len(ids), np.int64)
    clean_p = np.empty(len(ids), np.float32)
    clean_top1[order] = clean.column("top1").to_numpy()
    clean_p[order] = clean.column("p_top1").to_numpy()

    owner_ids = neighbours.column("image_id").to_pylist()
    strangers = sorted(set(owner_ids) - set(row))
    if strangers:
        raise VcrbenchError(f"neighbours of images not in the pool: {_named(strangers)}")
    numbers = neighbours.column("neighbour").to_pylist()
    if len(set(zip(owner_ids, numbers, strict=True))) != len(owner_ids):
        raise VcrbenchError("a neighbour of a pool image is listed twice")
    owner = np.array([row[i] for i in owner_ids], np.int64)
    counts = np.bincount(owner, minlength=len(ids))
    if counts.size and (counts.min() < 1 or counts.min() != counts.max()):
        n = int(np.bincount(counts).argmax()) or int(counts.max())
        uneven = [ids[k] for k in np.flatnonzero((counts != n) | (counts == 0))]
        raise VcrbenchError(f"every pool image needs the same number N >= 1 of neighbours; most "
                            f"have {n}, these do not: {_named(uneven)}")
    top1 = neighbours.column("top1").to_numpy().astype(np.int64)
    mistaken = top1 != labels[owner]
    ms = misprediction_scores(top1, neighbours.column("p_top1").to_numpy(), labels[owner])
    n = counts.astype(np.float64)
    wrong = np.bincount(owner, weights=mistaken, minlength=len(ids))
    with np.errstate(invalid="ignore", divide="ignore"):  # only for an empty pool
        rho = np.bincount(owner, weights=ms, minlength=len(ids)) / n
        fraction = wrong / n
    ranking = rho if score == "misprediction" else fraction
    unstable = rho > 0 if score == "misprediction" else fraction > unstable_fraction
    return pa.table({
        "image_id": pa.array(ids, pa.string()),
        "label": pa.array(labels, pa.int16()),
        "wnid": pool_index.column("wnid").cast(pa.string()),
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
