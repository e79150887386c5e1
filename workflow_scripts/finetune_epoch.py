"""Rule finetune_epoch: one epoch of one fine-tuning entry, from the base model or the
previous epoch's checkpoint."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.models import resolve_device  # noqa: E402
from vcrbench.models.finetuned import read_checkpoint  # noqa: E402
from vcrbench.training.checkpoint import save_checkpoint  # noqa: E402
from vcrbench.training.loop import train_epoch, training_log  # noqa: E402
from vcrbench.training.spec import TrainingSpec  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "finetune_epoch") as log:
    spec = TrainingSpec.from_config(snakemake.params.entry, snakemake.params.seed)
    epoch = int(snakemake.wildcards.epoch)
    previous = read_checkpoint(snakemake.input.previous) if epoch > 1 else None
    device = resolve_device(snakemake.params.device)
    start = time.perf_counter()
    checkpoint, row = train_epoch(
        spec, read_table(snakemake.input.index), epoch, previous, device, log
    )
    log.info("epoch %d on %s in %.1f s: %s", epoch, device, time.perf_counter() - start, row)
    save_checkpoint(checkpoint, snakemake.output.checkpoint)
    write_table(training_log([row]), snakemake.output.log_row)
