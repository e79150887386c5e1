"""Rule predict_shard: one model's decisions on one scored shard."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.jobs import job  # noqa: E402
from vcrbench.predictions import predict_scored  # noqa: E402
from vcrbench.tables import read_table, write_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "predict_shard") as log:
    options = snakemake.params.inference
    table = predict_scored(
        read_table(snakemake.input.scored),
        snakemake.params.model,
        device=snakemake.params.device,
        batch_size=options["batch_size"],
        precision=options["precision"],
    )
    log.info("%s: %d corrupted images", snakemake.params.model, table.num_rows)
    write_table(table, snakemake.output.predictions)
