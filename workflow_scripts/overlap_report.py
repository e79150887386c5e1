"""Rule overlap_report: the NOC overlap tables and their Markdown report."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.jobs import job  # noqa: E402
from vcrbench.overlap_report import clean_correct, overlap_markdown, overlap_report  # noqa: E402
from vcrbench.retraining import replicate_areas  # noqa: E402
from vcrbench.tables import read_table, write_table, write_text  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "overlap") as log:
    p, inputs = snakemake.params, snakemake.input
    keys = [tuple(key) for key in p.pair_keys]  # the order of the per-(model, corruption) inputs
    index = read_table(inputs.index)
    clean = {
        m: clean_correct(index, read_table(path), p.classes)
        for m, path in zip(p.models, inputs.clean, strict=True)
    }
    outcomes = {key: read_table(path) for key, path in zip(keys, inputs.outcomes, strict=True)}
    summary = read_table(snakemake.input.summary).to_pylist()
    r_a = {
        (r["model"], r["corruption"]): r["R"] for r in summary
        if r["metric"] == "accuracy" and r["classes"] == p.classes
    }
    r_a_replicates = {
        key: replicate_areas(read_table(path), "accuracy", p.classes)
        for key, path in zip(keys, inputs.replicates, strict=True)
    }
    tables = overlap_report(
        roles=dict(p.roles), candidates=list(p.candidates), baseline=p.baseline,
        image_ids=index.column("image_id").to_pylist(), clean=clean, outcomes=outcomes,
        r_a=r_a, r_a_replicates=r_a_replicates, thresholds=list(p.thresholds),
        classes=p.classes, replicates=p.replicates, seed=p.seed,
    )
    for path in snakemake.output.tables:
        write_table(tables[Path(path).stem], path)
    write_text(overlap_markdown(tables, p.baseline), snakemake.output.markdown)
    log.info("overlap report for %s", ", ".join(p.candidates))
