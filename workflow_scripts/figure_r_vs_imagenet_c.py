"""Rule figure_r_vs_imagenet_c: R_a against the ImageNet-C mean accuracy (paper, Fig. 5)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.figures.vcr import plot_r_vs_imagenet_c  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_r_vs_imagenet_c"):
    plot_r_vs_imagenet_c(
        read_table(snakemake.input.summary),
        paths=snakemake.output.figures,
        models=snakemake.params.models,
    )
