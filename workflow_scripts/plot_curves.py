"""Rule figure_curves: every model's curves and per-bin rates for one corruption, with the
human curve it is compared with where there is one."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.figures import plot_curves  # noqa: E402
from vcrbench.jobs import job  # noqa: E402
from vcrbench.tables import read_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_curves"):
    models = snakemake.params.models
    plot_curves(
        {m: read_table(p) for m, p in zip(models, snakemake.input.curves, strict=True)},
        {m: read_table(p) for m, p in zip(models, snakemake.input.rates, strict=True)},
        corruption=snakemake.wildcards.corruption,
        paths=snakemake.output.figures,
        human=read_table(snakemake.input.human) if snakemake.input.human else None,
        human_rates=read_table(snakemake.input.human_rates) if snakemake.input.human else None,
        human_source=snakemake.params.human_source,
        models=models,
    )
