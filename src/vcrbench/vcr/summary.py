"""The summary table ``metrics/summary.parquet``: one row per model × corruption × property.

Columns (documented in the README): ``model, corruption, metric, classes, R, R_lo, R_hi,
HMRI, HMRI_lo, HMRI_hi, MRSI, MRSI_lo, MRSI_hi, coverage, n_samples, bins_present, dv_min,
dv_max, human_source, human_dv_min, human_dv_max, anchor, right_anchor, lam, resampled,
imagenet_c_mean, imagenet_c_mean_lo, imagenet_c_mean_hi, imagenet_c_coverage, note``.
Human-relative columns are null where no human curve exists, the ImageNet-C ones where the
run has no ImageNet-C sample for that corruption (``sampling.imagenet_c_n``). ``note`` joins
the curve's note and the human comparison's: why a value is null (too little support) or
restricted (HMRI / MRSI over the human data's range).
CSV (:func:`vcrbench.core.tables.csv_text`) and Markdown (:func:`summary_markdown`) are
derived from the Parquet table, never the other way round.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.core.tables import markdown_table

HUMAN_COLUMNS = ("HMRI", "HMRI_lo", "HMRI_hi", "MRSI", "MRSI_lo", "MRSI_hi", "human_dv_min",
                 "human_dv_max")
ORDER = (
    "model",
    "corruption",
    "metric",
    "classes",
    "R",
    "R_lo",
    "R_hi",
    *HUMAN_COLUMNS[:6],
    "coverage",
    "n_samples",
    "bins_present",
    "dv_min",
    "dv_max",
    "human_source",
    *HUMAN_COLUMNS[6:],
    "anchor",
    "right_anchor",
    "lam",
    "resampled",
    "imagenet_c_mean",
    "imagenet_c_mean_lo",
    "imagenet_c_mean_hi",
    "imagenet_c_coverage",
    "note",
)
KEYS = ("model", "corruption", "metric", "classes")


def _lookup(extra: pa.Table | None, metrics: pa.Table, column: str,
            kind: pa.DataType) -> pa.Array:
    """``column`` of ``extra`` aligned to the rows of ``metrics`` by KEYS (null where absent)."""
    if extra is None or extra.num_rows == 0:
        return pa.nulls(metrics.num_rows, kind)
    found = {tuple(row[k] for k in KEYS): row[column] for row in extra.to_pylist()}
    keys = zip(*(metrics.column(k).to_pylist() for k in KEYS), strict=True)
    return pa.array([found.get(key) for key in keys], kind)


def label_space_note(name: str, classes: int) -> str | None:
    """What a run on a label space other than ImageNet-1k's lacks, for every summary row's
    ``note`` (None for ImageNet)."""
    if name == "imagenet":
        return None
    return (f"{name} labels ({classes} classes): no 16-class rows, no human comparison (the "
            "human experiments answer in 16 categories of ImageNet classes)")


def unreachable_note(ranges: str | None) -> str | None:
    """A summary note for a corruption whose pilot finds Δv ranges it cannot reach (adaptive
    spacing; ``ranges`` as :func:`vcrbench.curves.reachability.unreachable_ranges` joined)."""
    if not ranges:
        return None
    return (f"Δv {ranges} unreachable: no parameter value of this corruption gets there on these "
            "images at this size (pilot); those bins are missing by the corruption, not the "
            "design")


def build_summary(metrics: pa.Table, human: pa.Table | None = None,
                  imagenet_c: pa.Table | None = None, label_note: str | None = None,
                  unreachable: dict[str, str] | None = None) -> pa.Table:
    """Per-model metrics joined with the human-relative and ImageNet-C columns (module docstring).

    ``human`` has KEYS, the HMRI / MRSI columns and ``human_source``; ``imagenet_c`` KEYS,
    ``imagenet_c_mean`` (with ``_lo``, ``_hi``) and ``imagenet_c_coverage``; ``label_note``
    (:func:`label_space_note`) ends every row's note; ``unreachable`` (adaptive runs):
    corruption -> its unreachable Δv ranges, said in that corruption's rows' note
    (:func:`unreachable_note`) before the label note.
    """
    columns = {name: metrics.column(name) for name in metrics.column_names}
    for name in HUMAN_COLUMNS:
        columns[name] = _lookup(human, metrics, name, pa.float64())
    columns["human_source"] = _lookup(human, metrics, "human_source", pa.string())
    human_note = _lookup(human, metrics, "note", pa.string()).to_pylist()
    reach = [unreachable_note((unreachable or {}).get(c))
             for c in metrics.column("corruption").to_pylist()]
    columns["note"] = pa.array(
        ["; ".join(n for n in (*pair, label_note) if n) or None
         for pair in zip(metrics.column("note").to_pylist(), human_note, reach, strict=True)],
        pa.string())
    for name in ("imagenet_c_mean", "imagenet_c_mean_lo", "imagenet_c_mean_hi",
                 "imagenet_c_coverage"):
        columns[name] = _lookup(imagenet_c, metrics, name, pa.float64())
    table = pa.table({name: columns[name] for name in ORDER})
    indices = pc.sort_indices(
        table,
        sort_keys=[
            ("model", "ascending"),
            ("corruption", "ascending"),
            ("metric", "ascending"),
            ("classes", "descending"),
        ],
    )
    return table.take(indices)


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


def summary_markdown(summary: pa.Table) -> str:
    """The summary as a Markdown table: R with its interval, HMRI/MRSI, coverage, counts."""
    header = [
        "model",
        "corruption",
        "metric",
        "classes",
        "R [95 % CI]",
        "HMRI",
        "MRSI",
        "coverage",
        "ImageNet-C mean",
        "n",
        "bins",
        "note",
    ]
    rows = []
    for row in summary.to_pylist():
        interval = (
            f"{_cell(row['R'])} [{_cell(row['R_lo'])}, {_cell(row['R_hi'])}]"
            if row["R"] is not None
            else "–"
        )
        cells = [
            row["model"],
            row["corruption"],
            row["metric"],
            str(row["classes"]),
            interval,
            _cell(row["HMRI"]),
            _cell(row["MRSI"]),
            _cell(row["coverage"]),
            _cell(row["imagenet_c_mean"]),
            str(row["n_samples"]),
            str(row["bins_present"]),
            row["note"] or "",
        ]
        rows.append(cells)
    return "\n".join(markdown_table(header, rows)) + "\n"
