"""Same/different discrimination trials (paper §4.4): can people tell two corruptions apart?

Participants see two corrupted images and answer whether the corruptions are the same or
different. Each unordered pair ``{a, b}`` of distinct corruptions gets a signal-detection test
(:func:`discrimination_test`) that pools the pair's own trials with the same-corruption trials
of both members:

* **signal trials**: the two images show ``a`` and ``b`` (either order); a *hit* is the answer
  "different".
* **noise trials**: the two images show ``(a, a)`` or ``(b, b)``; a *false alarm* is the answer
  "different". They are the noise trials of every pair containing ``a`` (or ``b``), so a pair
  ``(a, a)`` is not a row of its own.

Hit rate H = hits / signal trials, false-alarm rate F = false alarms / noise trials. The test
is of H0: P(different | signal) <= P(different | noise) against H1: greater, one-sided and
exact: Fisher's exact test on the 2×2 table (signal, noise) × (different, same)
(:func:`scipy.stats.fisher_exact`, ``alternative="greater"``; conditional on the margins, so
it is somewhat conservative). Because false alarms are the comparison, an observer who answers
"different" regardless of the images gets H = F and is not evidence of discrimination (a test
of accuracy above chance on the signal trials alone would measure exactly that bias).
``d_prime = z(H') − z(F')`` is reported as an effect size, with the log-linear correction
(Hautus 1995): ``H' = (hits + 0.5) / (signal trials + 1)`` and
``F' = (false alarms + 0.5) / (noise trials + 1)``, so it is finite when H or F is 0 or 1. It
is the yes/no index, not the differencing-model d′ of a same/different design (Macmillan &
Creelman 2005), which differs from it.

Caveats:

* Trials are **pooled over subjects** and the test treats them as independent Bernoulli
  trials. Repeated answers of one subject are correlated, and when subjects differ in bias and
  contribute signal and noise trials in different proportions, pooling can create or hide a
  difference; a test stratified by subject (e.g. an exact conditional / Cochran–Mantel–Haenszel
  test over per-subject 2×2 tables) would be stricter.
* The p-values are adjusted over all pairs tested with Holm–Bonferroni (``p_holm``, valid
  under any dependence, such as pairs sharing a member's noise trials), and
  ``distinguishable = p_holm < alpha`` controls the family-wise error rate at ``alpha`` over
  those pairs; ``p_value`` is the unadjusted p.
* A pair is *similar* when it is not distinguishable. "Similar" means **not shown different at
  this number of trials**, not shown equal: with few trials every pair is "similar".
* A pair without noise trials (neither member was shown twice) cannot be tested: its
  ``p_value``, ``p_holm``, ``d_prime``, ``false_alarm_rate``, ``distinguishable`` and
  ``similar`` are null, ``note`` says what is missing, and it is not in the Holm family. A pair
  with noise trials of only one member is tested against that member's false alarms, and
  ``note`` says so.

Discrimination-trial file format (CSV, UTF-8, comma-separated, one header line)::

    subject,corruption_a,corruption_b,response[,truth]
    p01,gaussian_noise,impulse_noise,same
    p01,gaussian_noise,gaussian_noise,same
    p02,gaussian_blur,frost,different

* ``subject``: participant id (any non-empty text).
* ``corruption_a``, ``corruption_b``: the corruptions of the two images (non-empty names).
* ``response``: the participant's answer, ``same`` or ``different``.
* ``truth`` (optional column): the correct answer, ``same`` or ``different``. The test defines
  signal and noise trials by the corruption names, so when present it must be ``same`` exactly
  when ``corruption_a == corruption_b`` (a disagreement is an error); without the column it is
  filled in from the names.

Column order is free, extra columns are ignored, header names and values are matched after
stripping spaces and ignoring case, and blank lines are skipped. The order of the two
corruptions in a trial does not matter for the test.

Output table of :func:`discrimination_test` (:data:`DISCRIMINATION_SCHEMA`; one row per
unordered pair ``a < b`` shown in at least one signal trial, sorted): ``corruption_a,
corruption_b`` (string), ``n_subjects`` (int64, distinct subjects over the signal and noise
trials used), ``n_signal, n_hits, n_noise, n_false_alarms`` (int64), ``hit_rate,
false_alarm_rate, d_prime, p_value, p_holm`` (float64; the rates uncorrected), ``distinguishable,
similar`` (bool) and ``note`` (string); all but the names and counts may be null as above.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from scipy.stats import fisher_exact, norm

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
        ("n_signal", pa.int64()),
        ("n_hits", pa.int64()),
        ("n_noise", pa.int64()),
        ("n_false_alarms", pa.int64()),
        ("hit_rate", pa.float64()),
        ("false_alarm_rate", pa.float64()),
        ("d_prime", pa.float64()),
        ("p_value", pa.float64()),
        ("p_holm", pa.float64()),
        ("distinguishable", pa.bool_()),
        ("similar", pa.bool_()),
        ("note", pa.string()),
    ]
)


def _truth_mismatch(truth: str, a: str, b: str) -> str | None:
    """Why ``truth`` disagrees with the names ``a``, ``b`` (None when it agrees)."""
    if (truth == "same") == (a == b):
        return None
    shown = "the same corruption twice" if a == b else "two different corruptions"
    return (
        f"truth is '{truth}' but the trial shows {shown} ({a!r}, {b!r}); the test defines "
        "signal trials (two different corruptions) and noise trials (one corruption twice) by "
        "the corruption names, so truth must be 'same' exactly when corruption_a equals "
        "corruption_b; fix the names or the truth"
    )


def _token(value: str) -> str:
    return value.strip().lower()


def read_discrimination_trials(path: str | Path) -> pa.Table:
    """Read a same/different trial CSV (format in the module docstring).

    Returns:
        One row per trial, in file order: ``subject, corruption_a, corruption_b, response,
        truth`` (string; names stripped, ``response`` and ``truth`` lower-case ``same`` or
        ``different``, ``truth`` filled in from the names where the column is absent, and
        checked against them where present).

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
    if "truth" in values:
        problem = _truth_mismatch(values["truth"], values["corruption_a"], values["corruption_b"])
        if problem:
            raise VcrbenchError(f"{path}, line {line}: {problem}")
    else:
        same = values["corruption_a"] == values["corruption_b"]
        values["truth"] = "same" if same else "different"
    for name, column in rows.items():
        column.append(values[name])


def d_prime(hits: int, n_signal: int, false_alarms: int, n_noise: int) -> float:
    """``z(H') − z(F')`` with the log-linear correction (Hautus 1995).

    ``H' = (hits + 0.5) / (n_signal + 1)``, ``F' = (false_alarms + 0.5) / (n_noise + 1)``, ``z``
    the standard normal quantile; finite for any counts ``0 <= hits <= n_signal``,
    ``0 <= false_alarms <= n_noise``.
    """
    h = (hits + 0.5) / (n_signal + 1)
    f = (false_alarms + 0.5) / (n_noise + 1)
    return float(norm.ppf(h) - norm.ppf(f))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order.

    With the m p-values sorted ascending, ``p_(1) <= … <= p_(m)``, the adjusted value of
    ``p_(i)`` is ``max over j <= i of min(1, (m − j + 1) p_(j))``; rejecting where it is below
    alpha controls the family-wise error rate at alpha under any dependence.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass
class _Counts:
    """Trials, "different" answers and subjects of one kind of trial."""

    n: int = 0
    different: int = 0
    subjects: set = field(default_factory=set)

    def add(self, subject: object, response: str) -> None:
        self.n += 1
        self.different += response == "different"
        self.subjects.add(subject)


def discrimination_test(trials: pa.Table, alpha: float = 0.05) -> pa.Table:
    """Signal-detection test per unordered pair of distinct corruptions (module docstring).

    Args:
        trials: a table like :func:`read_discrimination_trials` gives (columns ``subject,
            corruption_a, corruption_b, response, truth``; ``truth`` may be absent, and where
            present must be ``same`` exactly when the two names are equal).
        alpha: family-wise significance level in (0, 1).

    Returns:
        One row per unordered pair ``a < b`` shown in a signal trial, sorted
        (:data:`DISCRIMINATION_SCHEMA`): signal trials of the pair against the noise trials
        ``(a, a)`` and ``(b, b)``, pooled over subjects; ``p_value`` of Fisher's exact test
        (one-sided, "different" more often on signal trials), ``p_holm`` its Holm–Bonferroni
        adjustment over the pairs tested, ``distinguishable = p_holm < alpha``, ``similar`` its
        negation (not shown different with these trials); nulls and a ``note`` for a pair
        without noise trials.

    Raises:
        VcrbenchError: a bad ``alpha``, a missing column, or a bad trial row (named by its
            0-based row), including a ``truth`` that disagrees with the names.
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
    truth = trials.column("truth").to_pylist() if "truth" in trials.column_names else None
    signal: dict[tuple[str, str], _Counts] = {}
    noise: dict[str, _Counts] = {}
    for row in range(trials.num_rows):
        a, b = cols["corruption_a"][row], cols["corruption_b"][row]
        response = cols["response"][row]
        if not isinstance(a, str) or not isinstance(b, str) or not a or not b:
            raise VcrbenchError(f"trials row {row}: corruption names must be non-empty text")
        if response not in RESPONSES:
            raise VcrbenchError(
                f"trials row {row}: response is {response!r}; it must be 'same' or 'different'"
            )
        if truth is not None:
            if truth[row] not in RESPONSES:
                raise VcrbenchError(
                    f"trials row {row}: truth is {truth[row]!r}; it must be 'same' or 'different'"
                )
            problem = _truth_mismatch(truth[row], a, b)
            if problem:
                raise VcrbenchError(f"trials row {row}: {problem}")
        if a == b:
            counts = noise.setdefault(a, _Counts())
        else:
            counts = signal.setdefault((a, b) if a < b else (b, a), _Counts())
        counts.add(cols["subject"][row], response)
    rows: dict[str, list] = {name: [] for name in DISCRIMINATION_SCHEMA.names}
    tested: list[int] = []
    for index, ((a, b), sig) in enumerate(sorted(signal.items())):
        parts = [noise[c] for c in (a, b) if c in noise]
        n_noise = sum(part.n for part in parts)
        false_alarms = sum(part.different for part in parts)
        subjects = sig.subjects.union(*(part.subjects for part in parts))
        absent = [c for c in (a, b) if c not in noise]
        p = dp = fa_rate = note = None
        if not parts:
            note = (
                f"no same-corruption trials of {a} or {b}: no false-alarm rate to compare the "
                "hits with, so the pair is not tested"
            )
        else:
            fa_rate = false_alarms / n_noise
            dp = d_prime(sig.different, sig.n, false_alarms, n_noise)
            table = [[sig.different, sig.n - sig.different], [false_alarms, n_noise - false_alarms]]
            p = float(fisher_exact(table, alternative="greater").pvalue)
            tested.append(index)
            if absent:
                present = b if absent[0] == a else a
                note = f"no same-corruption trials of {absent[0]}; false alarms from {present} only"
        rows["corruption_a"].append(a)
        rows["corruption_b"].append(b)
        rows["n_subjects"].append(len(subjects))
        rows["n_signal"].append(sig.n)
        rows["n_hits"].append(sig.different)
        rows["n_noise"].append(n_noise)
        rows["n_false_alarms"].append(false_alarms)
        rows["hit_rate"].append(sig.different / sig.n)
        rows["false_alarm_rate"].append(fa_rate)
        rows["d_prime"].append(dp)
        rows["p_value"].append(p)
        rows["note"].append(note)
    rows["p_holm"] = [None] * len(rows["p_value"])
    for index, adjusted in zip(
        tested, holm_adjust([rows["p_value"][i] for i in tested]), strict=True
    ):
        rows["p_holm"][index] = adjusted
    rows["distinguishable"] = [None if q is None else q < alpha for q in rows["p_holm"]]
    rows["similar"] = [None if q is None else not q < alpha for q in rows["p_holm"]]
    return pa.table(rows, schema=DISCRIMINATION_SCHEMA)
