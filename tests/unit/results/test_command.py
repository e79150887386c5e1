"""``vcrbench results`` end to end on results folders written in tmp_path: formats, --where,
--pivot, --columns, --output, and errors as exit status 2 with a message."""

from __future__ import annotations

import io
import json

import polars as pl
import pyarrow.parquet as pq
import pytest

from vcrbench.cli import main
from vcrbench.errors import VcrbenchError
from vcrbench.results import open_runs
from vcrbench.results.views import side_by_side


def _run(capsys, *args: str) -> str:
    assert main(["results", *args]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_markdown_shows_every_run_with_intervals(two_runs, capsys):
    old, new = two_runs
    out = _run(capsys, str(old), str(new), "--where", "metric=accuracy")
    lines = out.splitlines()
    assert lines[0].startswith("| run | model | corruption | metric | classes | "
                               "R [95 % interval] |")
    summary = open_runs(two_runs).table("summary").filter(pl.col("metric") == "accuracy")
    assert len(lines) == 2 + summary.height
    first = summary.row(0, named=True)
    assert (f"| old | {first['model']} | {first['corruption']} | accuracy | 1000 | "
            f"{first['R']:.3f} [{first['R_lo']:.3f}, {first['R_hi']:.3f}] |") in out
    notes = _run(capsys, str(old), "--where", "classes=16", "--columns", "model,note")
    assert "| a \\| note |" in notes, "a | in a cell is escaped"


def test_csv_and_json_hold_the_filtered_table(two_runs, capsys):
    old, new = two_runs
    where = ["--table", "rates", "--where", "corruption=gaussian_noise", "--where", "count>=3"]
    expected = (open_runs(two_runs).table("rates", corruption="gaussian_noise")
                .filter(pl.col("count") >= 3))
    assert expected.height > 0
    csv = pl.read_csv(io.StringIO(_run(capsys, str(old), str(new), *where, "--format", "csv")),
                      schema=expected.schema)
    assert csv.equals(expected)
    rows = json.loads(_run(capsys, str(old), str(new), *where, "--format", "json"))
    assert rows == expected.to_dicts()


def test_parquet_goes_to_a_file_as_the_pipeline_writes_it(two_runs, capsys, tmp_path):
    target = tmp_path / "out" / "summary.parquet"
    _run(capsys, *map(str, two_runs), "--format", "parquet", "--output", str(target))
    assert pl.read_parquet(target).equals(open_runs(two_runs).table("summary"))
    assert pq.ParquetFile(target).metadata.row_group(0).column(0).compression == "ZSTD"
    assert main(["results", str(two_runs[0]), "--format", "parquet"]) == 2
    assert "--format parquet needs --output FILE" in capsys.readouterr().err


def test_pivot_puts_the_runs_side_by_side(two_runs, capsys, tmp_path):
    old, new = two_runs
    out = _run(capsys, f"before={old}", f"after={new}", "--where", "metric=consistency",
               "--where", "classes=1000", "--pivot", "run")
    summary = open_runs(two_runs).table("summary")
    lines = out.splitlines()
    assert lines[0] == ("| model | corruption | metric | classes | before: R [95 % interval] | "
                        "after: R [95 % interval] |")
    row = {r["run"]: r for r in summary.filter(
        (pl.col("model") == "trained:net") & (pl.col("corruption") == "gaussian_blur")
        & (pl.col("metric") == "consistency") & (pl.col("classes") == 1000)).to_dicts()}
    cell = "{R:.3f} [{R_lo:.3f}, {R_hi:.3f}]"
    assert (f"| trained:net | gaussian_blur | consistency | 1000 | {cell.format(**row['old'])} "
            f"| {cell.format(**row['new'])} |") in lines
    assert len(lines) == 2 + 4
    csv = _run(capsys, str(old), str(new), "--table", "coverage", "--pivot", "run",
               "--values", "coverage", "--format", "csv")
    assert csv.splitlines()[0] == "corruption,old: coverage,new: coverage"
    assert main(["results", str(old), "--pivot", "run", "--values", "nope"]) == 2
    assert "--pivot/--values: no column 'nope'" in capsys.readouterr().err


def test_pivot_refuses_rows_that_its_keys_do_not_tell_apart():
    frame = pl.DataFrame({"run": ["a", "a", "b"], "model": ["m", "m", "m"], "R": [1.0, 2.0, 3.0]})
    with pytest.raises(VcrbenchError, match="'a' has several rows per model; narrow"):
        side_by_side(frame, by="run", values=["R"], keys=["model"])
    assert side_by_side(frame[1:], by="run", values=["R"], keys=["model"]).to_dicts() == [
        {"model": "m", "a: R": 2.0, "b: R": 3.0}]


def test_a_scan_filter_on_corruption_reads_only_those_files(two_runs, capsys):
    old, new = two_runs
    for path in old.glob("outcomes/*/gaussian_blur.parquet"):
        path.write_bytes(b"broken")
    out = _run(capsys, str(old), "--table", "outcomes", "--where", "corruption=gaussian_noise",
               "--format", "csv")
    assert len(out.splitlines()) == 1 + 2 * 40


@pytest.mark.parametrize(("args", "message"), [
    (["--table", "overlap-ce"], "run 'old' (.*) has no overlap-ce table"),
    (["--table", "nope"], "--table 'nope': known tables: summary"),
    (["--where", "R<<1"], "'<1' is not a value of R"),
    (["--columns", "R,nope"], "--columns: no column nope"),
])
def test_errors_are_messages_with_status_2(two_runs, capsys, args, message):
    import re

    assert main(["results", str(two_runs[0]), *args]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_two_folders_of_one_name_need_names(two_runs, capsys, tmp_path):
    from helpers.results_folder import make_run

    twin = make_run(tmp_path / "copy" / "old")
    assert main(["results", str(two_runs[0]), str(twin)]) == 2
    assert "two runs are called 'old'" in capsys.readouterr().err
    assert main(["results", f"a={two_runs[0]}", str(twin)]) == 2
    assert "name every run (NAME=PATH) or none" in capsys.readouterr().err
    out = _run(capsys, f"a={two_runs[0]}", f"b={twin}", "--columns", "R", "--format", "csv")
    assert out.splitlines()[0] == "run,R,R_lo,R_hi", "the run column is always kept"
    assert {line.split(",")[0] for line in out.splitlines()[1:]} == {"a", "b"}
