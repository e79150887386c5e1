"""The retraining table (VCR paper Table 3): every metric of a model before and after fine-tuning.

Schema of ``metrics/retraining.parquet`` (one row per fine-tuned model × corruption × property ×
quantity): ``finetuned``, ``base`` (model names), ``corruption``, ``metric`` ("accuracy" |
"consistency"), ``classes`` (the data set's own count, 1000 for ImageNet or 10 for CIFAR-10,
| 16), ``quantity`` ("R" | "HMRI" | "MRSI"), ``before``, ``before_lo``, ``before_hi``,
``after``, ``after_lo``, ``after_hi`` (values and 95 % intervals of the summary), ``change``
(after − before), ``change_lo``, ``change_hi``, ``verdict``.

Intervals of the change in R: replicate ``b`` of the fine-tuned model's bootstrap curve paired
with replicate ``b`` of the base model's (each R_b the exact area of the replicate,
:func:`vcrbench.curves.tables.replicate_areas`). Both models are evaluated on the same samples
and their replicates resample the same images with the same weights
(:mod:`vcrbench.curves.resampling`), so this is a paired interval of the change. (With fewer
than ``bootstrap.min_units`` images the replicates resample samples independently per model and
the interval is conservative.) ``verdict``:
"higher" / "lower" when the change interval of R excludes 0, and for HMRI and MRSI when the two
95 % intervals do not overlap; else "within" (null when a value is missing). HMRI / MRSI
(16-class rows with human data) have no change interval.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.core.tables import markdown_table
from vcrbench.curves.bootstrap import metric_interval
from vcrbench.curves.tables import replicate_areas
from vcrbench.errors import VcrbenchError

QUANTITIES = ("R", "HMRI", "MRSI")
SCHEMA = pa.schema(
    [
        ("finetuned", pa.string()),
        ("base", pa.string()),
        ("corruption", pa.string()),
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("quantity", pa.string()),
        ("before", pa.float64()),
        ("before_lo", pa.float64()),
        ("before_hi", pa.float64()),
        ("after", pa.float64()),
        ("after_lo", pa.float64()),
        ("after_hi", pa.float64()),
        ("change", pa.float64()),
        ("change_lo", pa.float64()),
        ("change_hi", pa.float64()),
        ("verdict", pa.string()),
    ]
)
#: Columns of the Markdown table: (quantity, metric, classes, header); classes None: the data
#: set's own classes (1000 for ImageNet, 10 for CIFAR-10), else the 16 categories.
MARKDOWN_COLUMNS = (
    ("R", "accuracy", None, "R_a"),
    ("R", "accuracy", 16, "R_a (16)"),
    ("HMRI", "accuracy", 16, "HMRI_a"),
    ("MRSI", "accuracy", 16, "MRSI_a"),
    ("R", "consistency", None, "R_p"),
    ("HMRI", "consistency", 16, "HMRI_p"),
    ("MRSI", "consistency", 16, "MRSI_p"),
)


def _verdict(quantity: str, row: dict) -> str | None:
    if row["before"] is None or row["after"] is None:
        return None
    if quantity == "R":
        lo, hi = row["change_lo"], row["change_hi"]
    else:
        lo = None if row["after_lo"] is None or row["before_hi"] is None else (
            row["after_lo"] - row["before_hi"])
        hi = None if row["after_hi"] is None or row["before_lo"] is None else (
            row["after_hi"] - row["before_lo"])
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    return "higher" if lo > 0 else "lower" if hi < 0 else "within"


def _value(x: object) -> float | None:
    return None if x is None or (isinstance(x, float) and not np.isfinite(x)) else float(x)


def retraining_table(
    summary: pa.Table,
    pairs: list[tuple[str, str]],
    replicates: dict[tuple[str, str], pa.Table],
) -> pa.Table:
    """Before/after rows for each (fine-tuned model, base model) pair of model names.

    ``replicates[(model, corruption)]`` is that model's ``curves/<m>/<c>-replicates.parquet``.
    """
    by_key = {
        (r["model"], r["corruption"], r["metric"], r["classes"]): r for r in summary.to_pylist()
    }
    models = {key[0] for key in by_key}
    rows = []
    for finetuned, base in pairs:
        for name in (finetuned, base):
            if name not in models:
                raise VcrbenchError(f"retraining: the summary has no rows for model {name!r}")
        keys = sorted(
            {key[1:] for key in by_key if key[0] == finetuned},
            key=lambda k: (k[0], k[1], -k[2]),
        )
        for corruption, metric, classes in keys:
            after = by_key[(finetuned, corruption, metric, classes)]
            before = by_key.get((base, corruption, metric, classes))
            if before is None:
                continue
            for quantity in QUANTITIES:
                row = {
                    "finetuned": finetuned,
                    "base": base,
                    "corruption": corruption,
                    "metric": metric,
                    "classes": classes,
                    "quantity": quantity,
                    "before": _value(before[quantity]),
                    "before_lo": _value(before[f"{quantity}_lo"]),
                    "before_hi": _value(before[f"{quantity}_hi"]),
                    "after": _value(after[quantity]),
                    "after_lo": _value(after[f"{quantity}_lo"]),
                    "after_hi": _value(after[f"{quantity}_hi"]),
                    "change": None,
                    "change_lo": None,
                    "change_hi": None,
                }
                if row["before"] is None and row["after"] is None:
                    continue
                if row["before"] is not None and row["after"] is not None:
                    row["change"] = row["after"] - row["before"]
                if quantity == "R" and row["change"] is not None:
                    a = replicate_areas(replicates[(finetuned, corruption)], metric, classes)
                    b = replicate_areas(replicates[(base, corruption)], metric, classes)
                    n = min(a.size, b.size)
                    if n:
                        lo, hi = metric_interval(a[:n] - b[:n])
                        row["change_lo"], row["change_hi"] = _value(lo), _value(hi)
                row["verdict"] = _verdict(quantity, row)
                rows.append(row)
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _cell(row: dict | None) -> str:
    if row is None or (row["before"] is None and row["after"] is None):
        return "–"

    def number(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    text = f"{number(row['before'])} → {number(row['after'])}"
    if row["change"] is not None:
        text += f" ({row['change']:+.3f}"
        if row["change_lo"] is not None:
            text += f" [{row['change_lo']:+.3f}, {row['change_hi']:+.3f}]"
        text += ")"
    return text


def retraining_markdown(table: pa.Table) -> str:
    """Table 3's layout: a row per fine-tuned model and corruption, "before → after (change
    [95 % CI])" per metric; columns without any value are left out."""
    rows = table.to_pylist()

    def column_classes(classes: int) -> int | None:
        return 16 if classes == 16 else None

    found = {(r["finetuned"], r["corruption"], r["quantity"], r["metric"],
              column_classes(r["classes"])): r for r in rows}
    columns = [c for c in MARKDOWN_COLUMNS
               if any((r["quantity"], r["metric"], column_classes(r["classes"])) == c[:3]
                      for r in rows)]
    header = ["fine-tuned model", "base", "corruption", *(c[3] for c in columns)]
    seen = []
    for r in rows:
        if (r["finetuned"], r["corruption"]) not in seen:
            seen.append((r["finetuned"], r["corruption"]))
    bases = {r["finetuned"]: r["base"] for r in rows}
    lines = markdown_table(header, (
        [finetuned, bases[finetuned], corruption,
         *(_cell(found.get((finetuned, corruption, *c[:3]))) for c in columns)]
        for finetuned, corruption in seen
    ))
    note = ("\nValues: before → after (change [95 % interval of the change, R only]); "
            "intervals of each value are in retraining.csv.\n")
    return "\n".join(lines) + "\n" + note
