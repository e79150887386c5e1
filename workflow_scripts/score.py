"""Rule score (and imagenet_c_score, reva_score, reva_imagenet_c_score): corrupt and VIF-score
the samples shards of one job (one corruption, or one shard), in one process."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.files import as_paths  # noqa: E402
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.data.prepared import PreparedImages  # noqa: E402
from vcrbench.evaluation.scoring import score_shard  # noqa: E402
from vcrbench.models import resolve_device  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "score") as log:
    inputs, params = snakemake.input, snakemake.params
    device = resolve_device(params.device)
    clean = PreparedImages(inputs.prepared, read_table(inputs.index))
    outputs = as_paths(snakemake.output.scored)
    for samples, scored in zip(as_paths(inputs.samples), outputs, strict=True):
        table = score_shard(
            read_table(samples),
            clean,
            vif_precision=params.vif["precision"],
            batch_size=params.vif["batch_size"],
            device=device,
            store_images=params.store_images,
            small_images=params.small_images,
        )
        write_table(table, scored)
        log.info("%s: %d samples scored on %s (pixels %s)", scored, table.num_rows, device,
                 "stored" if params.store_images else "not stored")
