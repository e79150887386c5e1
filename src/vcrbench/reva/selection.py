"""The ranking of the pool and the weak-robust validation set (REVa Sec. 3.1.1–3.1.2).

Only clean-correct pool images are *eligible*: a weak robust sample is one the model classifies
correctly while it misclassifies its neighbours (the paper's definition); the others keep their
scores and get no rank. Within a group (a class, a 16-class category, or the whole pool) the
eligible images are ranked by score descending (weakest first), ties by ``image_id``.

The weak-robust validation set has exactly ``size`` images (``reva.weak.size``; the workflow
names the set's shards before any job runs): the K = size // groups weakest of every group
(the paper's "first K samples of each class") and, where ``size`` is not a multiple of the
number of groups, the remainder from the next ranks (rank K + 1 of every group, weakest first,
then rank K + 2, ...), so no group has more than one image above K.

``reva.weak.draw: random-unselected`` takes, instead, a baseline for part 1's positive control
(docs/reva.md): as many clean-correct images of every group as the weakest-first rule takes,
drawn at random from the eligible images that rule leaves out (each image's key is a hash of the
seed and its ``image_id``, so the draw does not depend on the pool's order; in every group the
smallest keys, as many as the weak set holds there, its remainder included). It holds seen
images that the analyser did not select, which separates the selection's effect from seen versus
unseen images.

Schemas:

- ``reva/ranking.parquet`` (one row per pool image, sorted by ``group``, ``rank`` (nulls last)
  and ``image_id``): ``image_id``, ``group`` (string: the class WNID, the 16-category name, or
  ``pool``), ``group_by`` (string: ``class``, ``category16`` or ``pool``), ``rank`` (int32,
  1 = weakest in its group among the eligible images; null: clean-misclassified), ``score``
  (float64), ``clean_correct`` (bool), ``selected`` (bool: in the weak-robust validation set, or
  in the random baseline when ``draw`` is ``random-unselected``).
- ``reva/weak/index.parquet``: the selected rows of the pool index, with exactly its columns
  and types (those of ``data/index.parquet``), sorted by ``image_id``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from vcrbench.data.imagenet16 import CATEGORIES16
from vcrbench.errors import VcrbenchError

#: Values of ``reva.weak.group_by``; ``auto`` tries the other three in this order.
GROUP_BY = ("auto", "class", "category16", "pool")
RULES = GROUP_BY[1:]
#: Values of ``reva.weak.draw`` (the paper's weakest first, or the control's random baseline)
#: and what the reports and figures call the set each draws.
SET_NAMES = {"weakest": "weak-robust set", "random-unselected": "random baseline set"}
DRAWS = tuple(SET_NAMES)

SCHEMA = pa.schema([
    ("image_id", pa.string()), ("group", pa.string()), ("group_by", pa.string()),
    ("rank", pa.int32()), ("score", pa.float64()), ("clean_correct", pa.bool_()),
    ("selected", pa.bool_()),
])


def _plan(resilience: pa.Table, rule: str, size: int, eligible: np.ndarray,
          category_names: Sequence[str]) -> tuple[list[str], int, int] | str:
    """``(group of every image, K per group, number of groups)`` of a rule, or why the pool does
    not allow it."""
    n = resilience.num_rows
    if rule == "pool":
        return ["pool"] * n, size, 1
    if rule == "class":
        labels = resilience.column("label").to_numpy().astype(np.int64)
        wnids = resilience.column("wnid").to_pylist()
        name = {}
        for label, wnid in zip(labels, wnids, strict=True):
            name.setdefault(int(label), wnid if wnid else f"class {label}")
        keys = labels
        n_groups = len(name)
        unit, one = "classes", "class"
        groups = [name[int(label)] for label in labels]
    else:
        keys = resilience.column("category16").to_numpy().astype(np.int64)
        missing = int(np.sum(keys < 0))
        if missing:
            return f"{missing} of the {n} pool images belong to none of the 16 categories"
        n_groups = len(category_names)
        if keys.size and keys.max() >= n_groups:
            return f"category16 {int(keys.max())} is not one of the {n_groups} categories"
        unit, one = "categories", "category"
        groups = [category_names[k] for k in keys]
    k = size // n_groups
    if k < 1:
        return f"{size} images for {n_groups} {unit} is fewer than one per {one}"
    counts = np.bincount(keys[eligible], minlength=max(n_groups, int(keys.max()) + 1))
    # eligible images per group (a category absent from the pool has 0)
    present = counts[np.unique(keys)] if rule == "class" else counts[:n_groups]
    if present.min() < k:
        return (f"{k} per {one} needs {k} clean-correct images in each of the {n_groups} "
                f"{unit}; {int(np.sum(present < k))} have fewer (the thinnest "
                f"{int(present.min())})")
    return groups, k, n_groups


def select_weak(resilience: pa.Table, pool_index: pa.Table, *, size: int,
                group_by: str = "auto", category_names: Sequence[str] | None = None,
                draw: str = "weakest", seed: int = 0) -> tuple[pa.Table, pa.Table, str]:
    """Rank the pool and take the weak-robust validation set (module docstring).

    Args:
        resilience: ``reva/resilience.parquet`` (:mod:`vcrbench.reva.resilience`; the columns
            ``image_id``, ``label``, ``wnid``, ``category16``, ``score``, ``clean_correct`` are
            read).
        pool_index: the pool's index (the weak index takes its rows and columns); the same
            images as ``resilience``.
        size: images wanted (``reva.weak.size``), exactly.
        group_by: ``class`` (K = size // classes per class, classes = distinct labels of the
            pool), ``category16`` (K = size // 16 per category), ``pool`` (the ``size`` weakest
            overall), or ``auto``: the first of these three that the pool allows.
        category_names: the 16 category names in ``category16`` order (default
            :data:`vcrbench.data.imagenet16.CATEGORIES16`).
        draw: ``weakest`` (the paper) or ``random-unselected`` (the control's baseline, module
            docstring; ``reva.weak.draw``).
        seed: keys the random baseline's draw (the run seed).

    Returns:
        (ranking table, weak index, a one-line description of the selection).

    Raises:
        VcrbenchError: naming ``reva.weak.size`` when ``size`` exceeds the eligible images,
            ``reva.weak.group_by`` when an explicit rule is impossible for this pool,
            ``reva.weak.draw`` when the pool is too small for the random baseline.
    """
    if draw not in DRAWS:
        raise VcrbenchError(f"reva.weak.draw must be one of {DRAWS}, got {draw!r}")
    if group_by not in GROUP_BY:
        raise VcrbenchError(f"reva.weak.group_by must be one of {GROUP_BY}, got {group_by!r}")
    if isinstance(size, bool) or int(size) != size or size < 1:
        raise VcrbenchError(f"reva.weak.size must be a positive integer, got {size!r}")
    size = int(size)
    names = tuple(CATEGORIES16 if category_names is None else category_names)
    ids = resilience.column("image_id").to_pylist()
    pool_ids = pool_index.column("image_id").to_pylist()
    if len(set(ids)) != len(ids) or sorted(ids) != sorted(pool_ids):
        raise VcrbenchError("the resilience table and the pool index do not hold the same "
                            "images, one row each; re-run reva_analyse")
    correct = np.asarray(resilience.column("clean_correct").to_pylist(), bool)
    scores = resilience.column("score").to_numpy().astype(np.float64)
    eligible = int(correct.sum())
    if size > eligible:
        raise VcrbenchError(
            f"reva.weak.size is {size} but only {eligible} of the {len(ids)} pool images are "
            "classified correctly (weak robust samples must be); lower reva.weak.size or give "
            "a larger pool"
        )
    reasons = []
    for rule in (RULES if group_by == "auto" else (group_by,)):
        plan = _plan(resilience, rule, size, correct, names)
        if not isinstance(plan, str):
            break
        reasons.append(f"{rule}: {plan}")
    else:
        raise VcrbenchError(
            f"reva.weak.group_by is {group_by}, but {plan}; set reva.weak.group_by to auto (the "
            "first rule the pool allows) or pool, or change reva.weak.size"
        )
    groups, k, n_groups = plan

    # rank within each group: eligible images by score descending, ties by image_id
    rank: list[int | None] = [None] * len(ids)
    seen: dict[str, int] = {}
    for i in sorted(np.flatnonzero(correct), key=lambda i: (groups[i], -scores[i], ids[i])):
        seen[groups[i]] = seen.get(groups[i], 0) + 1
        rank[i] = seen[groups[i]]
    selected = np.array([r is not None and r <= k for r in rank], bool)
    extra = size - int(selected.sum())
    if extra > 0:  # size is not a multiple of the groups: the next ranks, weakest first
        rest = sorted((i for i in range(len(ids)) if correct[i] and not selected[i]),
                      key=lambda i: (rank[i], -scores[i], ids[i]))
        selected[rest[:extra]] = True
    if draw == "random-unselected":
        selected = _draw_baseline(correct & ~selected, groups, selected,
                                  lambda i: (_random_key(seed, ids[i]), ids[i]))

    order = sorted(range(len(ids)), key=lambda i: (groups[i], rank[i] is None,
                                                   rank[i] or 0, ids[i]))
    ranking = pa.table({
        "image_id": pa.array([ids[i] for i in order], pa.string()),
        "group": pa.array([groups[i] for i in order], pa.string()),
        "group_by": pa.array([rule] * len(ids), pa.string()),
        "rank": pa.array([rank[i] for i in order], pa.int32()),
        "score": pa.array(scores[order], pa.float64()),
        "clean_correct": pa.array(correct[order], pa.bool_()),
        "selected": pa.array(selected[order], pa.bool_()),
    }, schema=SCHEMA)
    chosen = {ids[i] for i in np.flatnonzero(selected)}
    weak = pool_index.filter(pa.array([i in chosen for i in pool_ids], pa.bool_()))
    weak = weak.sort_by("image_id")
    text = _description(rule, size, k, n_groups, eligible, extra, reasons, group_by)
    if draw == "random-unselected":
        text = (f"Random baseline (reva.weak.draw random-unselected, seed {seed}), not the "
                f"weak-robust set: {size} of the {eligible - size} eligible pool images that the "
                f"weakest-first rule leaves out, as many of each group as it takes; that rule: "
                + text)
    return ranking, weak, text


def _random_key(seed: int, image_id: str) -> int:
    """An image's place in the random baseline's draw: the first 8 bytes of a SHA-256 of the
    seed and its id (independent of the pool's order and of the other images)."""
    digest = hashlib.sha256(f"reva-baseline:{seed}:{image_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _draw_baseline(candidates: np.ndarray, groups: list[str], weak: np.ndarray, key
                   ) -> np.ndarray:
    """The random baseline's mask: in every group, as many candidates as the weak set ``weak``
    holds there, those first by ``key(i)``."""
    quota = Counter(groups[i] for i in np.flatnonzero(weak))
    by_group: dict[str, list[int]] = {}
    for i in np.flatnonzero(candidates):  # one pass: a pool can hold a million images
        by_group.setdefault(groups[i], []).append(int(i))
    selected = np.zeros(len(groups), bool)
    short = []
    for g, n in sorted(quota.items()):
        drawn = sorted(by_group.get(g, []), key=key)
        if len(drawn) < n:
            short.append(f"{g}: {len(drawn)} for {n}")
        selected[drawn[:n]] = True
    if short:
        raise VcrbenchError(
            f"reva.weak.draw is random-unselected, but {len(short)} of the {len(quota)} groups "
            f"have fewer clean-correct images outside the weak set than it holds there "
            f"({'; '.join(short[:3])}); lower reva.weak.size or give a larger pool")
    return selected


def _description(rule: str, size: int, k: int, n_groups: int, eligible: int, extra: int,
                 reasons: list[str], group_by: str) -> str:
    """One line: how many images, of how many eligible ones, by which rule and why."""
    text = f"{size} weakest of {eligible} eligible (clean-correct) pool images"
    if rule == "pool":
        text += ", over the whole pool"
    else:
        unit = "classes" if rule == "class" else "16-class categories"
        text += f": the {k} weakest of each of the {n_groups} {unit}"
        if extra:
            text += (f" and {extra} more from the next ranks (reva.weak.size is not a multiple "
                     f"of {n_groups})")
    if group_by == "auto":
        text += f" (group_by auto: {'; '.join(reasons)})" if reasons else " (group_by auto)"
    return text
