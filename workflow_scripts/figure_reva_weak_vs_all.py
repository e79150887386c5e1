"""Rule figure_reva_weak_vs_all: R on the weak-robust validation set against R on all
(evaluation) images, per corruption, with intervals."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.figures.reva import plot_weak_vs_all  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_reva_weak_vs_all"):
    plot_weak_vs_all(read_table(snakemake.input.table), models=snakemake.params.models,
                     paths=snakemake.output.figures, set_name=snakemake.params.set_name)
