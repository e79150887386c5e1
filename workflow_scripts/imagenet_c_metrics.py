"""Rule imagenet_c_metrics: per-severity rates and their mean, one model on one corruption."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_tables, write_table  # noqa: E402
from vcrbench.evaluation.outcomes import read_outcomes  # noqa: E402
from vcrbench.vcr.imagenet_c import severity_metrics  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "imagenet_c_metrics") as log:
    inputs = snakemake.input
    outcomes = read_outcomes(inputs.index, inputs.scored, inputs.predictions, inputs.clean)
    metrics = severity_metrics(
        outcomes,
        read_tables(inputs.samples, ["sample_id", "severity"]),
        model=snakemake.params.model,
        corruption=snakemake.wildcards.corruption,
        bins=snakemake.params.binning["bins"],
        min_count=snakemake.params.binning["min_count"],
        n_boot=snakemake.params.bootstrap["replicates"],
        seed=snakemake.params.seed,
        min_units=snakemake.params.bootstrap["min_units"],
        label_classes=snakemake.params.label_classes,
    )
    log.info("%d ImageNet-C samples, %d property rows", outcomes.num_rows, metrics.num_rows)
    write_table(metrics, snakemake.output.metrics)
