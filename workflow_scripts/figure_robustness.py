"""Rule figure_robustness: R per model and corruption, with 95 % intervals."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.figures.vcr import plot_robustness  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_robustness"):
    plot_robustness(
        read_table(snakemake.input.summary),
        paths=snakemake.output.figures,
        models=snakemake.params.models,
    )
