"""The summary and coverage tables as HTML pages for the report."""

from __future__ import annotations

from html.parser import HTMLParser

import pyarrow as pa

from vcrbench.figures.tables import NULL, coverage_html, summary_html
from vcrbench.vcr.coverage import SCHEMA as COVERAGE_SCHEMA
from vcrbench.vcr.summary import ORDER


class _Cells(HTMLParser):
    """The header and the text of every body cell of the first table, with their attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.header: list[str] = []
        self.rows: list[list[tuple[str, dict]]] = []
        self.scripts = 0
        self._cell: tuple[list[str], dict] | None = None
        self._in = ""

    def handle_starttag(self, tag, attrs):
        if tag in ("thead", "tbody"):
            self._in = tag
        elif tag == "tr" and self._in == "tbody":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ([], dict(attrs))
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            text = "".join(self._cell[0])
            if tag == "th":
                self.header.append(text)
            else:
                self.rows[-1].append((text, self._cell[1]))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0].append(data)


def _parse(page: str) -> _Cells:
    parser = _Cells()
    parser.feed(page)
    return parser


def _summary_row(**values) -> dict:
    row = dict.fromkeys(ORDER)
    row.update(model="efficientnet-lite0", corruption="gaussian_noise", metric="accuracy",
               classes=16, coverage=0.85, n_samples=800, bins_present=17, dv_min=0.02,
               dv_max=0.91, resampled="images (207)")
    row.update(values)
    return row


def test_summary_page_has_intervals_next_to_values_and_explains_nulls():
    rows = [
        _summary_row(R=0.61234, R_lo=0.58, R_hi=0.65, HMRI=0.9, HMRI_lo=0.85, HMRI_hi=0.95,
                     MRSI=0.2, MRSI_lo=0.1, MRSI_hi=0.3, human_source="model-vs-human/low-pass",
                     imagenet_c_mean=0.5, imagenet_c_mean_lo=0.4, imagenet_c_mean_hi=0.6),
        _summary_row(corruption="frost", classes=1000, bins_present=3,
                     note="R not reported: 3 of 20 bins hold at least L = 20 samples"),
    ]
    page = summary_html(pa.Table.from_pylist(rows))
    assert page == summary_html(pa.Table.from_pylist(rows))  # deterministic
    parsed = _parse(page)
    assert parsed.header[:6] == ["model", "corruption", "property", "R [95 % CI]",
                                 "HMRI [95 % CI]", "MRSI [95 % CI]"]
    assert len(parsed.rows) == 2 and parsed.scripts == 1
    first = dict(zip(parsed.header, (text for text, _ in parsed.rows[0]), strict=True))
    assert first["property"] == "accuracy, 16 classes"
    assert first["R [95 % CI]"] == "0.612 [0.580, 0.650]"
    assert first["HMRI [95 % CI]"] == "0.900 [0.850, 0.950]"
    assert first["ImageNet-C mean [95 % CI]"] == "0.500 [0.400, 0.600]"
    assert first["Δv with data"] == "0.02–0.91" and first["intervals resample"] == "images (207)"
    second = dict(zip(parsed.header, parsed.rows[1], strict=True))
    assert second["R [95 % CI]"][0] == NULL
    assert second["R [95 % CI]"][1]["data-sort"] == ""  # nulls sort last
    assert second["HMRI [95 % CI]"][0] == "no human curve"
    assert second["HMRI [95 % CI]"][1]["data-sort"] == ""  # sorts with the nulls, last
    assert second["note"][0].startswith("R not reported: 3 of 20 bins")
    # sorting keys: the value itself, not the text with its interval
    assert dict(zip(parsed.header, parsed.rows[0], strict=True))["R [95 % CI]"][1][
        "data-sort"] == repr(0.61234)


def test_coverage_page_sets_imagenet_c_against_the_uniform_sample_at_its_size():
    table = pa.Table.from_pylist([
        {"corruption": "frost", "n_samples": 1000, "coverage": 0.95, "imagenet_c_n": 500,
         "imagenet_c_coverage": 0.35, "coverage_at_imagenet_c_n": 0.8},
        {"corruption": "blur", "n_samples": 1000, "coverage": 0.9, "imagenet_c_n": None,
         "imagenet_c_coverage": None, "coverage_at_imagenet_c_n": None},
    ], schema=COVERAGE_SCHEMA)
    parsed = _parse(coverage_html(table, bins=20, min_count=20))
    assert parsed.header[-1] == "uniform coverage at the ImageNet-C size"
    assert [text for text, _ in parsed.rows[0]] == ["frost", "1000", "0.950", "500", "0.350",
                                                    "0.800"]
    assert [text for text, _ in parsed.rows[1]][3:] == ["no ImageNet-C sample", "–", "–"]
