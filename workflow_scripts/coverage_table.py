"""Rule coverage_table: Δv coverage of the uniform and ImageNet-C samples (paper, Table 2)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.vcr.coverage import write_coverage_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "coverage_table"):
    write_coverage_table(
        read_table(snakemake.input.summary),
        markdown=snakemake.output.markdown,
        csv_path=snakemake.output.csv,
        corruptions=snakemake.params.corruptions,
        bins=snakemake.params.binning["bins"],
        min_count=snakemake.params.binning["min_count"],
    )
