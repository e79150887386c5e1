"""Rule samples (and imagenet_c_samples): the samples shards of one corruption."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.evaluation.samples import make_samples  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "samples") as log:
    image_ids = read_table(snakemake.input.index, ["image_id"]).column("image_id").to_pylist()
    sampling = snakemake.params.sampling
    pilot = snakemake.input.get("pilot")  # sampling.spacing adaptive, uniform mode
    extra = {} if not pilot or sampling["mode"] != "uniform" else {
        "pilot": read_table(pilot), "bins": snakemake.params.definition["adaptive"]["bins"]}
    for shard, path in enumerate(snakemake.output.shards):
        table = make_samples(
            image_ids,
            snakemake.wildcards.corruption,
            seed=snakemake.params.seed,
            mode=sampling["mode"],
            n=sampling["n"],
            shard_size=sampling["shard_size"],
            shard=shard,
            spacing=sampling["spacing"],
            side=snakemake.params.side,
            jpeg_quality=sampling.get("jpeg_quality"),
            **extra,
        )
        write_table(table, path)
        log.info("shard %d: %d samples", shard, table.num_rows)
