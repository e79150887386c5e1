"""Rule predict_shard (and its uses for the ImageNet-C, REVa and attack shards): one model's
decisions on the corrupted images of the scored shards of one job (one corruption, or one
shard), from their stored pixels or made again from the samples shards; the model is loaded
once."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.files import as_paths  # noqa: E402
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.data.prepared import PreparedImages  # noqa: E402
from vcrbench.evaluation.predictions import Inference, predict_scored  # noqa: E402
from vcrbench.models import resolve_device  # noqa: E402

with job(snakemake.log[0], snakemake.threads, snakemake.rule) as log:
    params, inputs = snakemake.params, snakemake.input
    inference = Inference.from_config(params.model, params.device, params.inference,
                                      params.models_dir)
    scored_files = as_paths(inputs.scored)
    samples_files = as_paths(inputs.samples) if hasattr(inputs, "samples") else []
    corruption_device = str(resolve_device(params.device))
    clean = None
    for i, (scored_file, out) in enumerate(
        zip(scored_files, as_paths(snakemake.output.predictions), strict=True)
    ):
        scored = read_table(scored_file)
        regenerate = "image" not in scored.column_names
        if regenerate and clean is None:
            clean = PreparedImages(inputs.prepared, read_table(inputs.index))
        table = predict_scored(
            scored,
            inference,
            samples=read_table(samples_files[i]) if regenerate else None,
            clean=clean,
            corruption_device=corruption_device,
            batch_size=params.corruption_batch,
        )
        write_table(table, out)
        log.info("%s: %s, %d images (%s)", params.model, out, table.num_rows,
                 "made again and checked" if regenerate else "stored pixels")
