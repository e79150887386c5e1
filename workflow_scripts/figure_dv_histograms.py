"""Rule figure_dv_histograms: the Δv distribution of every corruption's uniform sample and,
where the run has one, of its ImageNet-C severity sample."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.figures.vcr import plot_dv_histograms, read_dv  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_dv_histograms"):
    uniform = read_dv(snakemake.input.scored)
    binning = snakemake.params.binning
    plot_dv_histograms(
        {c: uniform.get(c, []) for c in snakemake.params.corruptions},
        bins=binning["bins"],
        min_count=binning["min_count"],
        paths=snakemake.output.figures,
        imagenet_c=read_dv(snakemake.input.imagenet_c),
    )
