"""The robustness properties, their one selection, and the outcome columns that follow them."""

from __future__ import annotations

import pyarrow as pa

from vcrbench.core.properties import PROPERTIES, select
from vcrbench.evaluation.outcomes import OUTCOME_COLUMNS


def test_select_takes_the_rows_of_one_property_in_order():
    table = pa.table({
        "metric": ["accuracy", "consistency", "accuracy", "accuracy"],
        "classes": pa.array([1000, 1000, 16, 1000], pa.int16()),
        "value": [1, 2, 3, 4],
    })
    assert select(table, "accuracy", 1000).column("value").to_pylist() == [1, 4]
    assert select(table, "consistency", 16).num_rows == 0


def test_every_property_has_its_outcome_columns_in_the_same_order():
    assert list(OUTCOME_COLUMNS) == list(PROPERTIES)
