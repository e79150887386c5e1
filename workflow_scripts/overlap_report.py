"""Rule overlap_report: the NOC overlap tables and their Markdown report."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import (  # noqa: E402
    read_nested_tables,
    read_table,
    write_table,
    write_text,
)
from vcrbench.overlap.report import overlap_markdown, report_from_tables  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "overlap") as log:
    p = snakemake.params
    tables = report_from_tables(
        roles=dict(p.roles), candidates=list(p.candidates), baseline=p.baseline,
        index=read_table(snakemake.input.index), summary=read_table(snakemake.input.summary),
        clean={model: read_table(path) for model, path in p.clean.items()},
        outcomes=read_nested_tables(p.outcomes), replicates=read_nested_tables(p.replicates),
        thresholds=list(p.thresholds), classes=p.classes, n_boot=p.n_boot, seed=p.seed,
    )
    for path in snakemake.output.tables:
        write_table(tables[Path(path).stem], path)
    write_text(overlap_markdown(tables, p.baseline), snakemake.output.markdown)
    log.info("overlap report for %s", ", ".join(p.candidates))
