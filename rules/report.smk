# Figures and the coverage table read only cached tables: deleting figures/ and re-running
# touches no corruption, VIF or model. Figures that need human data or an ImageNet-C sample
# are built only when the run has them (figure_outputs() in common.smk).


# corruption -> the human curve its curve figure shows (its own or a similar one's) and its name;
# corruptions without one are absent (lookup(..., default=...) then gives nothing).
FIGURE_HUMAN_CURVES = {c: f"{RESULTS}/human/{src}.parquet" for c, (src, _) in HUMAN_FOR.items()}
FIGURE_HUMAN_RATES = {c: f"{RESULTS}/human/{src}-rates.parquet" for c, (src, _) in HUMAN_FOR.items()}
FIGURE_HUMAN_SOURCES = {c: source for c, (_, source) in HUMAN_FOR.items()}


rule figure_curves:
    input:
        curves=model_curves,
        rates=model_rates,
        human=lookup(dpath="{corruption}", within=FIGURE_HUMAN_CURVES, default=[]),
        human_rates=lookup(dpath="{corruption}", within=FIGURE_HUMAN_RATES, default=[]),
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
        models=list(MODELS.values()),
        human_source=lookup(dpath="{corruption}", within=FIGURE_HUMAN_SOURCES, default=""),
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
        imagenet_c=expand(
            f"{RESULTS}/imagenet-c/scored/{{corruption}}/shard-{{shard}}.parquet",
            corruption=IC_CORRUPTIONS,
            shard=IC_SHARDS,
        ),
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


rule coverage_table:
    input:
        summary=f"{RESULTS}/metrics/summary.parquet",
    output:
        markdown=f"{RESULTS}/metrics/coverage.md",
        csv=report(
            f"{RESULTS}/metrics/coverage.csv",
            caption="../report/coverage_table.rst",
            category="Visual change coverage",
            labels={"figure": "coverage table", "format": "csv"},
        ),
    params:
        corruptions=CORRUPTIONS,
        binning=config["binning"],
    log:
        f"{RESULTS}/logs/figures/coverage-table.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/plot_coverage_table.py"


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
    params:
        models=list(MODELS.values()),
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


rule figure_human_indices:
    input:
        summary=f"{RESULTS}/metrics/summary.parquet",
    output:
        figures=[
            report(
                f"{RESULTS}/figures/human-indices.{fmt}",
                caption="../report/human_indices.rst",
                category="Human comparison",
                labels={"figure": "HMRI and MRSI", "format": fmt},
            )
            for fmt in FORMATS
        ],
    params:
        models=list(MODELS.values()),
    log:
        f"{RESULTS}/logs/figures/human-indices.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/plot_human_indices.py"


rule figure_human_similarity:
    input:
        curves=expand(f"{RESULTS}/human/{{corruption}}.parquet", corruption=HUMAN),
        groups=f"{RESULTS}/human/similarity/curve-groups.parquet",
    output:
        figures=[
            report(
                f"{RESULTS}/figures/human-similarity.{fmt}",
                caption="../report/human_similarity.rst",
                category="Human comparison",
                labels={"figure": "human curves by similarity class", "format": fmt},
            )
            for fmt in FORMATS
        ],
    params:
        corruptions=list(HUMAN),
    log:
        f"{RESULTS}/logs/figures/human-similarity.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/plot_human_similarity.py"


rule figure_r_vs_imagenet_c:
    input:
        summary=f"{RESULTS}/metrics/summary.parquet",
    output:
        figures=[
            report(
                f"{RESULTS}/figures/r-vs-imagenet-c.{fmt}",
                caption="../report/r_vs_imagenet_c.rst",
                category="ImageNet-C comparison",
                labels={"figure": "R against ImageNet-C mean", "format": fmt},
            )
            for fmt in FORMATS
        ],
    params:
        models=list(MODELS.values()),
    log:
        f"{RESULTS}/logs/figures/r-vs-imagenet-c.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/plot_r_vs_imagenet_c.py"


rule figure_retraining:
    input:
        table=rules.retraining_table.output.table,
    output:
        figures=[
            report(
                f"{RESULTS}/figures/retraining.{fmt}",
                caption="../report/retraining.rst",
                category="Fine-tuning",
                labels={"figure": "before and after fine-tuning", "format": fmt},
            )
            for fmt in FORMATS
        ],
    params:
        models=list(MODELS.values()),
    log:
        f"{RESULTS}/logs/figures/retraining.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/plot_retraining.py"
