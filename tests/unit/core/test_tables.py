"""Parquet writes are atomic and reproducible."""

from __future__ import annotations

import pyarrow as pa
import pytest

from vcrbench.core.tables import read_table, write_table


def test_same_table_same_bytes(tmp_path):
    table = pa.table({"a": [1, 2, 3], "b": ["x", "y", None]})
    write_table(table, tmp_path / "one.parquet")
    write_table(table, tmp_path / "two.parquet")
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "two.parquet").read_bytes()
    assert read_table(tmp_path / "one.parquet").equals(table)


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", explode)
    with pytest.raises(OSError):
        write_table(pa.table({"a": [1]}), tmp_path / "x.parquet")
    assert list(tmp_path.iterdir()) == []
