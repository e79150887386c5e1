"""Rule reva_pool_from_train: the REVa pool as the training images of the train entry
reva.from_train (the first reva.pool_per_class of each class), their ids made distinct from the
evaluation ids, labelled and (unless reva.disjoint is false) sharing no file with the
evaluation images."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.reva.config import (  # noqa: E402
    check_pool_index,
    distinct_pool_ids,
    first_per_class,
)

with job(snakemake.log[0], snakemake.threads, "reva_pool_from_train") as log:
    evaluation = read_table(snakemake.input.evaluation)
    train = read_table(snakemake.input.train)
    keep = first_per_class(train.column("label").to_pylist(), snakemake.params.per_class)
    table = distinct_pool_ids(train.take(keep), evaluation)
    check_pool_index(table, evaluation, disjoint=snakemake.params.disjoint)
    log.info("%d pool images of the %d in %s (reva.pool_per_class %s)", table.num_rows,
             train.num_rows, snakemake.input.train, snakemake.params.per_class)
    write_table(table, snakemake.output.index)
