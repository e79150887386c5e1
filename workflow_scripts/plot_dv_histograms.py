"""Rule figure_dv_histograms: the Δv distribution of every corruption's sample."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.figures import plot_dv_histograms  # noqa: E402
from vcrbench.jobs import job  # noqa: E402
from vcrbench.tables import read_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_dv_histograms"):
    dv = {c: [] for c in snakemake.params.corruptions}
    for path in snakemake.input.scored:
        corruption = Path(path).parent.name
        dv[corruption].extend(read_table(path, ["dv"]).column("dv").to_pylist())
    binning = snakemake.params.binning
    plot_dv_histograms(
        dv, bins=binning["bins"], min_count=binning["min_count"], paths=snakemake.output.figures
    )
