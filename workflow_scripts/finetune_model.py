"""Rule finetune_model: the fine-tuned model (last epoch, without optimiser state) and the
training log of every epoch."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_tables, write_table  # noqa: E402
from vcrbench.models.finetuned import read_checkpoint  # noqa: E402
from vcrbench.training.checkpoint import final_checkpoint, save_checkpoint  # noqa: E402
from vcrbench.training.loop import training_log  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "finetune_model") as log:
    save_checkpoint(final_checkpoint(read_checkpoint(snakemake.input.last)),
                    snakemake.output.checkpoint)
    rows = read_tables(list(snakemake.input.log_rows)).to_pylist()
    write_table(training_log(rows), snakemake.output.training_log)
    log.info("%d epochs: %s", len(rows), rows[-1])
