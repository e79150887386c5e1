"""Visually similar corruptions (paper §4.4): human curves that do not differ, classes of
similar corruptions, and the similarity report of a run.

* **Curves.** Two corruptions' human 16-class accuracy curves are compared with a simultaneous
  test of their difference (:func:`vcrbench.curves.comparison.curve_difference`: a sup-t band
  from the bootstrap replicates, which carry the anchor's uncertainty) over the Δv range *both*
  data sets support (``[max dv_min, min dv_max]`` of their metrics). Not shown different at the
  5 % level over that range = *similar*. The paper's rule — the pointwise 83 % bands intersect
  at every grid point — makes 1,001 separate checks and, with the anchors fixed, pinches the
  bands at Δv = 0: identical curves were called different in most simulated pairs (docs/human.md).
  A pair whose common range is empty, or whose curves lack support or replicates, is not tested
  (``similar`` null, ``note`` says why).
* **Same/different trials**: :mod:`vcrbench.human.discrimination`.

Classes of similar corruptions are the connected components of the "similar" relation
(:func:`similarity_groups`); note that similarity is not transitive, so a class may hold two
corruptions that are themselves distinguishable through a chain of similar ones.

Output tables (one row per unordered pair; write them with
:func:`vcrbench.core.tables.write_table`):

* :func:`compare_curves`: ``corruption_a, corruption_b`` (string), ``v_min, v_max`` (the range
  compared), ``statistic`` (T), ``critical`` (c at 95 %), ``p_value``, ``different``,
  ``similar`` (bool; null when not tested), ``first_separation`` (smallest Δv where the
  simultaneous band of the difference excludes 0), ``separated_fraction`` (share of the range
  where it does), ``n_replicates``, ``note``.
* :func:`groups_table`: ``corruption`` (string), ``group`` (int64, 0-based class index).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from vcrbench.core.properties import HUMAN_CLASSES, select
from vcrbench.curves.comparison import curve_difference
from vcrbench.curves.tables import replicate_curves
from vcrbench.errors import VcrbenchError
from vcrbench.human.discrimination import (
    DISCRIMINATION_SCHEMA,
    discrimination_test,
    read_discrimination_trials,
)

#: The level of the simultaneous test (similar = not different at 1 − LEVEL).
LEVEL = 0.95

COMPARISON_SCHEMA = pa.schema(
    [
        ("corruption_a", pa.string()),
        ("corruption_b", pa.string()),
        ("v_min", pa.float64()),
        ("v_max", pa.float64()),
        ("statistic", pa.float64()),
        ("critical", pa.float64()),
        ("p_value", pa.float64()),
        ("different", pa.bool_()),
        ("similar", pa.bool_()),
        ("first_separation", pa.float64()),
        ("separated_fraction", pa.float64()),
        ("n_replicates", pa.int64()),
        ("note", pa.string()),
    ]
)
GROUPS_SCHEMA = pa.schema([("corruption", pa.string()), ("group", pa.int64())])


@dataclass(frozen=True)
class HumanCurve:
    """One corruption's human 16-class accuracy curve, as the similarity test needs it.

    Attributes:
        v: ``(G,)`` Δv grid; curve: ``(G,)`` fitted curve; replicates: ``(B, G)`` bootstrap
        curves; dv_min, dv_max: the Δv range its data support; note: why R is null (too little
        support), else None.
    """

    v: np.ndarray
    curve: np.ndarray
    replicates: np.ndarray
    dv_min: float
    dv_max: float
    note: str | None = None

    @classmethod
    def from_tables(cls, corruption: str, curves: pa.Table, replicates: pa.Table,
                    metrics: pa.Table) -> HumanCurve:
        """From ``human/<c>.parquet``, ``-replicates.parquet`` and ``-metrics.parquet``."""
        rows = select(curves, "accuracy", HUMAN_CLASSES)
        found = select(metrics, "accuracy", HUMAN_CLASSES).to_pylist()
        if rows.num_rows == 0 or not found:
            raise VcrbenchError(f"the human curves of {corruption} have no 16-class accuracy")
        metric = found[0]
        return cls(rows.column("v").to_numpy(), rows.column("s").to_numpy(),
                   replicate_curves(replicates, "accuracy", HUMAN_CLASSES),
                   float(metric["dv_min"]), float(metric["dv_max"]),
                   metric["note"] if metric["R"] is None else None)


def _pair_row(a: str, b: str, curve_a: HumanCurve, curve_b: HumanCurve) -> dict:
    v_min, v_max = max(curve_a.dv_min, curve_b.dv_min), min(curve_a.dv_max, curve_b.dv_max)
    row = {name: None for name in COMPARISON_SCHEMA.names}
    row.update(corruption_a=a, corruption_b=b, v_min=v_min, v_max=v_max, n_replicates=0)
    unsupported = [f"{name}: {c.note}" for name, c in ((a, curve_a), (b, curve_b)) if c.note]
    if unsupported:
        row["note"] = "not tested: " + "; ".join(unsupported)
        return row
    if v_max - v_min < 1e-9:
        row["note"] = (f"not tested: the human data share no Δv range ({a}: [{curve_a.dv_min:g}, "
                       f"{curve_a.dv_max:g}], {b}: [{curve_b.dv_min:g}, {curve_b.dv_max:g}])")
        return row
    if curve_a.v.shape != curve_b.v.shape or not np.allclose(curve_a.v, curve_b.v):
        raise VcrbenchError(f"the human curves of {a} and {b} are not on the same Δv grid")
    result = curve_difference(curve_a.curve, curve_b.curve, curve_a.replicates,
                              curve_b.replicates, v=curve_a.v, v_range=(v_min, v_max),
                              level=LEVEL)
    row.update(statistic=result.statistic, critical=result.critical, p_value=result.p_value,
               different=result.different,
               similar=None if result.different is None else not result.different,
               first_separation=result.first_separation,
               separated_fraction=result.separated_fraction,
               n_replicates=result.n_replicates,
               note=None if result.reason is None else f"not tested: {result.reason}")
    if row["statistic"] is not None and not np.isfinite(row["statistic"]):
        row["statistic"] = None
        row["note"] = "both bootstraps are certain of different values somewhere on the range"
    return row


def compare_curves(curves: Mapping[str, HumanCurve]) -> pa.Table:
    """Compare every unordered pair of corruptions' human curves (module docstring); one row per
    pair ``i < j`` in the mapping's order (:data:`COMPARISON_SCHEMA`)."""
    names = list(curves)
    rows = [_pair_row(a, b, curves[a], curves[b])
            for i, a in enumerate(names) for b in names[i + 1 :]]
    return pa.Table.from_pylist(rows, schema=COMPARISON_SCHEMA)


# --- classes of similar corruptions -----------------------------------------------------------


def similarity_groups(
    names: Sequence[str], similar_pairs: Iterable[tuple[str, str]]
) -> list[list[str]]:
    """Connected components of the "similar" relation.

    Args:
        names: every corruption, each once; corruptions in no pair form groups of one.
        similar_pairs: pairs ``(a, b)`` judged similar (order and repeats do not matter).

    Returns:
        The groups, each in the order of ``names``, ordered by their first member.
    """
    order = {}
    for name in names:
        if name in order:
            raise VcrbenchError(f"corruption {name!r} appears twice in names; list each once")
        order[name] = len(order)
    parent = list(range(len(order)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for pair in similar_pairs:
        if len(pair) != 2:
            raise VcrbenchError(f"a similar pair must have two corruptions, got {pair!r}")
        for name in pair:
            if name not in order:
                raise VcrbenchError(
                    f"similar pair {tuple(pair)!r} names {name!r}, which is not in names; "
                    f"known: {', '.join(map(repr, order))}"
                )
        ra, rb = root(order[pair[0]]), root(order[pair[1]])
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[str]] = {}
    for name, i in order.items():
        groups.setdefault(root(i), []).append(name)
    return list(groups.values())


def pairs_marked_similar(table: pa.Table) -> list[tuple[str, str]]:
    """The pairs marked similar (column ``similar`` true; untested pairs are not) in a
    :func:`compare_curves` or :func:`discrimination_test` table."""
    column = "similar"
    needed = {"corruption_a", "corruption_b", column}
    if not needed <= set(table.column_names):
        raise VcrbenchError(
            "expected a compare_curves or discrimination_test table with columns "
            f"corruption_a, corruption_b and similar; got {table.column_names}"
        )
    a = table.column("corruption_a").to_pylist()
    b = table.column("corruption_b").to_pylist()
    flag = table.column(column).to_pylist()
    return [(x, y) for x, y, f in zip(a, b, flag, strict=True) if f]


def groups_table(names: Sequence[str], similar_pairs: Iterable[tuple[str, str]]) -> pa.Table:
    """``(corruption, group)`` rows in the order of ``names``; ``group`` indexes the list of
    :func:`similarity_groups` (0-based). Pass ``pairs_marked_similar(table)`` for a test table.
    """
    groups = similarity_groups(names, similar_pairs)
    group_of = {name: g for g, members in enumerate(groups) for name in members}
    return pa.table(
        {"corruption": list(names), "group": [group_of[name] for name in names]},
        schema=GROUPS_SCHEMA,
    )


# --- the pipeline's similarity report ---------------------------------------------------------


def similarity_tables(
    human_curves: Mapping[str, HumanCurve], discrimination: str | Path | None = None
) -> dict[str, pa.Table]:
    """The similarity report of a run's human data.

    Args:
        human_curves: corruption -> its human 16-class accuracy curve
            (:meth:`HumanCurve.from_tables`).
        discrimination: optional same/different trial file (format in
            :mod:`vcrbench.human.discrimination`).

    Returns:
        ``curves`` (:func:`compare_curves` of every pair), ``curve_groups`` (their classes),
        and, with ``discrimination``, ``discrimination`` (:func:`discrimination_test`) and
        ``discrimination_groups``; without it those two are empty tables.
    """
    curves = compare_curves(human_curves)
    out = {"curves": curves,
           "curve_groups": groups_table(list(human_curves), pairs_marked_similar(curves))}
    if discrimination is None:
        out["discrimination"] = DISCRIMINATION_SCHEMA.empty_table()
        out["discrimination_groups"] = GROUPS_SCHEMA.empty_table()
        return out
    tested = discrimination_test(read_discrimination_trials(discrimination))
    seen = list(dict.fromkeys(tested.column("corruption_a").to_pylist()
                              + tested.column("corruption_b").to_pylist()))
    out["discrimination"] = tested
    out["discrimination_groups"] = groups_table(seen, pairs_marked_similar(tested))
    return out
