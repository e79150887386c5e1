"""Rule compare_human: HMRI and MRSI of one model against the human curve of one corruption."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.human.indices import human_relative  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "compare_human") as log:
    table = human_relative(
        read_table(snakemake.input.curves),
        read_table(snakemake.input.replicates),
        read_table(snakemake.input.human),
        read_table(snakemake.input.human_replicates),
        model=snakemake.params.model,
        corruption=snakemake.wildcards.corruption,
        source=snakemake.params.source,
        model_metrics=read_table(snakemake.input.metrics),
        human_metrics=read_table(snakemake.input.human_metrics),
        human_range=snakemake.params.human_range,
    )
    for row in table.to_pylist():
        log.info("%s: HMRI=%s MRSI=%s (%s)%s", row["metric"], row["HMRI"], row["MRSI"],
                 row["human_source"], f"; {row['note']}" if row["note"] else "")
    write_table(table, snakemake.output.metrics)
