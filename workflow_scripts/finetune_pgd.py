"""Rules finetune_pgd and finetune_pgd_recraft: the PGD counterparts of one shard of a REVa
entry's training images, crafted on the base model (or, recrafting, on the previous epoch's)."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.models import load_model, resolve_device  # noqa: E402
from vcrbench.training.adversarial import counterpart_table, shard_rows  # noqa: E402
from vcrbench.training.spec import PgdSettings  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "finetune_pgd") as log:
    params = snakemake.params
    device = resolve_device(params.device)
    crafter = f"finetuned:{snakemake.input.model}" if "model" in snakemake.input.keys() else (
        params.base)
    rows = shard_rows(read_table(snakemake.input.index), int(snakemake.wildcards.pgdshard),
                      params.pgd["shard_size"])
    # results/<run>/models, where a trained:<name> base lives (models/<entry>/train-index)
    model = load_model(crafter, device, models_dir=str(Path(snakemake.input.index).parents[1]))
    start = time.perf_counter()
    table = counterpart_table(rows, model, PgdSettings.from_config(params.pgd, params.regime),
                              seed=params.seed, device=device)
    log.info("%d PGD counterparts on %s (%s) in %.1f s, max |delta| %s grey levels",
             table.num_rows, crafter, device, time.perf_counter() - start,
             max(table.column("linf").to_pylist(), default=0))
    write_table(table, snakemake.output.shard)
