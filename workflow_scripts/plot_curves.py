"""Rule figure_curves: every model's curves and per-bin rates for one corruption."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.figures import plot_curves  # noqa: E402
from vcrbench.jobs import job  # noqa: E402
from vcrbench.tables import read_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_curves"):
    plot_curves(
        {
            m: read_table(p)
            for m, p in zip(snakemake.params.models, snakemake.input.curves, strict=True)
        },
        {
            m: read_table(p)
            for m, p in zip(snakemake.params.models, snakemake.input.rates, strict=True)
        },
        corruption=snakemake.wildcards.corruption,
        paths=snakemake.output.figures,
    )
