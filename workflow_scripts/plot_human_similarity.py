"""Rule figure_human_similarity: human curves with 83 % bands by similarity class (Fig. 8)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.figures import plot_human_similarity  # noqa: E402
from vcrbench.jobs import job  # noqa: E402
from vcrbench.tables import read_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_human_similarity"):
    plot_human_similarity(
        {
            c: read_table(p)
            for c, p in zip(snakemake.params.corruptions, snakemake.input.curves, strict=True)
        },
        read_table(snakemake.input.groups),
        paths=snakemake.output.figures,
    )
