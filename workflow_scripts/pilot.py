"""Rule pilot: the scored pilot of one corruption (sampling.spacing adaptive), from which the
run's uniform sample is drawn (vcrbench.corruptions.adaptive)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.corruptions.adaptive import pilot_design, pilot_table  # noqa: E402
from vcrbench.data.prepared import PreparedImages  # noqa: E402
from vcrbench.evaluation.samples import pilot_samples  # noqa: E402
from vcrbench.evaluation.scoring import score_shard  # noqa: E402
from vcrbench.models import resolve_device  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "pilot") as log:
    inputs, params = snakemake.input, snakemake.params
    corruption = snakemake.wildcards.corruption
    device = resolve_device(params.device)
    index = read_table(inputs.index)
    clean = PreparedImages(inputs.prepared, index)
    image_ids = index.column("image_id").to_pylist()
    adaptive = params.definition["adaptive"]

    def score(points, first):
        samples = pilot_samples(image_ids, corruption, seed=params.seed, points=points,
                                first=first)
        return score_shard(samples, clean, vif_precision=params.vif["precision"],
                           batch_size=params.vif["batch_size"], device=device,
                           store_images=False, small_images=params.small_images
                           ).column("dv").to_numpy()

    columns = pilot_design(corruption, params.seed, params.n, score, side=params.side,
                           share=adaptive["pilot_share"], bins=adaptive["bins"])
    write_table(pilot_table(columns), snakemake.output.pilot)
    log.info("%s: %d pilot samples scored on %s", corruption, len(columns["dv"]), device)
