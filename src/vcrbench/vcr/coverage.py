"""The Δv coverage table (VCR paper, Table 2): per corruption, the coverage of the uniform
sample next to that of the ImageNet-C severity sample, derived from ``metrics/summary.parquet``.

Coverage is the fraction of the M Δv bins holding at least L samples. A corruption's uniform
coverage is taken from its summary row with the most samples (consistency uses every sample,
accuracy only the labelled ones); every model sees the same sample, so the model does not
matter. ``imagenet_c_coverage`` is the same on every row of a corruption (null without an
ImageNet-C sample).

Table columns: ``corruption`` (string), ``n_samples`` (int64, uniform samples behind the
coverage), ``coverage``, ``imagenet_c_coverage`` (float64 in [0, 1], null where absent).
Shown as CSV (:func:`vcrbench.core.tables.csv_text`) and Markdown (:func:`coverage_markdown`),
derived from the Parquet summary.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from vcrbench.core.tables import markdown_table

SCHEMA = pa.schema(
    [
        ("corruption", pa.string()),
        ("n_samples", pa.int64()),
        ("coverage", pa.float64()),
        ("imagenet_c_coverage", pa.float64()),
    ]
)


def coverage_table(summary: pa.Table, corruptions: Sequence[str] | None = None) -> pa.Table:
    """One row per corruption (in ``corruptions`` order, else the summary's), module docstring."""
    rows = summary.select(
        ["corruption", "n_samples", "coverage", "imagenet_c_coverage"]
    ).to_pylist()
    order = list(corruptions) if corruptions is not None else []
    order += [c for c in dict.fromkeys(r["corruption"] for r in rows) if c not in order]
    out = []
    for corruption in order:
        mine = [r for r in rows if r["corruption"] == corruption]
        if not mine:
            continue
        best = max(mine, key=lambda r: (r["n_samples"] or 0))
        ic = next((r["imagenet_c_coverage"] for r in mine if r["imagenet_c_coverage"] is not None),
                  None)
        out.append(
            {
                "corruption": corruption,
                "n_samples": best["n_samples"],
                "coverage": best["coverage"],
                "imagenet_c_coverage": ic,
            }
        )
    return pa.Table.from_pylist(out, schema=SCHEMA)


def coverage_markdown(table: pa.Table, *, bins: int | None = None,
                      min_count: int | None = None) -> str:
    """The coverage table as Markdown, with M and L stated when given."""
    header = ["corruption", "uniform samples", "uniform coverage", "ImageNet-C coverage"]
    rows = [
        [
            row["corruption"],
            str(row["n_samples"]),
            f"{row['coverage']:.3f}",
            "–" if row["imagenet_c_coverage"] is None else f"{row['imagenet_c_coverage']:.3f}",
        ]
        for row in table.to_pylist()
    ]
    lines = markdown_table(header, rows)
    note = "Coverage: fraction of the Δv bins holding at least L samples"
    if bins is not None and min_count is not None:
        note += f" (M = {bins} bins, L = {min_count})"
    return "\n".join(lines) + f"\n\n{note}; – : no ImageNet-C sample.\n"
