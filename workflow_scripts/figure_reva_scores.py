"""Rule figure_reva_scores: the distribution of the pool's robustness scores, the weak-robust
validation set marked."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.data.imagenet16 import CATEGORIES16  # noqa: E402
from vcrbench.figures.reva import plot_resilience_scores  # noqa: E402

SCORE_LABELS = {
    "misprediction": r"$\rho$: mean misprediction score",
    "fraction": "fraction of neighbours misclassified",
}

with job(snakemake.log[0], snakemake.threads, "figure_reva_scores"):
    plot_resilience_scores(
        read_table(snakemake.input.resilience), read_table(snakemake.input.ranking),
        score_label=SCORE_LABELS[snakemake.params.score], category_names=list(CATEGORIES16),
        paths=snakemake.output.figures, set_name=snakemake.params.set_name,
    )
