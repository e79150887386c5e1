"""Rule summary: the summary table as Parquet, CSV and Markdown."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import csv_text, read_tables, write_table, write_text  # noqa: E402
from vcrbench.vcr.summary import build_summary, summary_markdown  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "summary") as log:
    imagenet_c, human = snakemake.input.imagenet_c, snakemake.input.human
    summary = build_summary(
        read_tables(snakemake.input.metrics),
        human=read_tables(human) if human else None,
        imagenet_c=read_tables(imagenet_c) if imagenet_c else None,
        label_note=snakemake.params.label_note,
    )
    log.info("%d summary rows", summary.num_rows)
    write_table(summary, snakemake.output.summary)
    write_text(csv_text(summary), snakemake.output.csv)
    write_text(summary_markdown(summary), snakemake.output.markdown)
