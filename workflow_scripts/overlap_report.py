"""Rule overlap_report: the NOC overlap tables and their Markdown report."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.jobs import job  # noqa: E402
from vcrbench.overlap_report import clean_correct, overlap_markdown, overlap_report  # noqa: E402
from vcrbench.retraining import replicate_areas  # noqa: E402
from vcrbench.tables import read_table, write_table, write_text  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "overlap") as log:
    p = snakemake.params
    folders, results = p.folders, p.results
    models = list(dict.fromkeys([*p.roles.values(), p.baseline]))
    index = read_table(snakemake.input.index)
    clean = {
        m: clean_correct(index, read_table(f"{results}/predictions/{folders[m]}/clean.parquet"),
                         p.classes)
        for m in models
    }
    outcomes = {
        (m, c): read_table(f"{results}/outcomes/{folders[m]}/{c}.parquet")
        for m in models for c in p.candidates
    }
    summary = read_table(snakemake.input.summary).to_pylist()
    r_a = {
        (r["model"], r["corruption"]): r["R"] for r in summary
        if r["metric"] == "accuracy" and r["classes"] == p.classes
    }
    r_a_replicates = {
        (m, c): replicate_areas(
            read_table(f"{results}/curves/{folders[m]}/{c}-replicates.parquet"), "accuracy",
            p.classes)
        for m in models for c in p.candidates
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
