"""Opening results folders: tables read back equal the files (read by pyarrow), the run and
model columns, scans that open only the chosen files, missing tables and schema changes."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from helpers.results_folder import CORRUPTIONS, MODELS

from vcrbench.core.tables import write_table
from vcrbench.errors import VcrbenchError
from vcrbench.results import TABLES, open_runs
from vcrbench.vcr.coverage import SCHEMA as COVERAGE_SCHEMA


def _rows(frame: pl.DataFrame, drop: list[str]) -> list[dict]:
    return frame.drop(drop).to_dicts()


def test_one_file_tables_equal_their_files(two_runs):
    runs = open_runs(two_runs)
    for name in ("summary", "overlap-matrix", "overlap-benchmarks"):
        table = runs.table(name)
        assert table.columns[0] == "run"
        for folder in two_runs:
            path = folder / TABLES[name].pattern
            mine = table.filter(pl.col("run") == folder.name)
            assert _rows(mine, ["run"]) == pq.read_table(path).to_pylist(), name
            assert mine.drop("run").columns == pq.read_schema(path).names


def test_the_coverage_csv_reads_with_its_schema(two_runs):
    table = open_runs(two_runs).table("coverage")
    assert table.drop("run").schema == pl.from_arrow(COVERAGE_SCHEMA.empty_table()).schema
    for folder in two_runs:
        expected = pacsv.read_csv(
            folder / "metrics" / "coverage.csv",
            convert_options=pacsv.ConvertOptions(column_types=COVERAGE_SCHEMA)).to_pylist()
        assert _rows(table.filter(pl.col("run") == folder.name), ["run"]) == expected


@pytest.mark.parametrize("name", ["rates", "curves", "outcomes", "metrics"])
def test_per_model_tables_equal_their_files_with_run_model_and_corruption(two_runs, name):
    table = open_runs(two_runs).table(name)
    origin = ["run", "model", "corruption"]
    assert table.columns[:3] == origin
    assert table.height == sum(
        pq.read_metadata(folder / TABLES[name].pattern.format(model=m, corruption=c)).num_rows
        for folder in two_runs for m in MODELS for c in CORRUPTIONS)
    for folder in two_runs:
        for slug, model in MODELS.items():
            for corruption in CORRUPTIONS:
                path = folder / TABLES[name].pattern.format(model=slug, corruption=corruption)
                mine = table.filter((pl.col("run") == folder.name) & (pl.col("model") == model)
                                    & (pl.col("corruption") == corruption))
                own = [c for c in origin[1:] if c in pq.read_schema(path).names]
                assert _rows(mine, [c for c in origin if c not in own]) == (
                    pq.read_table(path).to_pylist())


def test_shards_are_read_in_order_and_scores_leave_out_the_pixels(two_runs):
    old, new = two_runs
    runs = open_runs(two_runs)
    scores = runs.table("scores")
    assert "image" not in scores.columns, "stored pixels are not results"
    for folder in (old, new):
        for corruption in CORRUPTIONS:
            shards = sorted((folder / "scored" / corruption).glob("shard-*.parquet"))
            expected = pa.concat_tables(
                pq.read_table(p, columns=["sample_id", "image_id", "vif", "dv", "checksum"])
                for p in shards).to_pylist()
            mine = scores.filter((pl.col("run") == folder.name)
                                 & (pl.col("corruption") == corruption))
            assert _rows(mine, ["run", "corruption"]) == expected
    predictions = runs.table("predictions", run="new", model="trained:net",
                             corruption="gaussian_blur")
    shards = sorted((new / "predictions" / "trained-net" / "gaussian_blur").glob("shard-*"))
    assert _rows(predictions, ["run", "model", "corruption"]) == pa.concat_tables(
        pq.read_table(p) for p in shards).to_pylist()


def test_runs_are_named_after_their_folders_and_models_after_their_metrics(two_runs):
    runs = open_runs(two_runs)
    assert runs.names == ["old", "new"]
    rates = runs.table("rates")
    assert rates.get_column("run").unique(maintain_order=True).to_list() == ["old", "new"]
    assert sorted(rates.get_column("model").unique().to_list()) == sorted(MODELS.values())
    named = open_runs({"last-week": two_runs[0], "today": two_runs[1]})
    assert named.table("summary").get_column("run").unique(maintain_order=True).to_list() == [
        "last-week", "today"]


def test_two_folders_of_one_name_must_be_named(two_runs, tmp_path):
    from helpers.results_folder import make_run

    twin = make_run(tmp_path / "elsewhere" / "old")
    with pytest.raises(VcrbenchError, match=r"two runs are called 'old'.*NAME=PATH"):
        open_runs([two_runs[0], twin])
    assert open_runs({"a": two_runs[0], "b": twin}).names == ["a", "b"]


def test_a_folder_that_is_no_run_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(VcrbenchError, match="not a results folder"):
        open_runs([tmp_path / "empty"])
    with pytest.raises(VcrbenchError, match="no such results folder"):
        open_runs([tmp_path / "absent"])


def test_a_scan_opens_only_the_chosen_models_and_corruptions(two_runs):
    old, new = two_runs
    for folder in (old, new):
        for path in folder.glob("outcomes/*/*.parquet"):
            if not (path.parent.name == "trained-net" and path.stem == "gaussian_noise"):
                path.write_bytes(b"not parquet")
    runs = open_runs(two_runs)
    with pytest.raises(Exception):  # noqa: B017 - the unchosen files are broken on purpose
        runs.table("outcomes")
    frame = runs.scan("outcomes", model="trained:net", corruption="gaussian_noise")
    assert isinstance(frame, pl.LazyFrame)
    low = frame.filter(pl.col("dv") < 0.5).collect()
    expected = [r for r in pq.read_table(new / "outcomes/trained-net/gaussian_noise.parquet")
                .to_pylist() if r["dv"] < 0.5]
    assert _rows(low.filter(pl.col("run") == "new"), ["run", "model", "corruption"]) == expected
    # the model's folder name chooses the same files
    by_folder = runs.table("outcomes", model="trained-net", corruption="gaussian_noise")
    assert by_folder.height == 2 * 40
    assert runs.table("outcomes", run="old", model="trained:net",
                      corruption=["gaussian_noise"]).height == 40


def test_a_missing_table_names_the_run_the_rule_and_the_target(two_runs):
    old, new = two_runs
    (new / "overlap" / "matrix.parquet").unlink()
    runs = open_runs(two_runs)
    with pytest.raises(VcrbenchError, match=r"run 'new' .* no overlap-matrix table "
                       r"\(overlap/matrix.parquet\); rule overlap_report makes it: run "
                       r"`snakemake --cores N overlap`.*needs `overlap:`"):
        runs.table("overlap-matrix")
    assert runs.table("overlap-matrix", run="old").height == 2
    for path in new.glob("rates/*/*.parquet"):
        path.unlink()
    with pytest.raises(VcrbenchError, match=r"run 'new' .* no rates table .*rule rates makes "
                       r"it: run `snakemake --cores N` "):
        runs.table("rates")
    with pytest.raises(VcrbenchError, match="reva-errors.*reva_report.*reva: {enabled: true}"):
        runs.table("reva-errors")
    with pytest.raises(VcrbenchError, match="no table 'sumary'; known: summary, coverage"):
        runs.table("sumary")
    with pytest.raises(VcrbenchError, match="no run newer"):
        runs.table("summary", run="newer")


def _rewrite_summary(folder, change):
    path = folder / "metrics" / "summary.parquet"
    write_table(change(pq.read_table(path)), path)


def test_a_column_one_run_lacks_is_reported_or_filled_when_asked(two_runs):
    old, new = two_runs
    _rewrite_summary(old, lambda t: t.drop_columns(["imagenet_c_mean_lo", "imagenet_c_mean_hi"]))
    runs = open_runs(two_runs)
    with pytest.raises(VcrbenchError, match=r"summary tables differ in columns: run 'new' has "
                       r"imagenet_c_mean_lo, imagenet_c_mean_hi against run 'old'.*--diagonal"):
        runs.table("summary")
    union = runs.table("summary", diagonal=True)
    assert union.columns[1:] == [*pq.read_schema(old / "metrics" / "summary.parquet").names,
                                 "imagenet_c_mean_lo", "imagenet_c_mean_hi"]
    assert union.filter(pl.col("run") == "old").get_column("imagenet_c_mean_lo").null_count() \
        == union.filter(pl.col("run") == "old").height
    assert _rows(union.filter(pl.col("run") == "new"), ["run"]) == pq.read_table(
        new / "metrics" / "summary.parquet").to_pylist()


def test_a_column_of_another_type_is_an_error_even_when_diagonal(two_runs):
    old, new = two_runs
    _rewrite_summary(new, lambda t: t.set_column(
        t.schema.get_field_index("classes"), "classes", t.column("classes").cast(pa.int32())))
    with pytest.raises(VcrbenchError, match=r"different types \(classes: Int16 in run 'old', "
                       r"Int32 in run 'new'\)"):
        open_runs(two_runs).table("summary", diagonal=True)


def test_columns_in_another_order_are_the_same_table(two_runs):
    old, new = two_runs
    _rewrite_summary(new, lambda t: t.select(t.column_names[::-1]))
    table = open_runs(two_runs).table("summary")
    assert table.columns[1:] == pq.read_schema(old / "metrics" / "summary.parquet").names
    assert _rows(table.filter(pl.col("run") == "new"), ["run"]) == [
        {k: row[k] for k in table.columns[1:]}
        for row in pq.read_table(new / "metrics" / "summary.parquet").to_pylist()]


def test_files_of_one_table_from_two_versions_are_reported(two_runs):
    old, _ = two_runs
    path = old / "rates" / "trained-net" / "gaussian_blur.parquet"
    write_table(pq.read_table(path).drop_columns(["present"]), path)
    with pytest.raises(VcrbenchError, match=r"rates tables differ in columns: run 'old', model "
                       r"'trained:net', corruption 'gaussian_blur' lacks present"):
        open_runs(two_runs).table("rates")
