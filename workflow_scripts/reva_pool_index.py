"""Rule reva_pool_index: the REVa pool from reva.train (labelled, and disjoint from the
evaluation images unless reva.disjoint is false)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.data.datasets import build_index_from_config  # noqa: E402
from vcrbench.reva.config import check_pool_index  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "reva_pool_index") as log:
    table, skipped = build_index_from_config(snakemake.params.dataset)
    check_pool_index(table, read_table(snakemake.input.evaluation),
                     disjoint=snakemake.params.disjoint)
    log.info("%d pool images, %d unreadable skipped", table.num_rows, skipped)
    write_table(table, snakemake.output.index)
