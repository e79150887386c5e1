"""Rule index: build data/index.parquet from the configured dataset."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import write_table  # noqa: E402
from vcrbench.data.datasets import build_index_from_config  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "index") as log:
    table, skipped = build_index_from_config(snakemake.params.dataset)
    log.info("%d images indexed, %d unreadable skipped", table.num_rows, skipped)
    write_table(table, snakemake.output.index)
