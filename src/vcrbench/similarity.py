"""Visually similar corruptions (paper §4.4): overlapping human curves and same/different tests.

Two ways to call corruptions *similar*:

* **Curve bands.** Each corruption's human curve ``s(v)`` has a pointwise 83 % bootstrap band
  ``[lo83, hi83]`` on a common grid of v in [0, 1] (:data:`vcrbench.bootstrap.GRID`, 1001
  points). Two curves are *not significantly different* when the bands intersect at every grid
  point of the range compared (non-overlap of two 83 % intervals ≈ a test at the 5 % level;
  Knol et al. 2011, Austin & Hux 2002). Bands that only touch (``hi_a == lo_b``) overlap.
* **Same/different trials.** Participants see two corrupted images and answer whether the
  corruptions are the same or different. Per unordered pair of corruptions, the answers pooled
  over subjects are tested with an exact one-sided binomial test of H1: P(correct) > 0.5
  (:func:`binomial_p_greater`, exact to ~1e−13 relative for n up to 10^5 and beyond). A pair
  whose accuracy is significantly above chance is *distinguishable*; otherwise it is *similar*.
  "Similar" means **not shown different at this number of trials**, not shown equal: with few
  trials every pair is "similar". The tests are not corrected for multiple comparisons, and
  pooled accuracy depends on response bias (a subject who always answers "different" is right
  on every different-trial), so designs should mix in same-trials; a pair ``(a, a)`` is
  reported as its own row.

Classes of similar corruptions are the connected components of the "similar" relation
(:func:`similarity_groups`); note that similarity is not transitive, so a class may hold two
corruptions that are themselves distinguishable through a chain of similar ones.

Discrimination-trial file format (CSV, UTF-8, comma-separated, one header line)::

    subject,corruption_a,corruption_b,response[,truth]
    p01,gaussian_noise,impulse_noise,same
    p01,gaussian_noise,gaussian_noise,same
    p02,gaussian_blur,frost,different

* ``subject``: participant id (any non-empty text).
* ``corruption_a``, ``corruption_b``: the corruptions of the two images (non-empty names).
* ``response``: the participant's answer, ``same`` or ``different``.
* ``truth`` (optional column): the correct answer, ``same`` or ``different``; without the
  column, the truth is ``same`` exactly when ``corruption_a == corruption_b``.

Column order is free, extra columns are ignored, header names and values are matched after
stripping spaces and ignoring case, and blank lines are skipped. The order of the two
corruptions in a trial does not matter for the test.

Output tables (one row per unordered pair; write them with :func:`vcrbench.tables.write_table`):

* :func:`compare_curves`: ``corruption_a, corruption_b`` (string), ``overlap`` (bool),
  ``separated_fraction`` (float64 in [0, 1]), ``first_separation`` (float64 v, null when none).
* :func:`discrimination_test`: ``corruption_a, corruption_b`` (string), ``n_subjects``,
  ``n_trials``, ``n_correct`` (int64), ``accuracy``, ``p_value`` (float64), ``distinguishable``,
  ``similar`` (bool).
* :func:`groups_table`: ``corruption`` (string), ``group`` (int64, 0-based class index).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from vcrbench.errors import VcrbenchError

#: Grid points within this distance of a ``v_range`` end count as inside (so 0.8 selects 0.8).
RANGE_TOL = 1e-9
#: The two answers of a same/different trial.
RESPONSES = ("same", "different")
#: Columns a discrimination-trial file must have (``truth`` is optional).
TRIAL_COLUMNS = ("subject", "corruption_a", "corruption_b", "response")

COMPARISON_SCHEMA = pa.schema(
    [
        ("corruption_a", pa.string()),
        ("corruption_b", pa.string()),
        ("overlap", pa.bool_()),
        ("separated_fraction", pa.float64()),
        ("first_separation", pa.float64()),
    ]
)
DISCRIMINATION_SCHEMA = pa.schema(
    [
        ("corruption_a", pa.string()),
        ("corruption_b", pa.string()),
        ("n_subjects", pa.int64()),
        ("n_trials", pa.int64()),
        ("n_correct", pa.int64()),
        ("accuracy", pa.float64()),
        ("p_value", pa.float64()),
        ("distinguishable", pa.bool_()),
        ("similar", pa.bool_()),
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
            (:data:`vcrbench.bootstrap.GRID` when G = 1001).
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


# --- same/different discrimination trials -----------------------------------------------------


def _upper_tail(m: int, n: int) -> float:
    """``P(X >= m)``, X ~ Bin(n, 1/2), for ``n/2 < m <= n + 1`` (a tail below 1/2).

    The first term ``C(n, m) / 2^n`` is exact integer arithmetic (its mantissa correctly
    rounded, then scaled by a power of 2); the rest is that term times
    ``1 + r_m + r_m r_{m+1} + …`` with ratios ``r_i = (n − i)/(i + 1) < 1``, summed in float
    until the geometric bound on the remainder is below 1e−17 of the sum.
    """
    if m > n:
        return 0.0
    total, term = 1.0, 1.0
    for i in range(m, n):
        r = (n - i) / (i + 1)
        term *= r
        total += term
        if term * r / (1.0 - r) < 1e-17 * total:
            break
    comb = math.comb(n, m)
    bits = comb.bit_length()
    return math.ldexp(comb / (1 << bits) * total, bits - n)


def binomial_p_greater(k: int, n: int) -> float:
    """Exact one-sided p-value ``P(X >= k)``, X ~ Bin(n, 1/2), of H1: p > 1/2.

    Args:
        k: successes, ``0 <= k <= n``.
        n: trials, ``n >= 0`` (``n = 0`` gives 1).

    Returns:
        The p-value in [0, 1]; relative error ~1e−13 (tails that underflow a float give 0).
        The smaller tail is always the one summed (``P(X >= k) = 1 − P(X >= n − k + 1)`` for
        ``k <= n/2``), so there is no cancellation. Cost is dominated by the exact
        ``math.comb(n, m)``: ~5 ms at n = 2·10^4, ~0.15 s at n = 10^5.
    """
    if isinstance(k, bool) or isinstance(n, bool):
        raise VcrbenchError(f"k and n must be integers, got k={k!r}, n={n!r}")
    try:
        k_i, n_i = int(k), int(n)
    except (TypeError, ValueError):
        raise VcrbenchError(f"k and n must be integers, got k={k!r}, n={n!r}") from None
    if k_i != k or n_i != n:
        raise VcrbenchError(f"k and n must be integers, got k={k!r}, n={n!r}")
    if n_i < 0 or not 0 <= k_i <= n_i:
        raise VcrbenchError(f"need 0 <= k <= n for the binomial test, got k={k_i}, n={n_i}")
    if 2 * k_i > n_i:
        return _upper_tail(k_i, n_i)
    return 1.0 - _upper_tail(n_i - k_i + 1, n_i)


def _token(value: str) -> str:
    return value.strip().lower()


def read_discrimination_trials(path: str | Path) -> pa.Table:
    """Read a same/different trial CSV (format in the module docstring).

    Returns:
        One row per trial, in file order: ``subject, corruption_a, corruption_b, response,
        truth`` (string; names stripped, ``response`` and ``truth`` lower-case ``same`` or
        ``different``, ``truth`` filled in from the names where the column is absent).

    Raises:
        VcrbenchError: naming the file and the 1-based line of the first problem.
    """
    path = Path(path)
    try:
        handle = open(path, newline="", encoding="utf-8-sig")
    except OSError as err:
        raise VcrbenchError(f"{path}: cannot read the trial file ({err.strerror})") from None
    rows: dict[str, list[str]] = {name: [] for name in (*TRIAL_COLUMNS, "truth")}
    with handle:
        reader = csv.reader(handle)
        header: list[str] | None = None
        header_line = 0
        last_line = 0
        try:
            for record in reader:
                line, last_line = last_line + 1, reader.line_num
                if not any(cell.strip() for cell in record):
                    continue
                if header is None:
                    header, header_line = [_token(cell) for cell in record], line
                    _check_header(path, line, header)
                    index = {
                        name: header.index(name)
                        for name in (*TRIAL_COLUMNS, "truth")
                        if name in header
                    }
                    continue
                _read_trial(path, line, record, header, index, rows)
        except csv.Error as err:
            raise VcrbenchError(f"{path}, line {reader.line_num}: malformed CSV ({err})") from None
        except UnicodeDecodeError:
            raise VcrbenchError(
                f"{path}, line {reader.line_num + 1}: not UTF-8 text; save the file as UTF-8 CSV"
            ) from None
    if header is None:
        raise VcrbenchError(
            f"{path}, line 1: empty file; expected a header line "
            f"'{','.join(TRIAL_COLUMNS)}[,truth]' followed by one line per trial"
        )
    if not rows["subject"]:
        raise VcrbenchError(
            f"{path}, line {header_line + 1}: no trials after the header; add one line per trial"
        )
    return pa.table(rows, schema=pa.schema([(name, pa.string()) for name in rows]))


def _check_header(path: Path, line: int, header: list[str]) -> None:
    missing = [name for name in TRIAL_COLUMNS if name not in header]
    if missing:
        raise VcrbenchError(
            f"{path}, line {line}: missing column(s) {', '.join(missing)}; the header must name "
            f"{', '.join(TRIAL_COLUMNS)} (and optionally truth); found: {', '.join(header)}"
        )
    repeated = sorted({name for name in header if name and header.count(name) > 1})
    if repeated:
        raise VcrbenchError(
            f"{path}, line {line}: column(s) {', '.join(repeated)} appear more than once"
        )


def _read_trial(
    path: Path,
    line: int,
    record: list[str],
    header: list[str],
    index: dict[str, int],
    rows: dict[str, list[str]],
) -> None:
    if len(record) != len(header):
        raise VcrbenchError(
            f"{path}, line {line}: {len(record)} fields but the header has {len(header)}; "
            "each trial line needs one value per column"
        )
    values = {name: record[i].strip() for name, i in index.items()}
    for name in ("subject", "corruption_a", "corruption_b"):
        if not values[name]:
            raise VcrbenchError(f"{path}, line {line}: empty {name}; every trial needs one")
    for name in ("response", "truth"):
        if name in values:
            values[name] = values[name].lower()
            if values[name] not in RESPONSES:
                raise VcrbenchError(
                    f"{path}, line {line}: {name} is {record[index[name]]!r}; "
                    "it must be 'same' or 'different'"
                )
    if "truth" not in values:
        same = values["corruption_a"] == values["corruption_b"]
        values["truth"] = "same" if same else "different"
    for name, column in rows.items():
        column.append(values[name])


def discrimination_test(trials: pa.Table, alpha: float = 0.05) -> pa.Table:
    """Exact one-sided binomial test per unordered pair of corruptions: above chance?

    Args:
        trials: a table like :func:`read_discrimination_trials` gives (columns ``subject,
            corruption_a, corruption_b, response, truth``; ``truth`` may be absent).
        alpha: significance level in (0, 1).

    Returns:
        One row per unordered pair, the two names in sorted order and rows sorted by them
        (:data:`DISCRIMINATION_SCHEMA`); trials pooled over subjects, ``p_value`` from
        :func:`binomial_p_greater`, ``distinguishable = p_value < alpha``, ``similar`` its
        negation (not shown different with these trials).
    """
    try:
        ok = 0.0 < float(alpha) < 1.0
    except (TypeError, ValueError):
        ok = False
    if not ok or isinstance(alpha, bool):
        raise VcrbenchError(f"alpha must be a number in (0, 1), got {alpha!r}")
    missing = [name for name in TRIAL_COLUMNS if name not in trials.column_names]
    if missing:
        raise VcrbenchError(
            f"trials table lacks column(s) {', '.join(missing)}; "
            "read it with read_discrimination_trials"
        )
    cols = {name: trials.column(name).to_pylist() for name in TRIAL_COLUMNS}
    has_truth = "truth" in trials.column_names
    truth = trials.column("truth").to_pylist() if has_truth else None
    counts: dict[tuple[str, str], list] = {}
    for row in range(trials.num_rows):
        a, b = cols["corruption_a"][row], cols["corruption_b"][row]
        response = cols["response"][row]
        if not isinstance(a, str) or not isinstance(b, str) or not a or not b:
            raise VcrbenchError(f"trials row {row}: corruption names must be non-empty text")
        if response not in RESPONSES:
            raise VcrbenchError(
                f"trials row {row}: response is {response!r}; it must be 'same' or 'different'"
            )
        if truth is None:
            answer = "same" if a == b else "different"
        else:
            answer = truth[row]
            if answer not in RESPONSES:
                raise VcrbenchError(
                    f"trials row {row}: truth is {answer!r}; it must be 'same' or 'different'"
                )
        key = (a, b) if a <= b else (b, a)
        entry = counts.setdefault(key, [0, 0, set()])
        entry[0] += 1
        entry[1] += response == answer
        entry[2].add(cols["subject"][row])
    rows: dict[str, list] = {name: [] for name in DISCRIMINATION_SCHEMA.names}
    for (a, b), (n, k, subjects) in sorted(counts.items()):
        p = binomial_p_greater(k, n)
        rows["corruption_a"].append(a)
        rows["corruption_b"].append(b)
        rows["n_subjects"].append(len(subjects))
        rows["n_trials"].append(n)
        rows["n_correct"].append(k)
        rows["accuracy"].append(k / n)
        rows["p_value"].append(p)
        rows["distinguishable"].append(p < alpha)
        rows["similar"].append(not p < alpha)
    return pa.table(rows, schema=DISCRIMINATION_SCHEMA)


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
    import pyarrow.compute as pc

    bands = {}
    for corruption, table in human_curves.items():
        rows = table.filter(pc.and_(pc.equal(table.column("metric"), "accuracy"),
                                    pc.equal(table.column("classes"), 16)))
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
