# The overlap report (config overlap, NOC paper): robustness and overlap scores with paired
# bootstrap intervals, non-overlapping benchmarks, CE / mCE and balance, from cached tables of
# the standard, per-candidate fine-tuned and baseline models.


rule overlap_report:
    input:
        index=rules.index.output.index,
        summary=f"{RESULTS}/metrics/summary.parquet",
        clean=overlap_inputs("clean"),
        outcomes=overlap_inputs("outcomes"),
        replicates=overlap_inputs("replicates"),
    output:
        tables=expand(
            f"{RESULTS}/overlap/{{table}}.parquet", table=["robustness", "matrix", "benchmarks", "ce"]
        ),
        markdown=f"{RESULTS}/overlap/report.md",
    params:
        roles=OVERLAP_ROLES,
        models=overlap_models(),
        pair_keys=overlap_keys(),
        candidates=OVERLAP_CANDIDATES,
        baseline=OVERLAP_BASELINE,
        thresholds=OVERLAP["thresholds"],
        classes=OVERLAP["classes"],
        replicates=config["bootstrap"]["replicates"],
        seed=config["seed"],
    log:
        f"{RESULTS}/logs/overlap.log",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/overlap_report.py"


rule figure_overlap:
    input:
        matrix=f"{RESULTS}/overlap/matrix.parquet",
    output:
        figures=[
            report(
                f"{RESULTS}/figures/overlap.{fmt}",
                caption="../report/overlap.rst",
                category="Corruption overlap",
                labels={"figure": "overlap matrix", "format": fmt},
            )
            for fmt in FORMATS
        ],
    log:
        f"{RESULTS}/logs/figures/overlap.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/plot_overlap.py"
