"""Rule coverage_table: Δv coverage of the uniform and ImageNet-C samples (paper, Table 2)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import csv_text, read_table, write_text  # noqa: E402
from vcrbench.vcr.coverage import coverage_markdown, coverage_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "coverage_table"):
    table = coverage_table(read_table(snakemake.input.summary), snakemake.params.corruptions)
    binning = snakemake.params.binning
    write_text(coverage_markdown(table, bins=binning["bins"], min_count=binning["min_count"]),
               snakemake.output.markdown)
    write_text(csv_text(table), snakemake.output.csv)
