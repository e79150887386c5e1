"""Rule index: build data/index.parquet from the configured dataset."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.datasets import build_index  # noqa: E402
from vcrbench.jobs import job  # noqa: E402
from vcrbench.tables import write_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "index") as log:
    dataset = snakemake.params.dataset
    table, skipped = build_index(
        dataset["source"],
        dataset["path"],
        labels=dataset["labels"],
        limit=dataset["limit"],
        skip_unreadable=dataset["skip_unreadable"],
        categories16_only=dataset["categories16_only"],
    )
    log.info("%d images indexed, %d unreadable skipped", table.num_rows, skipped)
    write_table(table, snakemake.output.index)
