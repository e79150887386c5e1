"""Rule figure_human_similarity: human curves with 83 % bands by similarity class (Fig. 8)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.figures.human import plot_human_similarity  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "figure_human_similarity"):
    plot_human_similarity(
        {corruption: read_table(path) for corruption, path in snakemake.params.curves.items()},
        read_table(snakemake.input.groups),
        paths=snakemake.output.figures,
    )
