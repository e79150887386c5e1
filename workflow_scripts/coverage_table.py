"""Rule coverage_table: Δv coverage of the uniform and ImageNet-C samples (paper, Table 2), as
CSV, Markdown and an HTML table for the report."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import csv_text, read_table, write_text  # noqa: E402
from vcrbench.curves.reachability import reachable_bins  # noqa: E402
from vcrbench.figures.tables import coverage_html  # noqa: E402
from vcrbench.vcr.coverage import coverage_markdown, coverage_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "coverage_table"):
    binning = snakemake.params.binning
    uniform_dv = {Path(p).stem: read_table(p, ["dv"]).column("dv").to_numpy()
                  for p in snakemake.input.outcomes}
    imagenet_c_n = {Path(p).stem.removesuffix("-imagenet-c"):
                    max(read_table(p, ["imagenet_c_n"]).column("imagenet_c_n").to_pylist(),
                        default=0)
                    for p in snakemake.input.imagenet_c}
    pilots = snakemake.input.get("pilot", [])  # adaptive spacing: what each corruption reaches
    reachable = {Path(p).stem: reachable_bins(read_table(p, ["dv"]).column("dv").to_numpy(),
                                              binning["bins"]) for p in pilots} or None
    table = coverage_table(read_table(snakemake.input.summary), snakemake.params.corruptions,
                           uniform_dv=uniform_dv, imagenet_c_n=imagenet_c_n,
                           bins=binning["bins"], min_count=binning["min_count"],
                           reachable=reachable)
    write_text(coverage_markdown(table, bins=binning["bins"], min_count=binning["min_count"]),
               snakemake.output.markdown)
    write_text(csv_text(table), snakemake.output.csv)
    write_text(coverage_html(table, bins=binning["bins"], min_count=binning["min_count"]),
               snakemake.output.html)
