"""Rule train_index: the training images of one train entry, checked against the evaluation
images (no shared file, every image labelled)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.data.datasets import build_index_from_config  # noqa: E402
from vcrbench.training.data import check_training_index  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "train_index") as log:
    table, skipped = build_index_from_config(snakemake.params.dataset)
    check_training_index(table, read_table(snakemake.input.evaluation),
                         snakemake.wildcards.trained, section="train", compare_ids=False)
    log.info("%d training images, %d unreadable skipped", table.num_rows, skipped)
    write_table(table, snakemake.output.index)
