"""Rule retraining_table: every metric before and after fine-tuning (VCR paper Table 3)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import (  # noqa: E402
    csv_text,
    read_nested_tables,
    read_table,
    write_table,
    write_text,
)
from vcrbench.vcr.retraining import retraining_markdown, retraining_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "retraining") as log:
    replicates = read_nested_tables(snakemake.params.replicates)
    table = retraining_table(
        read_table(snakemake.input.summary), [tuple(p) for p in snakemake.params.pairs], replicates
    )
    log.info("%d rows", table.num_rows)
    write_table(table, snakemake.output.table)
    write_text(csv_text(table), snakemake.output.csv)
    write_text(retraining_markdown(table), snakemake.output.markdown)
