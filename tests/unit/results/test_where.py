"""Text filters of ``vcrbench results --where``: parsed, typed by the column, never evaluated."""

from __future__ import annotations

import polars as pl
import pytest

from vcrbench.errors import VcrbenchError
from vcrbench.results.where import apply_conditions, key_values, parse_condition, parse_conditions

FRAME = pl.DataFrame(
    {"model": ["a", "b", "c", None], "classes": pl.Series([1000, 16, 1000, 16], dtype=pl.Int16),
     "R": [0.5, None, 0.7, 0.2], "present": [True, False, True, True]})


def _keep(*texts: str) -> list[int]:
    frame = FRAME.with_row_index("i").lazy()
    return apply_conditions(frame, parse_conditions(list(texts))).collect()["i"].to_list()


def test_equal_and_not_equal_take_comma_separated_values_of_the_columns_type():
    assert _keep("model=a,c") == [0, 2]
    assert _keep("classes=16") == [1, 3]
    assert _keep("model!=a") == [1, 2, 3], "!= keeps the nulls unless null is named"
    assert _keep("model!=a,null") == [1, 2]
    assert _keep("present=false") == [1]
    assert _keep("R=null") == [1]
    assert _keep("R!=null", "classes=1000") == [0, 2], "repeated conditions all hold"


def test_order_comparisons_on_numbers():
    assert _keep("R<0.5") == [3]
    assert _keep("R<=0.5") == [0, 3]
    assert _keep("R > 0.5") == [2]
    assert _keep("classes>=1000") == [0, 2]


@pytest.mark.parametrize(("text", "message"), [
    ("model", "write COLUMN=VALUE"),
    ("model=", "write COLUMN=VALUE"),
    ("__import__('os')=1", "write COLUMN=VALUE"),
    ("R<null", "cannot compare with null"),
])
def test_malformed_conditions_are_refused(text, message):
    with pytest.raises(VcrbenchError, match=message):
        parse_condition(text)


@pytest.mark.parametrize(("text", "message"), [
    ("modle=a", "no column 'modle'; columns: i, model, classes, R, present"),
    ("classes=many", "'many' is not a value of classes"),
    ("present=yes", "'yes' is not a value of present"),
    ("model<b", "< needs a numeric column"),
])
def test_conditions_that_do_not_fit_the_table_are_refused(text, message):
    with pytest.raises(VcrbenchError, match=message):
        _keep(text)


def test_key_values_intersect_equal_conditions_only():
    conditions = parse_conditions(["model=a,b", "model=b,c", "R<0.5", "corruption!=x"])
    assert key_values(conditions, "model") == ["b"]
    assert key_values(conditions, "corruption") is None
    assert key_values(parse_conditions(["model=a,null"]), "model") is None
