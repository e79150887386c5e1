"""Rule predict_clean: one model's decisions on the clean images."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.jobs import job  # noqa: E402
from vcrbench.predictions import predict_clean  # noqa: E402
from vcrbench.tables import read_table, write_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "predict_clean") as log:
    options = snakemake.params.inference
    table = predict_clean(
        read_table(snakemake.input.index),
        snakemake.params.model,
        device=snakemake.params.device,
        batch_size=options["batch_size"],
        precision=options["precision"],
    )
    log.info("%s: %d clean images", snakemake.params.model, table.num_rows)
    write_table(table, snakemake.output.predictions)
