"""Rule curves: monotone splines, bootstrap bands and R for one model on one corruption."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.vcr.estimation import fit_curves_configured  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "curves") as log:
    curves, replicates, metrics = fit_curves_configured(
        read_table(snakemake.input.outcomes),
        model=snakemake.params.model,
        corruption=snakemake.wildcards.corruption,
        binning=snakemake.params.binning,
        bootstrap=snakemake.params.bootstrap,
        seed=snakemake.params.seed,
        label_classes=snakemake.params.label_classes,
    )
    for row in metrics.to_pylist():
        log.info("%s %s-%d: R=%s [%s, %s] (resampled: %s)%s", row["corruption"], row["metric"],
                 row["classes"], row["R"], row["R_lo"], row["R_hi"], row["resampled"],
                 f"; {row['note']}" if row["note"] else "")
    write_table(curves, snakemake.output.curves)
    write_table(replicates, snakemake.output.replicates)
    write_table(metrics, snakemake.output.metrics)
