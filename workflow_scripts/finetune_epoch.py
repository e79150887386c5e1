"""Rule finetune_epoch: one epoch of one fine-tuning entry, from the base model (a registry
model, or trained:<name> from the run's models folder) or the previous epoch's checkpoint (REVa
entries: with their PGD counterparts and, for targeted: auto, the non-robust corruptions of REVa
part 1)."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, read_tables, write_table  # noqa: E402
from vcrbench.models import resolve_device  # noqa: E402
from vcrbench.models.finetuned import read_checkpoint  # noqa: E402
from vcrbench.training.adversarial import counterparts_of_index  # noqa: E402
from vcrbench.training.checkpoint import save_checkpoint  # noqa: E402
from vcrbench.training.loop import train_epoch, training_log  # noqa: E402
from vcrbench.training.methods import targeted_from_groups  # noqa: E402
from vcrbench.training.spec import TrainingSpec  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "finetune_epoch") as log:
    entry = snakemake.params.entry
    targeted = (
        targeted_from_groups(read_table(snakemake.input.groups), entry["base"],
                             entry["reva"]["auto_measure"])
        if snakemake.input.groups else None
    )
    spec = TrainingSpec.from_config(entry, snakemake.params.seed, targeted)
    epoch = int(snakemake.wildcards.epoch)
    previous = read_checkpoint(snakemake.input.previous) if epoch > 1 else None
    device = resolve_device(snakemake.params.device)
    index = read_table(snakemake.input.index)
    adversarial = (counterparts_of_index(read_tables(snakemake.input.adversarial), index)
                   if snakemake.input.adversarial else None)
    log.info("method %s%s", spec.method,
             f", targeted corruptions {list(spec.reva.targeted)}" if spec.method == "reva" else "")
    start = time.perf_counter()
    # results/<run>/models, where a trained:<name> base lives (models/<entry>/train-index)
    models_dir = str(Path(snakemake.input.index).parents[1])
    checkpoint, row = train_epoch(spec, index, epoch, previous, device, log,
                                  adversarial=adversarial, models_dir=models_dir)
    log.info("epoch %d on %s in %.1f s: %s", epoch, device, time.perf_counter() - start, row)
    save_checkpoint(checkpoint, snakemake.output.checkpoint)
    write_table(training_log([row]), snakemake.output.log_row)
