"""Rule summary_html: the summary table as a sortable HTML page for the report."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_text  # noqa: E402
from vcrbench.figures.tables import summary_html  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "summary_html"):
    write_text(summary_html(read_table(snakemake.input.summary)), snakemake.output.html)
