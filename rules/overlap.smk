# The overlap report (config overlap, NOC paper): robustness and overlap scores with paired
# bootstrap intervals, non-overlapping benchmarks, CE / mCE and balance, from cached tables of
# the standard, per-candidate fine-tuned and baseline models (their fine-tuning entries are
# generated into config finetune, so rules/finetune.smk trains them).


include: "functions/overlap.smk"


rule overlap_report:
    input:
        index=rules.index.output.index,
        summary=rules.summary.output.summary,
        clean=list(overlap_clean_predictions().values()),
        outcomes=files_of(overlap_tables("outcomes")),
        replicates=files_of(overlap_tables("replicates")),
    output:
        tables=expand(f"{RESULTS}/overlap/{{table}}.parquet", table=OVERLAP_TABLES),
        markdown=f"{RESULTS}/overlap/report.md",
    log:
        f"{RESULTS}/logs/overlap.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        roles=roles(OVERLAP),
        candidates=OVERLAP["candidates"],
        baseline=baseline(OVERLAP),
        clean=overlap_clean_predictions(),
        outcomes=overlap_tables("outcomes"),
        replicates=overlap_tables("replicates"),
        thresholds=OVERLAP["thresholds"],
        classes=overlap_classes(),
        n_boot=config["bootstrap"]["replicates"],
        seed=config["seed"],
    script:
        "../workflow_scripts/overlap_report.py"


use rule figure_base as figure_overlap with:
    input:
        matrix=f"{RESULTS}/overlap/matrix.parquet",
    output:
        figures=report_figures("overlap", "Corruption overlap", "overlap matrix"),
    log:
        f"{RESULTS}/logs/figures/overlap.log",
    params:
        script="figure_overlap",
