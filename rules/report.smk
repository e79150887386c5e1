# Figures read only cached tables: deleting figures/ and re-running touches no model.


rule figure_curves:
    input:
        curves=model_curves,
        rates=model_rates,
    output:
        figures=[
            report(
                f"{RESULTS}/figures/curves/{{corruption}}.{fmt}",
                caption="../report/curves.rst",
                category="Robustness curves",
                labels={"corruption": "{corruption}", "format": fmt},
            )
            for fmt in FORMATS
        ],
    params:
        models=list(MODELS),
    log:
        f"{RESULTS}/logs/figures/curves-{{corruption}}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/plot_curves.py"


rule figure_dv_histograms:
    input:
        scored=expand(f"{RESULTS}/scored/{{corruption}}/shard-{{shard}}.parquet", corruption=CORRUPTIONS, shard=SHARDS),
    output:
        figures=[
            report(
                f"{RESULTS}/figures/dv-histograms.{fmt}",
                caption="../report/dv_histograms.rst",
                category="Visual change coverage",
                labels={"figure": "Δv histograms", "format": fmt},
            )
            for fmt in FORMATS
        ],
    params:
        corruptions=CORRUPTIONS,
        binning=config["binning"],
    log:
        f"{RESULTS}/logs/figures/dv-histograms.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/plot_dv_histograms.py"


rule figure_robustness:
    input:
        summary=f"{RESULTS}/metrics/summary.parquet",
    output:
        figures=[
            report(
                f"{RESULTS}/figures/robustness.{fmt}",
                caption="../report/robustness.rst",
                category="Summary",
                labels={"figure": "R per model and corruption", "format": fmt},
            )
            for fmt in FORMATS
        ],
    log:
        f"{RESULTS}/logs/figures/robustness.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/plot_robustness.py"
