"""Rule figure_overlap: heat maps of the overlap matrix (NOC Fig. 3), noc and vcr scores."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.figures.overlap import plot_overlap  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_overlap"):
    plot_overlap(read_table(snakemake.input.matrix), paths=snakemake.output.figures)
