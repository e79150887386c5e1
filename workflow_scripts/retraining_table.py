"""Rule retraining_table: every metric before and after fine-tuning (VCR paper Table 3)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.jobs import job  # noqa: E402
from vcrbench.retraining import retraining_markdown, retraining_table  # noqa: E402
from vcrbench.summary import summary_csv  # noqa: E402
from vcrbench.tables import read_table, write_table, write_text  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "retraining") as log:
    keys = [tuple(key) for key in snakemake.params.replicate_keys]  # the order of input.replicates
    replicates = {
        key: read_table(path) for key, path in zip(keys, snakemake.input.replicates, strict=True)
    }
    table = retraining_table(
        read_table(snakemake.input.summary), [tuple(p) for p in snakemake.params.pairs], replicates
    )
    log.info("%d rows", table.num_rows)
    write_table(table, snakemake.output.table)
    write_text(summary_csv(table), snakemake.output.csv)
    write_text(retraining_markdown(table), snakemake.output.markdown)
