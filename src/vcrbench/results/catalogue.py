"""The tables of a results folder ``results/<run>/`` that :mod:`vcrbench.results` opens: where
each lies, which rule makes it, and the key columns that its path carries.

A table is one file of the run (the summary, the overlap and REVa tables), one file per model ×
corruption (``rates/<m>/<c>.parquet``) or one file per corruption × shard (or model ×
corruption × shard). Path parts become columns: ``model`` (the model's name as the run's
metrics tables spell it, else its folder) and ``corruption``, where the file itself has no
such column. Schemas: docs/architecture.md, "Tables".
"""

from __future__ import annotations

from dataclasses import dataclass

from vcrbench.errors import VcrbenchError


@dataclass(frozen=True)
class TableSpec:
    """One table of a run.

    Attributes:
        name: what ``--table`` and :meth:`Runs.table` call it.
        pattern: the file(s) under the run folder; ``{model}``, ``{corruption}`` and
            ``{shard}`` are path parts that vary.
        rule: the Snakemake rule that writes it.
        target: the Snakemake target rule that makes it (``all``: the default).
        keys: the columns that identify a row (for ``--pivot`` and sorting).
        show: the columns of the Markdown view (all where empty).
        drop: columns left out (stored pixels: not results).
        lazy: scanned, not read (per-sample tables, large at paper scale).
        exclude: file-name suffixes under the pattern that are other tables.
        csv: a CSV file (the coverage table has no Parquet), read with its writer's schema.
        needs: the config section without which a run has no such table.
    """

    name: str
    pattern: str
    rule: str
    target: str
    keys: tuple[str, ...]
    show: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    lazy: bool = False
    exclude: tuple[str, ...] = ()
    csv: bool = False
    needs: str | None = None

    @property
    def parts(self) -> tuple[str, ...]:
        """The key columns that the path carries (model, corruption, shard)."""
        return tuple(p for p in ("model", "corruption", "shard") if "{" + p + "}" in self.pattern)


_ALL = "all"
_SUMMARY_KEYS = ("model", "corruption", "metric", "classes")
_PROPERTY = ("metric", "classes")

TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in [
        TableSpec(
            "summary", "metrics/summary.parquet", "summary", _ALL, _SUMMARY_KEYS,
            show=(*_SUMMARY_KEYS, "R", "HMRI", "MRSI", "imagenet_c_mean", "coverage",
                  "n_samples", "resampled", "note"),
        ),
        TableSpec(
            "coverage", "metrics/coverage.csv", "coverage_table", _ALL, ("corruption",),
            csv=True,
        ),
        TableSpec(
            "metrics", "metrics/{model}/{corruption}.parquet", "curves", _ALL, _SUMMARY_KEYS,
            exclude=("-imagenet-c", "-human"),
            show=(*_SUMMARY_KEYS, "R", "coverage", "n_samples", "dv_min", "dv_max", "note"),
        ),
        TableSpec(
            "rates", "rates/{model}/{corruption}.parquet", "rates", _ALL,
            ("model", "corruption", *_PROPERTY, "bin"),
        ),
        TableSpec(
            "curves", "curves/{model}/{corruption}.parquet", "curves", _ALL,
            ("model", "corruption", *_PROPERTY, "v"), exclude=("-replicates",),
        ),
        TableSpec(
            "outcomes", "outcomes/{model}/{corruption}.parquet", "rates", _ALL,
            ("model", "corruption", "sample_id"), lazy=True,
        ),
        TableSpec(
            "scores", "scored/{corruption}/shard-{shard}.parquet", "score", _ALL,
            ("corruption", "sample_id"), drop=("image",), lazy=True,
        ),
        TableSpec(
            "predictions", "predictions/{model}/{corruption}/shard-{shard}.parquet",
            "predict_shard", _ALL, ("model", "corruption", "sample_id"), lazy=True,
        ),
        TableSpec(
            "retraining", "metrics/retraining.parquet", "retraining_table", "retraining",
            ("finetuned", "corruption", *_PROPERTY, "quantity"), needs="`finetune:`",
        ),
        *[
            TableSpec(
                f"overlap-{name}", f"overlap/{name}.parquet", "overlap_report", "overlap", keys,
                needs="`overlap:`",
            )
            for name, keys in [
                ("robustness", ("role", "corruption", "score")),
                ("matrix", ("score", "c1", "c2")),
                ("benchmarks", ("score", "threshold")),
                ("ce", ("model", "corruption")),
            ]
        ],
        *[
            TableSpec(
                f"reva-{name.replace('/', '-')}", f"reva/{name}.parquet", rule, "reva", keys,
                needs="`reva: {enabled: true}`"
                + (" and `reva.comparison`" if name.startswith("comparison") else ""),
            )
            for name, rule, keys in [
                ("resilience", "reva_weak_set", ("image_id",)),
                ("ranking", "reva_weak_set", ("image_id",)),
                ("errors", "reva_report", ("model", "set", "kind", "perturbation")),
                ("relative-errors", "reva_report", ("model", "kind", "perturbation", "measure")),
                ("groups", "reva_report", ("model", "kind", "perturbation", "measure", "rule")),
                ("r-weak-vs-all", "reva_report", ("model", "corruption", *_PROPERTY)),
                ("comparison/errors", "reva_comparison",
                 ("method", "kind", "perturbation", "crafted_on")),
                ("comparison/tests", "reva_comparison", ("method", "baseline", "measure")),
                ("comparison/vcr", "reva_comparison", ("method", "corruption", *_PROPERTY)),
            ]
        ],
    ]
}


def table_spec(name: str) -> TableSpec:
    """The table called ``name``; a :class:`~vcrbench.errors.VcrbenchError` listing the known
    ones otherwise."""
    if name not in TABLES:
        raise VcrbenchError(f"no table {name!r}; known: {', '.join(TABLES)}")
    return TABLES[name]
