"""Rule rates: per-sample outcomes and per-bin rates of one model on one corruption."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import write_table  # noqa: E402
from vcrbench.evaluation.outcomes import read_outcomes  # noqa: E402
from vcrbench.vcr.rates import rates_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "rates") as log:
    inputs = snakemake.input
    outcomes = read_outcomes(inputs.index, inputs.scored, inputs.predictions, inputs.clean)
    binning = snakemake.params.binning
    rates = rates_table(outcomes, bins=binning["bins"], min_count=binning["min_count"],
                        label_classes=snakemake.params.label_classes)
    log.info("%d samples, %d rate rows", outcomes.num_rows, rates.num_rows)
    write_table(outcomes, snakemake.output.outcomes)
    write_table(rates, snakemake.output.rates)
