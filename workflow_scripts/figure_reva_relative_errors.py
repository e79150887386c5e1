"""Rule figure_reva_relative_errors: relative errors per perturbation, non-robust ones marked."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.figures.reva import plot_relative_errors  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_reva_relative_errors"):
    plot_relative_errors(read_table(snakemake.input.relative), read_table(snakemake.input.groups),
                         models=snakemake.params.models, paths=snakemake.output.figures,
                         set_name=snakemake.params.set_name)
