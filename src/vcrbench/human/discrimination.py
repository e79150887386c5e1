"""Same/different discrimination trials (paper §4.4): can people tell two corruptions apart?

Participants see two corrupted images and answer whether the corruptions are the same or
different. Per unordered pair of corruptions, the answers pooled over subjects are tested with
an exact one-sided binomial test of H1: P(correct) > 0.5 (:func:`binomial_p_greater`, exact to
~1e−13 relative for n up to 10^5 and beyond). A pair whose accuracy is significantly above
chance is *distinguishable*; otherwise it is *similar*. "Similar" means **not shown different
at this number of trials**, not shown equal: with few trials every pair is "similar". The tests
are not corrected for multiple comparisons, and pooled accuracy depends on response bias (a
subject who always answers "different" is right on every different-trial), so designs should
mix in same-trials; a pair ``(a, a)`` is reported as its own row.

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

Output table of :func:`discrimination_test` (one row per unordered pair): ``corruption_a,
corruption_b`` (string), ``n_subjects``, ``n_trials``, ``n_correct`` (int64), ``accuracy``,
``p_value`` (float64), ``distinguishable``, ``similar`` (bool).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pyarrow as pa

from vcrbench.errors import VcrbenchError

#: The two answers of a same/different trial.
RESPONSES = ("same", "different")
#: Columns a discrimination-trial file must have (``truth`` is optional).
TRIAL_COLUMNS = ("subject", "corruption_a", "corruption_b", "response")
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
