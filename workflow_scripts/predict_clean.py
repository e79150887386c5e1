"""Rule predict_clean: one model's decisions on every clean image of the index."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.data.prepared import PreparedImages  # noqa: E402
from vcrbench.evaluation.predictions import Inference, predict_clean  # noqa: E402

with job(snakemake.log[0], snakemake.threads, snakemake.rule) as log:
    params = snakemake.params
    inference = Inference.from_config(params.model, params.device, params.inference,
                                      params.models_dir)
    index = read_table(snakemake.input.index)
    table = predict_clean(index, inference, PreparedImages(snakemake.input.prepared, index))
    log.info("%s: %d images", params.model, table.num_rows)
    write_table(table, snakemake.output.predictions)
