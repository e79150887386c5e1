"""Visually similar corruptions (paper §4.4): overlapping human curves, classes of similar
corruptions, and the similarity report of a run.

* **Curve bands.** Each corruption's human curve ``s(v)`` has a pointwise 83 % bootstrap band
  ``[lo83, hi83]`` on a common grid of v in [0, 1] (:data:`vcrbench.curves.areas.GRID`, 1001
  points). Two curves are *not significantly different* when the bands intersect at every grid
  point of the range compared (non-overlap of two 83 % intervals ≈ a test at the 5 % level;
  Knol et al. 2011, Austin & Hux 2002). Bands that only touch (``hi_a == lo_b``) overlap.
* **Same/different trials**: :mod:`vcrbench.human.discrimination`.

Classes of similar corruptions are the connected components of the "similar" relation
(:func:`similarity_groups`); note that similarity is not transitive, so a class may hold two
corruptions that are themselves distinguishable through a chain of similar ones.

Output tables (one row per unordered pair; write them with
:func:`vcrbench.core.tables.write_table`):

* :func:`compare_curves`: ``corruption_a, corruption_b`` (string), ``overlap`` (bool),
  ``separated_fraction`` (float64 in [0, 1]), ``first_separation`` (float64 v, null when none).
* :func:`groups_table`: ``corruption`` (string), ``group`` (int64, 0-based class index).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from vcrbench.core.properties import select
from vcrbench.errors import VcrbenchError
from vcrbench.human.discrimination import (
    DISCRIMINATION_SCHEMA,
    discrimination_test,
    read_discrimination_trials,
)

#: Grid points within this distance of a ``v_range`` end count as inside (so 0.8 selects 0.8).
RANGE_TOL = 1e-9

COMPARISON_SCHEMA = pa.schema(
    [
        ("corruption_a", pa.string()),
        ("corruption_b", pa.string()),
        ("overlap", pa.bool_()),
        ("separated_fraction", pa.float64()),
        ("first_separation", pa.float64()),
    ]
)
GROUPS_SCHEMA = pa.schema([("corruption", pa.string()), ("group", pa.int64())])


# --- 83 % bands -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BandComparison:
    """How two pointwise bands compare on the grid points inside the compared v range.

    Attributes:
        overlap: the intervals ``[lo_a, hi_a]`` and ``[lo_b, hi_b]`` intersect at every point.
        separated_fraction: fraction of those points where they do not intersect, in [0, 1].
        first_separation: smallest v where they do not intersect, or None.
    """

    overlap: bool
    separated_fraction: float
    first_separation: float | None


def _band_array(name: str, values: object) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise VcrbenchError(
            f"band {name} must be a non-empty 1-D array over the v grid, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise VcrbenchError(
            f"band {name} has a non-finite value at grid index {bad}; "
            "estimate the band on a grid where the curve is defined"
        )
    return arr


def _check_band(which: str, lo: np.ndarray, hi: np.ndarray) -> None:
    bad = np.flatnonzero(lo > hi)
    if bad.size:
        i = int(bad[0])
        raise VcrbenchError(
            f"band {which}: lo > hi at grid index {i} ({lo[i]!r} > {hi[i]!r}); "
            "pass (lower, upper) in that order"
        )


def _in_range(v: np.ndarray, v_range: tuple[float, float] | None) -> np.ndarray:
    if v_range is None:
        return np.ones(v.shape, dtype=bool)
    try:
        v_min, v_max = (float(x) for x in v_range)
    except (TypeError, ValueError):
        raise VcrbenchError(f"v_range must be a pair (v_min, v_max), got {v_range!r}") from None
    if not (math.isfinite(v_min) and math.isfinite(v_max)) or v_min > v_max:
        raise VcrbenchError(f"v_range must be finite with v_min <= v_max, got {v_range!r}")
    inside = (v >= v_min - RANGE_TOL) & (v <= v_max + RANGE_TOL)
    if not inside.any():
        raise VcrbenchError(
            f"v_range {v_range!r} holds no grid point (grid spans [{v[0]}, {v[-1]}]); "
            "widen the range"
        )
    return inside


def band_comparison(
    lo_a: np.ndarray,
    hi_a: np.ndarray,
    lo_b: np.ndarray,
    hi_b: np.ndarray,
    *,
    v: np.ndarray | None = None,
    v_range: tuple[float, float] | None = None,
) -> BandComparison:
    """Compare two pointwise bands (e.g. the 83 % bands of two human curves).

    Args:
        lo_a, hi_a, lo_b, hi_b: ``(G,)`` finite band limits, ``lo <= hi`` at every point.
        v: ``(G,)`` strictly increasing grid of the bands; default ``linspace(0, 1, G)``
            (:data:`vcrbench.curves.areas.GRID` when G = 1001).
        v_range: ``(v_min, v_max)``, compare only grid points in this closed range (ends
            matched within :data:`RANGE_TOL`); default the whole grid.

    Returns:
        :class:`BandComparison` over the grid points inside ``v_range``.
    """
    arrays = {
        "lo_a": _band_array("lo_a", lo_a),
        "hi_a": _band_array("hi_a", hi_a),
        "lo_b": _band_array("lo_b", lo_b),
        "hi_b": _band_array("hi_b", hi_b),
    }
    shapes = {k: a.shape for k, a in arrays.items()}
    if len(set(shapes.values())) != 1:
        raise VcrbenchError(f"bands must share one grid; got shapes {shapes}")
    g = arrays["lo_a"].size
    if v is None:
        grid = np.linspace(0.0, 1.0, g)
    else:
        grid = np.asarray(v, dtype=np.float64)
        if grid.shape != (g,):
            raise VcrbenchError(f"v has shape {grid.shape} but the bands have {g} points")
        if not np.all(np.isfinite(grid)) or np.any(np.diff(grid) <= 0):
            raise VcrbenchError("v must be finite and strictly increasing")
    _check_band("a", arrays["lo_a"], arrays["hi_a"])
    _check_band("b", arrays["lo_b"], arrays["hi_b"])
    inside = _in_range(grid, v_range)
    lower = np.maximum(arrays["lo_a"], arrays["lo_b"])
    upper = np.minimum(arrays["hi_a"], arrays["hi_b"])
    separated = (lower > upper) & inside
    n_sep = int(separated.sum())
    first = float(grid[np.flatnonzero(separated)[0]]) if n_sep else None
    return BandComparison(
        overlap=n_sep == 0,
        separated_fraction=n_sep / int(inside.sum()),
        first_separation=first,
    )


def bands_overlap(
    lo_a: np.ndarray,
    hi_a: np.ndarray,
    lo_b: np.ndarray,
    hi_b: np.ndarray,
    *,
    v: np.ndarray | None = None,
    v_range: tuple[float, float] | None = None,
) -> bool:
    """True when the two bands intersect at every grid point in ``v_range`` (see
    :func:`band_comparison` for the arguments)."""
    return band_comparison(lo_a, hi_a, lo_b, hi_b, v=v, v_range=v_range).overlap


def compare_curves(
    bands: Mapping[str, tuple[np.ndarray, np.ndarray]],
    v: np.ndarray | None = None,
    *,
    v_range: tuple[float, float] | None = None,
) -> pa.Table:
    """Compare every unordered pair of corruptions' bands.

    Args:
        bands: ``{corruption: (lo, hi)}``, each ``(G,)`` on the common grid ``v`` (e.g.
            ``{c: estimate.band83}``).
        v, v_range: as in :func:`band_comparison`.

    Returns:
        One row per pair ``i < j`` in the mapping's order (:data:`COMPARISON_SCHEMA`).
    """
    names = list(bands)
    rows: dict[str, list] = {name: [] for name in COMPARISON_SCHEMA.names}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            try:
                cmp = band_comparison(*bands[a], *bands[b], v=v, v_range=v_range)
            except VcrbenchError as err:
                raise VcrbenchError(f"comparing {a!r} with {b!r}: {err}") from None
            except TypeError:
                raise VcrbenchError(
                    f"bands[{a!r}] and bands[{b!r}] must each be a pair (lo, hi)"
                ) from None
            rows["corruption_a"].append(a)
            rows["corruption_b"].append(b)
            rows["overlap"].append(cmp.overlap)
            rows["separated_fraction"].append(cmp.separated_fraction)
            rows["first_separation"].append(cmp.first_separation)
    return pa.table(rows, schema=COMPARISON_SCHEMA)


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
    """The pairs marked similar in a :func:`discrimination_test` table (column ``similar``) or a
    :func:`compare_curves` table (column ``overlap``)."""
    column = "similar" if "similar" in table.column_names else "overlap"
    needed = {"corruption_a", "corruption_b", column}
    if not needed <= set(table.column_names):
        raise VcrbenchError(
            "expected a compare_curves or discrimination_test table with columns "
            f"corruption_a, corruption_b and similar or overlap; got {table.column_names}"
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
    human_curves: Mapping[str, pa.Table], discrimination: str | Path | None = None
) -> dict[str, pa.Table]:
    """The similarity report of a run's human data.

    Args:
        human_curves: corruption -> its human curves table (``human/<c>.parquet``; the
            16-class accuracy curve's 83 % band is compared).
        discrimination: optional same/different trial file (format in the module docstring).

    Returns:
        ``curves`` (:func:`compare_curves` of every pair), ``curve_groups`` (their classes),
        and, with ``discrimination``, ``discrimination`` (:func:`discrimination_test`) and
        ``discrimination_groups``; without it those two are empty tables.
    """
    bands = {}
    for corruption, table in human_curves.items():
        rows = select(table, "accuracy", 16)
        if rows.num_rows == 0:
            raise VcrbenchError(f"the human curves of {corruption} have no 16-class accuracy")
        v = rows.column("v").to_numpy()
        bands[corruption] = (rows.column("lo83").to_numpy(), rows.column("hi83").to_numpy())
    names = list(bands)
    curves = compare_curves(bands, v if bands else None)
    out = {"curves": curves, "curve_groups": groups_table(names, pairs_marked_similar(curves))}
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
