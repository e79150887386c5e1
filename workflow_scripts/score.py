"""Rule score (and imagenet_c_score): corrupt and VIF-score one samples shard."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.data.prepared import PreparedImages  # noqa: E402
from vcrbench.evaluation.scoring import score_shard  # noqa: E402
from vcrbench.models import resolve_device  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "score") as log:
    device = resolve_device(snakemake.params.device)
    scored = score_shard(
        read_table(snakemake.input.samples),
        PreparedImages(snakemake.input.prepared, read_table(snakemake.input.index)),
        vif_precision=snakemake.params.vif["precision"],
        batch_size=snakemake.params.vif["batch_size"],
        device=device,
        store_images=snakemake.params.store_images,
    )
    log.info("%d samples scored on %s (pixels %s)", scored.num_rows, device,
             "stored" if snakemake.params.store_images else "not stored")
    write_table(scored, snakemake.output.scored)
