"""Rule summary: the summary table as Parquet, CSV and Markdown."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import (  # noqa: E402
    csv_text,
    read_table,
    read_tables,
    write_table,
    write_text,
)
from vcrbench.curves.reachability import reached_bins, unreachable_ranges  # noqa: E402
from vcrbench.vcr.summary import build_summary, summary_markdown  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "summary") as log:
    imagenet_c, human = snakemake.input.imagenet_c, snakemake.input.human
    unreachable = {}  # adaptive spacing: each corruption's Δv ranges its pilot cannot reach
    run_dv = {Path(p).stem: read_table(p, ["dv"]).column("dv").to_numpy()
              for p in snakemake.input.get("outcomes", [])}
    for path in snakemake.input.get("pilot", []):
        name = Path(path).stem
        reach = reached_bins(read_table(path, ["dv"]).column("dv").to_numpy(),
                             run_dv.get(name), snakemake.config["binning"]["bins"])
        unreachable[name] = ", ".join(unreachable_ranges(~reach))
    summary = build_summary(
        read_tables(snakemake.input.metrics),
        human=read_tables(human) if human else None,
        imagenet_c=read_tables(imagenet_c) if imagenet_c else None,
        label_note=snakemake.params.label_note,
        unreachable=unreachable,
    )
    log.info("%d summary rows", summary.num_rows)
    write_table(summary, snakemake.output.summary)
    write_text(csv_text(summary), snakemake.output.csv)
    write_text(summary_markdown(summary), snakemake.output.markdown)
