"""Rule finetune_index: the training images of one fine-tuning entry, checked against the
evaluation images (no shared image, every image labelled; native-size class folders, whose ids
repeat across splits, by file only)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.data.datasets import NATIVE, build_index_from_config, index_size  # noqa: E402
from vcrbench.training.data import check_training_index  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "finetune_index") as log:
    table, skipped = build_index_from_config(snakemake.params.dataset)
    check_training_index(table, read_table(snakemake.input.evaluation), snakemake.wildcards.name,
                         compare_ids=index_size(table) != NATIVE)
    log.info("%d training images, %d unreadable skipped", table.num_rows, skipped)
    write_table(table, snakemake.output.index)
