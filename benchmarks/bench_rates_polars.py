"""Benchmark: the outcomes and per-bin rates stage (rule ``rates``) at paper scale with the
pipeline's pyarrow / numpy code against a polars implementation, and the time to compare the
summaries of 10 runs with :mod:`vcrbench.results`.

Run::

    python benchmarks/bench_rates_polars.py            # 14 corruptions × 50,000 samples × 2 models

Data (synthetic, keyed by ``--seed``): an index of 50,000 images (labels, 16-class categories
with −1 for a third of them), and per corruption and model the scored samples (image, Δv
uniform in [0, 1]) and the predictions; the clean predictions per model. Both implementations
get the same Arrow tables in memory (reading the files is pyarrow's in both) and must give
tables whose Parquet files (:func:`vcrbench.core.tables.write_table`) are the same bytes.
Times are the best of ``--repeats`` per job, summed over the 28 jobs; a job of the pipeline is
a new process, so the import of each library is timed too (a fresh interpreter, best of 3).
"""

from __future__ import annotations

import argparse
import io
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from vcrbench.core.properties import properties
from vcrbench.core.tables import write_table
from vcrbench.curves.binning import bin_index
from vcrbench.curves.tables import METRICS_SCHEMA, RATES_SCHEMA
from vcrbench.evaluation.outcomes import outcome_columns, sample_outcomes
from vcrbench.vcr.rates import rates_table
from vcrbench.vcr.summary import build_summary

CORRUPTIONS = 14


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what :mod:`platform` knows."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        return next(line.split(":", 1)[1].strip() for line in text.splitlines()
                    if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def synthetic(n: int, seed: int) -> tuple[pa.Table, list[tuple[pa.Table, pa.Table, pa.Table]]]:
    """The index, and per model × corruption (scored, predictions, clean) tables."""
    rng = np.random.default_rng(seed)
    image_ids = [f"ILSVRC2012_val_{i:08d}" for i in range(1, n + 1)]
    category = rng.integers(0, 16, n)
    category[rng.uniform(size=n) < 1 / 3] = -1
    index = pa.table({"image_id": image_ids,
                      "label": pa.array(rng.integers(0, 1000, n), pa.int16()),
                      "category16": pa.array(category, pa.int8())})
    jobs = []
    for _model in range(2):
        clean = pa.table({"image_id": image_ids,
                          "top1": pa.array(rng.integers(0, 1000, n), pa.int16()),
                          "top1_16": pa.array(rng.integers(0, 16, n), pa.int8()),
                          "p_top1": pa.array(rng.uniform(size=n), pa.float32())})
        for c in range(CORRUPTIONS):
            order = rng.permutation(n)
            scored = pa.table({"sample_id": pa.array(np.arange(n) + c * n, pa.int64()),
                               "image_id": pa.array(image_ids).take(pa.array(order)),
                               "dv": rng.uniform(size=n)})
            same = rng.uniform(size=n) < 0.6
            top1 = np.where(same, clean.column("top1").to_numpy()[order],
                            rng.integers(0, 1000, n))
            predictions = pa.table({"sample_id": scored.column("sample_id"),
                                    "top1": pa.array(top1, pa.int16()),
                                    "top1_16": pa.array(rng.integers(0, 16, n), pa.int8()),
                                    "p_top1": pa.array(rng.uniform(size=n), pa.float32())})
            jobs.append((scored, predictions, clean))
    return index, jobs


def outcomes_polars(index: pa.Table, scored: pa.Table, predictions: pa.Table,
                    clean: pa.Table, schema: pa.Schema) -> pa.Table:
    """:func:`vcrbench.evaluation.outcomes.sample_outcomes` with polars joins."""
    labels = pl.from_arrow(index.select(["image_id", "label", "category16"]))
    cleans = pl.from_arrow(clean.select(["image_id", "top1", "top1_16"])).rename(
        {"top1": "clean_top1", "top1_16": "clean_top1_16"})
    frame = (pl.from_arrow(scored.select(["sample_id", "image_id", "dv"]))
             .with_columns(pl.from_arrow(predictions.select(["top1", "top1_16"])))
             .join(labels, on="image_id", how="left", maintain_order="left")
             .join(cleans, on="image_id", how="left", maintain_order="left"))
    label, category = pl.col("label"), pl.col("category16")
    out = frame.select(
        "sample_id", "image_id", "dv",
        clean_correct=pl.when(label >= 0).then(pl.col("clean_top1") == label),
        correct=pl.when(label >= 0).then(pl.col("top1") == label),
        consistent=pl.col("top1") == pl.col("clean_top1"),
        clean_correct16=pl.when(category >= 0).then(pl.col("clean_top1_16") == category),
        correct16=pl.when(category >= 0).then(pl.col("top1_16") == category),
        consistent16=pl.col("top1_16") == pl.col("clean_top1_16"),
    )
    return out.to_arrow().cast(schema)


def rates_polars(outcomes: pa.Table, bins: int, min_count: int) -> pa.Table:
    """:func:`vcrbench.vcr.rates.rates_table` with a polars group-by. The bin of each
    sample is :func:`vcrbench.curves.binning.bin_index` and the bin edges and centres are
    NumPy's ``j / M``: polars turns a division by a constant into a multiplication by its
    inverse (3 / 40 -> 0.07500000000000001), which moves edges by an ulp."""
    m = bins
    frame = pl.from_arrow(outcomes).with_columns(
        bin=pl.Series(bin_index(outcomes.column("dv").to_numpy(), m)))
    grid = pl.DataFrame({"bin": np.arange(m), "lo": np.arange(m) / m,
                         "hi": np.arange(1, m + 1) / m, "center": (np.arange(m) + 0.5) / m})
    parts = []
    for metric, classes in properties(1000):
        column, _ = outcome_columns(metric, classes)
        counted = (frame.filter(pl.col(column).is_not_null())
                   .group_by("bin").agg(count=pl.len(), successes=pl.col(column).sum()))
        if counted.height == 0:
            continue
        every = grid.join(counted, on="bin", how="left", maintain_order="left").fill_null(0)
        parts.append(every.select(
            metric=pl.lit(metric), classes=pl.lit(classes), bin="bin", lo="lo", hi="hi",
            center="center", count="count", successes="successes",
            rate=pl.when(pl.col("count") >= min_count)
            .then(pl.col("successes") / pl.col("count")),
            present=pl.col("count") >= min_count,
        ))
    return pl.concat(parts).to_arrow().cast(RATES_SCHEMA)


def parquet_bytes(table: pa.Table) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.parquet"
        write_table(table, path)
        return path.read_bytes()


def best(fn: Callable[..., object], repeats: int, *args, **kwargs) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls ``fn(*args, **kwargs)`` (seconds), and its result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times), result


def import_time(statement: str) -> float:
    """Best of 3 fresh interpreters: seconds to run ``statement`` (an import)."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    return min(float(subprocess.run([sys.executable, "-c", code], check=True,
                                    capture_output=True, text=True).stdout) for _ in range(3))


def bench_rates(n: int, seed: int, repeats: int) -> None:
    index, jobs = synthetic(n, seed)
    totals = {"outcomes pyarrow/numpy": 0.0, "outcomes polars": 0.0,
              "rates pyarrow/numpy": 0.0, "rates polars": 0.0}
    identical = True
    for scored, predictions, clean in jobs:
        t, outcomes = best(sample_outcomes, repeats, index, scored, predictions, clean)
        totals["outcomes pyarrow/numpy"] += t
        t, fast = best(outcomes_polars, repeats, index, scored, predictions, clean,
                       outcomes.schema)
        totals["outcomes polars"] += t
        t, rates = best(rates_table, repeats, outcomes, bins=40, min_count=20)
        totals["rates pyarrow/numpy"] += t
        t, rates_fast = best(rates_polars, repeats, outcomes, 40, 20)
        totals["rates polars"] += t
        identical &= parquet_bytes(outcomes) == parquet_bytes(fast)
        identical &= parquet_bytes(rates) == parquet_bytes(rates_fast)
    print(f"rates stage, {len(jobs)} jobs of {n:,} samples (M = 40, L = 20), best of {repeats}:")
    for name, seconds in totals.items():
        print(f"  {name:<24} {seconds:7.2f} s in all, {1000 * seconds / len(jobs):6.1f} ms a job")
    print(f"  Parquet of both the same bytes in every job: {identical}")
    print("  import in a fresh interpreter: "
          f"pyarrow + numpy {import_time('import pyarrow, numpy'):.2f} s, "
          f"+ polars {import_time('import pyarrow, numpy, polars'):.2f} s")


def bench_summaries(runs: int, seed: int) -> None:
    """Open the summaries of ``runs`` runs (14 corruptions × 2 models × 4 properties each) and
    print R side by side: seconds after import, best of 5."""
    from vcrbench.results import open_runs
    from vcrbench.results.views import markdown, side_by_side

    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as folder:
        for k in range(runs):
            rows = [{"model": model, "corruption": f"corruption_{c}", "metric": metric,
                     "classes": classes, "R": r, "R_lo": r - 0.05, "R_hi": r + 0.05,
                     "coverage": 0.9, "n_samples": 50_000, "bins_present": 36,
                     "note": None}
                    for model in ("efficientnet-lite0", "torchvision:resnet50")
                    for c in range(CORRUPTIONS)
                    for metric, classes in properties(1000)
                    for r in [float(rng.uniform(0.2, 0.8))]]
            summary = build_summary(pa.Table.from_pylist(rows, schema=METRICS_SCHEMA))
            write_table(summary, Path(folder) / f"run-{k}" / "metrics" / "summary.parquet")
        paths = sorted(Path(folder).glob("run-*"))

        def compare() -> str:
            table = open_runs(paths).table("summary")
            view = side_by_side(table, by="run", values=["R"],
                                keys=("model", "corruption", "metric", "classes"))
            text = markdown(view)
            io.StringIO().write(text)
            return text

        first, _ = best(compare, 1)
        seconds, text = best(compare, 5)
    print(f"summaries of {runs} runs opened and R of every run side by side as Markdown "
          f"({len(text.splitlines()) - 2} rows × {runs} runs): {seconds:.3f} s after import "
          f"(best of 5; the first call {first:.3f} s); import of vcrbench.results "
          f"{import_time('import vcrbench.results, vcrbench.results.views'):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50_000, help="samples per corruption")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}; Python {platform.python_version()}, polars {pl.__version__}, "
          f"pyarrow {pa.__version__}, numpy {np.__version__}")
    bench_rates(args.n, args.seed, args.repeats)
    bench_summaries(args.runs, args.seed)


if __name__ == "__main__":
    main()
