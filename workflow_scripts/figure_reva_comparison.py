"""Rule figure_reva_comparison: every compared method's error per perturbation, with intervals."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.figures.reva import plot_comparison_errors  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_reva_comparison"):
    plot_comparison_errors(read_table(snakemake.input.errors), methods=snakemake.params.methods,
                           models=snakemake.params.models, paths=snakemake.output.figures)
