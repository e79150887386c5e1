"""Rule train_pgd: the PGD counterparts of one shard of a REVa entry's training images, crafted
on its standard model (a model trained from scratch in this run)."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.data.prepared import PreparedImages  # noqa: E402
from vcrbench.models import load_model, resolve_device  # noqa: E402
from vcrbench.training.adversarial import counterparts_of_images, shard_rows  # noqa: E402
from vcrbench.training.spec import PgdSettings  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "train_pgd") as log:
    inputs, params = snakemake.input, snakemake.params
    device = resolve_device(params.device)
    index = read_table(inputs.index)
    rows = shard_rows(index, int(snakemake.wildcards.pgdshard), params.pgd["shard_size"])
    ids = rows.column("image_id").to_pylist()
    clean = PreparedImages(inputs.prepared, index).images(ids)
    start = time.perf_counter()
    table = counterparts_of_images(
        ids, rows.column("label").to_numpy(), clean,
        load_model(f"trained:{Path(inputs.crafter).resolve()}", device),
        PgdSettings.from_config(params.pgd, "cifar"), seed=params.seed, batch_size=256,
        device=device)
    log.info("%d PGD counterparts on %s (%s) in %.1f s, max |delta| %s grey levels",
             table.num_rows, inputs.crafter, device, time.perf_counter() - start,
             max(table.column("linf").to_pylist(), default=0))
    write_table(table, snakemake.output.shard)
