"""A small results folder (``results/<run>/``) written by the pipeline's own table functions
and writers: two models (one whose folder differs from its name) × two corruptions, sharded
scores and predictions, rates, curves, metrics, the summary, the coverage CSV and two overlap
tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from vcrbench.core.tables import csv_text, write_table, write_text
from vcrbench.curves.tables import CURVES_SCHEMA, METRICS_SCHEMA
from vcrbench.evaluation.outcomes import sample_outcomes
from vcrbench.evaluation.scoring import SCORED_SCHEMA, SCORED_SCHEMA_NO_PIXELS
from vcrbench.overlap.report import BENCHMARK_SCHEMA
from vcrbench.vcr.coverage import coverage_table
from vcrbench.vcr.rates import rates_table
from vcrbench.vcr.summary import build_summary

#: model folder -> model name
MODELS = {"efficientnet-lite0": "efficientnet-lite0", "trained-net": "trained:net"}
CORRUPTIONS = ("gaussian_noise", "gaussian_blur")
N_IMAGES, N_SAMPLES, SHARDS = 6, 40, 2


def make_run(folder: Path, seed: int = 0, pixels: bool = False) -> Path:
    """Write a results folder at ``folder`` (values drawn from ``seed``); ``pixels``: scored
    shards with the ``image`` column."""
    rng = np.random.default_rng(seed)
    image_ids = [f"img{i}" for i in range(N_IMAGES)]
    index = pa.table({"image_id": image_ids,
                      "label": pa.array(rng.integers(0, 5, N_IMAGES), pa.int16()),
                      "category16": pa.array(rng.integers(-1, 3, N_IMAGES), pa.int8())})
    metrics_rows = []
    for c_number, corruption in enumerate(CORRUPTIONS):
        ids = np.arange(N_SAMPLES) + 1000 * c_number
        scored = pa.table({
            "sample_id": pa.array(ids, pa.int64()),
            "image_id": [image_ids[i % N_IMAGES] for i in range(N_SAMPLES)],
            "vif": rng.uniform(0, 1, N_SAMPLES),
            "dv": rng.uniform(0, 1, N_SAMPLES),
            "checksum": [f"{i:032x}" for i in ids],
            **({"image": [bytes([i % 256]) * 3 for i in ids]} if pixels else {}),
        }, schema=SCORED_SCHEMA if pixels else SCORED_SCHEMA_NO_PIXELS)
        per_shard = N_SAMPLES // SHARDS
        for k in range(SHARDS):
            write_table(scored.slice(k * per_shard, per_shard),
                        folder / "scored" / corruption / f"shard-{k}.parquet")
        for slug, name in MODELS.items():
            predictions = pa.table({
                "sample_id": pa.array(ids, pa.int64()),
                "top1": pa.array(rng.integers(0, 5, N_SAMPLES), pa.int16()),
                "top1_16": pa.array(rng.integers(0, 3, N_SAMPLES), pa.int8()),
                "p_top1": pa.array(rng.uniform(0, 1, N_SAMPLES), pa.float32()),
            })
            for k in range(SHARDS):
                write_table(predictions.slice(k * per_shard, per_shard),
                            folder / "predictions" / slug / corruption / f"shard-{k}.parquet")
            clean = pa.table({"image_id": image_ids,
                              "top1": pa.array(rng.integers(0, 5, N_IMAGES), pa.int16()),
                              "top1_16": pa.array(rng.integers(0, 3, N_IMAGES), pa.int8())})
            outcomes = sample_outcomes(index, scored.drop_columns(
                [c for c in ("vif", "checksum", "image") if c in scored.column_names]),
                predictions, clean)
            write_table(outcomes, folder / "outcomes" / slug / f"{corruption}.parquet")
            write_table(rates_table(outcomes, bins=8, min_count=2),
                        folder / "rates" / slug / f"{corruption}.parquet")
            grid = np.linspace(0, 1, 11)
            curve = pa.table({"metric": ["consistency"] * 11, "classes": [1000] * 11, "v": grid,
                              "s": 1 - grid, "lo83": 0.9 - grid, "hi83": 1.1 - grid,
                              "lo95": 0.8 - grid, "hi95": 1.2 - grid}, schema=CURVES_SCHEMA)
            write_table(curve, folder / "curves" / slug / f"{corruption}.parquet")
            write_table(curve.slice(0, 2), folder / "curves" / slug
                        / f"{corruption}-replicates.parquet")
            r = float(rng.uniform(0.3, 0.7))
            rows = [{"model": name, "corruption": corruption, "metric": metric,
                     "classes": classes, "R": r, "R_lo": r - 0.1, "R_hi": r + 0.1,
                     "anchor": None, "right_anchor": None, "coverage": 0.75,
                     "n_samples": N_SAMPLES, "bins_present": 6, "dv_min": 0.01, "dv_max": 0.99,
                     "lam": 0.5, "resampled": "images (6)",
                     "note": "a | note" if classes == 16 else None}
                    for metric, classes in (("accuracy", 1000), ("consistency", 1000),
                                            ("consistency", 16))]
            metrics = pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)
            write_table(metrics, folder / "metrics" / slug / f"{corruption}.parquet")
            metrics_rows += rows
    summary = build_summary(pa.Table.from_pylist(metrics_rows, schema=METRICS_SCHEMA))
    write_table(summary, folder / "metrics" / "summary.parquet")
    write_text(csv_text(coverage_table(summary, list(CORRUPTIONS))),
               folder / "metrics" / "coverage.csv")
    write_table(pa.table({"score": ["vcr", "vcr"], "c1": list(CORRUPTIONS),
                          "c2": list(CORRUPTIONS[::-1]), "O": [0.2, 0.3], "O_lo": [0.1, 0.2],
                          "O_hi": [0.3, None]}),
                folder / "overlap" / "matrix.parquet")
    write_table(pa.Table.from_pylist(
        [{"score": "vcr", "threshold": 0.5, "corruptions": list(CORRUPTIONS), "size": 2,
          "mean_overlap": 0.25, "balance_range": 0.1, "balance_std": 0.05, "excluded": []}],
        schema=BENCHMARK_SCHEMA), folder / "overlap" / "benchmarks.parquet")
    return folder
