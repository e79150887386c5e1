"""Rule figure_curves: every model's curves and per-bin rates for one corruption, with the
human curve it is compared with where there is one."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.figures.vcr import plot_curves  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_curves"):
    params, human = snakemake.params, snakemake.input.human
    plot_curves(
        {model: read_table(path) for model, path in params.curves.items()},
        {model: read_table(path) for model, path in params.rates.items()},
        corruption=snakemake.wildcards.corruption,
        paths=snakemake.output.figures,
        metrics={model: read_table(path) for model, path in params.metrics.items()},
        human=read_table(human) if human else None,
        human_rates=read_table(snakemake.input.human_rates) if human else None,
        human_metrics=read_table(snakemake.input.human_metrics) if human else None,
        human_source=params.human_source,
        models=params.models,
    )
