"""The result tables as HTML pages for the Snakemake report: the summary and the Δv coverage.

Each page is one self-contained HTML file (inline style and a few lines of script, nothing
fetched), deterministic (the same table gives the same bytes), readable at 1366 px: values with
their 95 % interval in one cell, nulls shown as "not reported" with the reason from the table's
``note`` beside them. A click on a column header sorts by that column (numbers as numbers; the
interval cells by their value); the page works without script too, in the table's own order.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import pyarrow as pa

from vcrbench.curves.reachability import UNREACHABLE_NOTE

#: Property titles in plain words (the figures use the same).
PROPERTY_WORDS = {
    ("accuracy", 1000): "accuracy, 1000 classes",
    ("consistency", 1000): "consistency, 1000 classes",
    ("accuracy", 16): "accuracy, 16 classes",
    ("consistency", 16): "consistency, 16 classes",
}
NULL = "not reported"

_STYLE = """
body { font: 14px/1.4 system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 12px;
       color: #1f2933; }
h1 { font-size: 18px; margin: 0 0 6px; }
p.intro { max-width: 72em; margin: 0 0 10px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #d9dee3; padding: 3px 8px; text-align: left;
         vertical-align: top; }
th { position: sticky; top: 0; background: #eef1f4; cursor: pointer; vertical-align: bottom;
     max-width: 11em; }
th[aria-sort=ascending]::after { content: ' \\25B2'; }
th[aria-sort=descending]::after { content: ' \\25BC'; }
td.num, td.nowrap { text-align: right; white-space: nowrap; }
td.nowrap { text-align: left; }
td.null { color: #7b8794; font-style: italic; white-space: nowrap; }
td.note { color: #52606d; font-size: 12px; min-width: 28em; max-width: 56em; }
details { max-width: 72em; margin: 0 0 10px; color: #3e4c59; }
tr:hover td { background: #f7f9fb; }
"""

# Sorting by a header click: numbers by value (data-sort), text alphabetically, nulls last.
_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var down = th.getAttribute('aria-sort') === 'ascending';
      table.querySelectorAll('th').forEach(function (o) { o.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', down ? 'descending' : 'ascending');
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col];
        var v = cell.getAttribute('data-sort');
        return v === null ? cell.textContent : v === '' ? null : parseFloat(v);
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || y === null) { return (x === null) - (y === null); }
        var c = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
        return down ? -c : c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _interval_cell(value: float | None, lo: float | None, hi: float | None) -> str:
    """``<td>`` with ``value [lo, hi]``, or "not reported" for a null value."""
    if value is None:
        return f'<td class="num null" data-sort="">{NULL}</td>'
    text = f"{value:.3f}"
    if lo is not None and hi is not None:
        text += f" [{lo:.3f}, {hi:.3f}]"
    else:
        text += " (no interval)"
    return f'<td class="num" data-sort="{value!r}">{html.escape(text)}</td>'


def _number_cell(value: float | int | None, digits: int = 3) -> str:
    if value is None:
        return f'<td class="num null" data-sort="">{NULL}</td>'
    text = str(value) if isinstance(value, int) else f"{value:.{digits}f}"
    return f'<td class="num" data-sort="{value!r}">{text}</td>'


def _text_cell(value: str | None, css: str = "") -> str:
    """``<td>`` of plain text; a ``null`` cell (a value the table does not have) sorts last."""
    attr = f' class="{css}"' if css else ""
    if "null" in css.split():
        attr += ' data-sort=""'
    return f"<td{attr}>{html.escape(value or '')}</td>"


def html_page(title: str, intro: str, header: Sequence[str], rows: Sequence[Sequence[str]],
              details: str = "") -> str:
    """A self-contained page: ``title``, an ``intro`` paragraph and optional ``details`` (plain
    text, folded), and a sortable table of ``header`` (plain text) and ``rows`` (each a list of
    ready ``<td>`` elements)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    folded = (f"<details><summary>What the columns mean</summary>{html.escape(details)}"
              "</details>\n" if details else "")
    body = "\n".join(f"<tr>{''.join(cells)}</tr>" for cells in rows)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n<p class=\"intro\">{html.escape(intro)}</p>\n{folded}"
        f"<table class=\"sortable\">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n"
        f"</tbody>\n</table>\n<script>{_SCRIPT}</script>\n</body>\n</html>\n"
    )


SUMMARY_INTRO = (
    "One row per model, corruption and property. Brackets: 95 % bootstrap intervals (the column "
    "'intervals resample' says over what). 'not reported': the data cannot support the number, "
    "and the note says why. Click a column header to sort."
)
SUMMARY_DETAILS = (
    "R is the area under the fitted curve of accuracy (R_a) or prediction consistency (R_p) over "
    "the whole visual change range Δv = 1 − VIF from 0 to 1: the average rate over all levels "
    "of visual change. HMRI is the share of the human curve's area the model reaches (1: never "
    "below humans) and MRSI the share of the model's area above the human curve (0: never above "
    "humans), over the Δv range of the human data, where a human curve exists. Intervals are "
    "95 % percentile bootstrap intervals over images, or over the samples of too few images. "
    "Coverage: the fraction of the Δv bins holding enough samples; samples and bins with data: "
    "what the curve rests on; Δv with data: the range the curve's data span (beyond it the "
    "curve only joins its anchors). ImageNet-C mean: the mean rate over the five fixed "
    "severities of the ImageNet-C sample."
)


def summary_html(summary: pa.Table) -> str:
    """``metrics/summary.parquet`` (:mod:`vcrbench.vcr.summary`) as an HTML page."""
    header = ["model", "corruption", "property", "R [95 % CI]", "HMRI [95 % CI]",
              "MRSI [95 % CI]", "coverage", "samples", "bins with data", "Δv with data",
              "ImageNet-C mean [95 % CI]", "intervals resample", "note"]
    rows = []
    for row in summary.to_pylist():
        prop = (row["metric"], row["classes"])
        dv_range = (None if row["dv_min"] is None or row["dv_max"] is None
                    else f"{row['dv_min']:.2f}–{row['dv_max']:.2f}")
        rows.append([
            _text_cell(row["model"]),
            _text_cell(row["corruption"]),
            _text_cell(PROPERTY_WORDS.get(prop, f"{prop[0]}, {prop[1]} classes"), "nowrap"),
            _interval_cell(row["R"], row["R_lo"], row["R_hi"]),
            _interval_cell(row["HMRI"], row["HMRI_lo"], row["HMRI_hi"])
            if row["human_source"] else _text_cell("no human curve", "null"),
            _interval_cell(row["MRSI"], row["MRSI_lo"], row["MRSI_hi"])
            if row["human_source"] else _text_cell("no human curve", "null"),
            _number_cell(row["coverage"]),
            _number_cell(row["n_samples"]),
            _number_cell(row["bins_present"]),
            _text_cell(dv_range or NULL, "nowrap" if dv_range else "null"),
            _interval_cell(row["imagenet_c_mean"], row.get("imagenet_c_mean_lo"),
                           row.get("imagenet_c_mean_hi"))
            if row["imagenet_c_mean"] is not None else _text_cell("no ImageNet-C sample",
                                                                  "null"),
            _text_cell(row["resampled"], "nowrap"),
            _text_cell(row["note"], "note"),
        ])
    return html_page("Summary: robustness per model, corruption and property", SUMMARY_INTRO,
                     header, rows, SUMMARY_DETAILS)


def coverage_html(table: pa.Table, *, bins: int, min_count: int) -> str:
    """The Δv coverage table (:mod:`vcrbench.vcr.coverage`) as an HTML page."""
    intro = (
        f"Δv coverage per corruption (VCR paper, Table 2): the fraction of the {bins} equal "
        f"Δv bins holding at least L = {min_count} samples. Coverage grows with the number of "
        "samples, so the last column puts the uniform sample on the ImageNet-C sample's "
        "footing: its coverage at the ImageNet-C sample's size (the mean over every subsample "
        "of that size). Compare the ImageNet-C coverage with that column, not with the "
        "full-size one.")
    header = ["corruption", "uniform samples", "uniform coverage", "ImageNet-C samples",
              "ImageNet-C coverage", "uniform coverage at the ImageNet-C size"]
    rows = []
    for row in table.to_pylist():
        none = row["imagenet_c_n"] is None
        rows.append([
            _text_cell(row["corruption"]),
            _number_cell(row["n_samples"]),
            _number_cell(row["coverage"]),
            _text_cell("no ImageNet-C sample", "null") if none
            else _number_cell(row["imagenet_c_n"]),
            _text_cell("–", "null") if none else _number_cell(row["imagenet_c_coverage"]),
            _text_cell("–", "null") if none else _number_cell(row["coverage_at_imagenet_c_n"]),
        ])
        if "unreachable" in table.column_names:  # adaptive runs (vcrbench.vcr.coverage)
            rows[-1] += [
                _text_cell("–", "null") if row["reachable_bins"] is None
                else _number_cell(row["reachable_bins"]),
                _text_cell("–", "null") if row["reachable_coverage"] is None
                else _number_cell(row["reachable_coverage"]),
                _text_cell(row["unreachable"] or "none"),
            ]
    if "unreachable" in table.column_names:
        header = [*header, "reachable bins", "coverage of the reachable bins", "unreachable Δv"]
        intro += f" {UNREACHABLE_NOTE}."
    return html_page("Δv coverage of the uniform and the ImageNet-C samples", intro, header,
                     rows)
