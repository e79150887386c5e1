"""Rules predict_clean and predict_shard: one model's decisions on the clean images (input
``index``) or on one scored shard (input ``scored``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.jobs import job  # noqa: E402
from vcrbench.predictions import predict_clean, predict_scored  # noqa: E402
from vcrbench.tables import read_table, write_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, snakemake.rule) as log:
    options = snakemake.params.inference
    if "scored" in snakemake.input.keys():
        stage, source = predict_scored, read_table(snakemake.input.scored)
    else:
        stage, source = predict_clean, read_table(snakemake.input.index)
    table = stage(
        source,
        snakemake.params.model,
        device=snakemake.params.device,
        batch_size=options["batch_size"],
        precision=options["precision"],
        models_dir=snakemake.params.models_dir,
    )
    log.info("%s: %d images", snakemake.params.model, table.num_rows)
    write_table(table, snakemake.output.predictions)
