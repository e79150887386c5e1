"""Rule human_curves: human rates, curves with bootstrap bands, and R of one human data set."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.human.curves import human_tables  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "human_curves") as log:
    entry = snakemake.params.entry
    tables = human_tables(
        entry["format"],
        entry["path"],
        read_table(snakemake.input.stimuli) if snakemake.input.stimuli else None,
        corruption=snakemake.wildcards.corruption,
        source=snakemake.params.source,
        bins=snakemake.params.binning["bins"],
        min_count=snakemake.params.binning["min_count"],
        n_boot=snakemake.params.bootstrap["replicates"],
        seed=snakemake.params.seed,
        min_coverage=snakemake.params.binning["min_coverage"],
        min_units=snakemake.params.bootstrap["min_units"],
        right_anchor=snakemake.params.binning["right_anchor"],
    )
    for row in tables["metrics"].to_pylist():
        log.info("human %s: R=%s [%s, %s] on Δv [%s, %s] (resampled: %s)%s", row["metric"],
                 row["R"], row["R_lo"], row["R_hi"], row["dv_min"], row["dv_max"],
                 row["resampled"], f"; {row['note']}" if row["note"] else "")
    for name, table in tables.items():
        write_table(table, snakemake.output[name])
