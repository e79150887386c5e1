"""Rule predict_shard (and imagenet_c_predict_shard): one model's decisions on the corrupted
images of one scored shard."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.evaluation.predictions import Inference, predict_scored  # noqa: E402

with job(snakemake.log[0], snakemake.threads, snakemake.rule) as log:
    params = snakemake.params
    inference = Inference.from_config(params.model, params.device, params.inference,
                                      params.models_dir)
    table = predict_scored(read_table(snakemake.input.scored), inference)
    log.info("%s: %d images", params.model, table.num_rows)
    write_table(table, snakemake.output.predictions)
