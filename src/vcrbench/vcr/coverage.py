"""The Δv coverage table (VCR paper, Table 2): per corruption, the coverage of the uniform
sample next to that of the ImageNet-C severity sample, derived from ``metrics/summary.parquet``.

Coverage is the fraction of the M Δv bins holding at least L samples. A corruption's uniform
coverage is taken from its summary row with the most samples (consistency uses every sample,
accuracy only the labelled ones); every model sees the same sample, so the model does not
matter. ``imagenet_c_coverage`` is the same on every row of a corruption (null without an
ImageNet-C sample).

Coverage grows with the sample size, so a small ImageNet-C sample next to a large uniform one
is no fair comparison: ``coverage_at_imagenet_c_n`` is the uniform sample's coverage at the
ImageNet-C sample's size, the mean over every subsample of that size
(:func:`vcrbench.curves.binning.expected_coverage`).

Table columns: ``corruption`` (string), ``n_samples`` (int64, uniform samples behind the
coverage), ``coverage``, ``imagenet_c_n`` (int64, samples of the ImageNet-C sample),
``imagenet_c_coverage``, ``coverage_at_imagenet_c_n`` (float64 in [0, 1]; the ImageNet-C
columns null where the corruption has no ImageNet-C sample). A run with ``sampling.spacing:
adaptive`` has a pilot per corruption that says which bins the corruption can reach at this size
(:func:`vcrbench.curves.reachability.reachable_bins`, and every bin a sample of the run lands
in, :func:`~vcrbench.curves.reachability.reached_bins`); its table has three more columns:
``reachable_bins`` (int64, bins some parameter value reaches), ``reachable_coverage`` (float64,
the share of those holding at least L samples: the design's own coverage, which a corruption's
reach does not lower) and ``unreachable`` (string, the Δv ranges of the other bins, e.g.
``0.025–0.600``; null where every bin is reachable). Other runs' tables are unchanged. Shown as
CSV
(:func:`vcrbench.core.tables.csv_text`), Markdown (:func:`coverage_markdown`) and HTML for the
report (:func:`vcrbench.figures.tables.coverage_html`), derived from the Parquet summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from vcrbench.core.tables import markdown_table
from vcrbench.curves.binning import expected_coverage
from vcrbench.curves.reachability import UNREACHABLE_NOTE, bin_of, unreachable_ranges

SCHEMA = pa.schema(
    [
        ("corruption", pa.string()),
        ("n_samples", pa.int64()),
        ("coverage", pa.float64()),
        ("imagenet_c_n", pa.int64()),
        ("imagenet_c_coverage", pa.float64()),
        ("coverage_at_imagenet_c_n", pa.float64()),
    ]
)
#: The columns an adaptive run's table adds (module docstring).
REACHABILITY = (
    pa.field("reachable_bins", pa.int64()),
    pa.field("reachable_coverage", pa.float64()),
    pa.field("unreachable", pa.string()),
)


def coverage_table(
    summary: pa.Table,
    corruptions: Sequence[str] | None = None,
    *,
    uniform_dv: Mapping[str, np.ndarray] | None = None,
    imagenet_c_n: Mapping[str, int] | None = None,
    bins: int = 40,
    min_count: int = 20,
    reachable: Mapping[str, np.ndarray] | None = None,
) -> pa.Table:
    """One row per corruption (in ``corruptions`` order, else the summary's), module docstring.

    Args:
        summary: ``metrics/summary.parquet``.
        corruptions: the order of the rows.
        uniform_dv: corruption -> Δv of every sample of its uniform sample (for the coverage at
            the ImageNet-C sample's size; null without).
        imagenet_c_n: corruption -> size of its ImageNet-C sample (absent: none).
        bins, min_count: the run's M and L.
        reachable: corruption -> boolean (bins,), the bins its pilot reaches (adaptive runs;
            None: the table without the reachability columns).
    """
    uniform_dv = uniform_dv or {}
    imagenet_c_n = imagenet_c_n or {}
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
        n_ic = imagenet_c_n.get(corruption) if ic is not None else None
        dv = uniform_dv.get(corruption)
        at_n = None
        if n_ic is not None and dv is not None and len(dv) >= n_ic:
            at_n = expected_coverage(np.asarray(dv), int(n_ic), bins=bins, min_count=min_count)
        out.append(
            {
                "corruption": corruption,
                "n_samples": best["n_samples"],
                "coverage": best["coverage"],
                "imagenet_c_n": n_ic,
                "imagenet_c_coverage": ic,
                "coverage_at_imagenet_c_n": at_n,
            }
        )
        if reachable is not None:
            out[-1].update(_reachability(reachable.get(corruption), dv, bins, min_count))
    if reachable is None:
        return pa.Table.from_pylist(out, schema=SCHEMA)
    return pa.Table.from_pylist(out, schema=pa.schema([*SCHEMA, *REACHABILITY]))


def _reachability(reach: np.ndarray | None, dv: np.ndarray | None, bins: int,
                  min_count: int) -> dict[str, object]:
    """The reachability columns of one corruption (nulls without its pilot or its Δv)."""
    if reach is None:
        return {"reachable_bins": None, "reachable_coverage": None, "unreachable": None}
    reach = np.asarray(reach, bool)
    if len(reach) != bins:
        raise ValueError(f"reachability of {len(reach)} bins for a run of {bins}")
    covered = None
    if dv is not None and len(dv):
        counts = np.bincount(bin_of(np.asarray(dv), bins), minlength=bins)
        reach = reach | (counts > 0)  # a bin the run's samples land in is reachable
        covered = float((counts[reach] >= min_count).mean())
    ranges = unreachable_ranges(~reach)
    return {"reachable_bins": int(reach.sum()), "reachable_coverage": covered,
            "unreachable": ", ".join(ranges) or None}


def _fraction(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def coverage_markdown(table: pa.Table, *, bins: int | None = None,
                      min_count: int | None = None) -> str:
    """The coverage table as Markdown, with M and L stated when given."""
    header = ["corruption", "uniform samples", "uniform coverage", "ImageNet-C samples",
              "ImageNet-C coverage", "uniform coverage at the ImageNet-C size"]
    reach = "unreachable" in table.column_names
    if reach:
        header += ["reachable bins", "coverage of the reachable bins", "unreachable Δv"]
    rows = []
    for row in table.to_pylist():
        rows.append([
            row["corruption"],
            str(row["n_samples"]),
            _fraction(row["coverage"]),
            "–" if row["imagenet_c_n"] is None else str(row["imagenet_c_n"]),
            _fraction(row["imagenet_c_coverage"]),
            _fraction(row["coverage_at_imagenet_c_n"]),
        ])
        if reach:
            rows[-1] += ["–" if row["reachable_bins"] is None else str(row["reachable_bins"]),
                         _fraction(row["reachable_coverage"]), row["unreachable"] or "none"]
    lines = markdown_table(header, rows)
    note = "Coverage: fraction of the Δv bins holding at least L samples"
    if bins is not None and min_count is not None:
        note += f" (M = {bins} bins, L = {min_count})"
    text = "\n".join(lines) + (
        f"\n\n{note}; the last column is the uniform sample's coverage at the ImageNet-C sample's"
        " size (mean over every subsample of that size); – : no ImageNet-C sample.\n")
    if reach:
        text += (f"\n{UNREACHABLE_NOTE}; coverage of the reachable bins: the share of the"
                 " other bins holding at least L samples.\n")
    return text

