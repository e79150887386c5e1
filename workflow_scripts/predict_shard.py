"""Rule predict_shard (and imagenet_c_predict_shard): one model's decisions on the corrupted
images of one scored shard (stored, or made again from the samples shard)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.data.prepared import PreparedImages  # noqa: E402
from vcrbench.evaluation.predictions import Inference, predict_scored  # noqa: E402
from vcrbench.models import resolve_device  # noqa: E402

with job(snakemake.log[0], snakemake.threads, snakemake.rule) as log:
    params, inputs = snakemake.params, snakemake.input
    inference = Inference.from_config(params.model, params.device, params.inference,
                                      params.models_dir)
    scored = read_table(inputs.scored)
    regenerate = "image" not in scored.column_names
    table = predict_scored(
        scored,
        inference,
        samples=read_table(inputs.samples) if regenerate else None,
        clean=PreparedImages(inputs.prepared, read_table(inputs.index)) if regenerate else None,
        corruption_device=str(resolve_device(params.device)),
        batch_size=params.corruption_batch,
    )
    log.info("%s: %d images (%s)", params.model, table.num_rows,
             "made again and checked" if regenerate else "stored pixels")
    write_table(table, snakemake.output.predictions)
