"""The ranking of the pool and the weak-robust validation set.

Within a group (a class, a 16-class category, or the whole pool) images are ordered by score
descending (weakest first), ties by ``image_id``. Only clean-correct images are weak robust
samples (the paper's definition); the others keep their scores and get no rank.

Schema of ``reva/ranking.parquet`` (one row per pool image, sorted by group, rank (nulls last)
and ``image_id``): ``image_id``, ``group`` (the class WNID, the category name or ``pool``),
``group_by`` (``class``, ``category16`` or ``pool``), ``rank`` (int32, 1 = weakest; null:
clean-misclassified), ``score`` (float64), ``clean_correct``, ``selected`` (bool).
``reva/weak/index.parquet``: the selected rows of the pool index (its columns), by ``image_id``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.errors import VcrbenchError

GROUP_BY = ("auto", "class", "category16", "pool")
#: The 16 categories in index order (``category16``); names only, so no data import is needed.
N_CATEGORIES16 = 16


def _groups(resilience: pa.Table, group_by: str, category_names) -> list[str]:
    if group_by == "class":
        return [str(w) for w in resilience.column("wnid").to_pylist()]
    if group_by == "category16":
        return [category_names[c] for c in resilience.column("category16").to_pylist()]
    return ["pool"] * resilience.num_rows


def _feasible(resilience: pa.Table, group_by: str, size: int) -> tuple[int, str | None]:
    """Images per group and, when the rule cannot give ``size`` images, why."""
    eligible = np.asarray(resilience.column("clean_correct").to_pylist(), bool)
    if group_by == "pool":
        return size, None
    if group_by == "class":
        groups = np.asarray(resilience.column("label").to_numpy())
        n_groups = np.unique(groups).size
    else:
        groups = np.asarray(resilience.column("category16").to_numpy())
        if (groups < 0).any():
            return 0, "not every pool image belongs to one of the 16 categories"
        n_groups = N_CATEGORIES16
    k = size // n_groups
    if k < 1:
        return 0, f"{size} images for {n_groups} groups is fewer than one per group"
    counts = {g: int(eligible[groups == g].sum()) for g in np.unique(groups)}
    if len(counts) < n_groups or min(counts.values()) < k:
        short = min(counts.values()) if len(counts) == n_groups else 0
        return 0, (f"{k} per group needs {k} clean-correct images in each of {n_groups} groups; "
                   f"the thinnest has {short}")
    return k, None


def select_weak(resilience: pa.Table, pool_index: pa.Table, *, size: int,
                group_by: str = "auto", category_names=None) -> tuple[pa.Table, pa.Table, str]:
    """Rank the pool and take the weak-robust validation set.

    Args:
        resilience: ``reva/resilience.parquet`` (:mod:`vcrbench.reva.resilience`).
        pool_index: the pool's index (the weak index takes its rows and columns).
        size: images wanted (``reva.weak.size``), exactly.
        group_by: ``class`` (K = size // classes per class, the remainder from the weakest of
            the next ranks), ``category16`` (likewise per category), ``pool`` (the ``size``
            weakest overall), or ``auto``: the first of these that the pool allows.
        category_names: the 16 category names in ``category16`` order (default:
            :data:`vcrbench.data.imagenet16.CATEGORIES16`).

    Returns:
        (ranking table, weak index, a one-line description of the selection).
    """
    if group_by not in GROUP_BY:
        raise VcrbenchError(f"reva.weak.group_by must be one of {GROUP_BY}, got {group_by!r}")
    if category_names is None:
        from vcrbench.data.imagenet16 import CATEGORIES16 as category_names
    eligible_n = int(pc.sum(pc.cast(resilience.column("clean_correct"), pa.int64())).as_py() or 0)
    if size > eligible_n:
        raise VcrbenchError(
            f"reva.weak.size is {size} but only {eligible_n} of the {resilience.num_rows} pool "
            "images are classified correctly (weak robust samples must be); lower "
            "reva.weak.size or give a larger pool"
        )
    reasons = []
    for rule in (("class", "category16", "pool") if group_by == "auto" else (group_by,)):
        k, why = _feasible(resilience, rule, size)
        if why is None:
            break
        reasons.append(f"{rule}: {why}")
    else:
        raise VcrbenchError(f"reva.weak.group_by {group_by}: {why}; use group_by pool or auto")
    groups = _groups(resilience, rule, category_names)
    ids = resilience.column("image_id").to_pylist()
    scores = np.asarray(resilience.column("score").to_numpy(), np.float64)
    correct = np.asarray(resilience.column("clean_correct").to_pylist(), bool)
    order = sorted(range(len(ids)), key=lambda i: (groups[i], not correct[i], -scores[i], ids[i]))
    rank = [None] * len(ids)
    selected = np.zeros(len(ids), bool)
    seen: dict[str, int] = {}
    for i in order:
        if not correct[i]:
            continue
        seen[groups[i]] = seen.get(groups[i], 0) + 1
        rank[i] = seen[groups[i]]
        selected[i] = rank[i] <= k
    # size // groups per group can leave a remainder: the weakest of the next ranks fill it
    remainder = size - int(selected.sum())
    if remainder > 0:
        rest = sorted((i for i in range(len(ids)) if correct[i] and not selected[i]),
                      key=lambda i: (rank[i], -scores[i], ids[i]))
        selected[rest[:remainder]] = True
    ranking = pa.table({
        "image_id": pa.array([ids[i] for i in order], pa.string()),
        "group": pa.array([groups[i] for i in order], pa.string()),
        "group_by": pa.array([rule] * len(ids), pa.string()),
        "rank": pa.array([rank[i] for i in order], pa.int32()),
        "score": pa.array(scores[order], pa.float64()),
        "clean_correct": pa.array(correct[order], pa.bool_()),
        "selected": pa.array(selected[order], pa.bool_()),
    })
    chosen = {ids[i] for i in np.flatnonzero(selected)}
    mask = pa.array([i in chosen for i in pool_index.column("image_id").to_pylist()])
    weak = pool_index.filter(mask).sort_by("image_id")
    n_groups = len(set(groups))
    extra = size - k * n_groups
    fill = f" and the {extra} weakest of the next ranks" if rule != "pool" and extra else ""
    how = {"class": f"the {k} weakest of each of {n_groups} classes{fill}",
           "category16": f"the {k} weakest of each of the 16 categories{fill}",
           "pool": f"the {size} weakest of the whole pool"}[rule]
    why = f" ({'; '.join(reasons)})" if reasons else ""
    description = (f"weak-robust validation set: {weak.num_rows} images, {how}, of "
                   f"{eligible_n} clean-correct pool images{why}")
    return ranking, weak, description
