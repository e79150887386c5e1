# The summary table: every model's R per corruption and property, with HMRI / MRSI against the
# human curves and the ImageNet-C columns; the figures and the coverage table drawn from it.


include: "functions/summary.smk"


rule compare_human:
    input:
        curves=rules.curves.output.curves,
        replicates=rules.curves.output.replicates,
        metrics=rules.curves.output.metrics,
        human=human_curve_of(""),
        human_replicates=human_curve_of("-replicates"),
        human_metrics=human_curve_of("-metrics"),
    output:
        metrics=f"{RESULTS}/metrics/{{model}}/{{corruption}}-human.parquet",
    log:
        f"{RESULTS}/logs/human/compare-{{model}}-{{corruption}}.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        model=model_name,
        source=human_source,
        human_range=config["human_range"],
    script:
        "../workflow_scripts/compare_human.py"


rule summary:
    input:
        metrics=expand(
            f"{RESULTS}/metrics/{{model}}/{{corruption}}.parquet",
            model=MODELS,
            corruption=CORRUPTIONS,
        ),
        human=[
            f"{RESULTS}/metrics/{model}/{corruption}-human.parquet"
            for model in MODELS
            for corruption in HUMAN_FOR
        ],
        imagenet_c=expand(
            f"{RESULTS}/metrics/{{model}}/{{corruption}}-imagenet-c.parquet",
            model=MODELS,
            corruption=IC_CORRUPTIONS,
        ),
        pilot=pilot_files(),
        outcomes=adaptive_outcomes(),
    output:
        summary=SUMMARY,
        csv=f"{RESULTS}/metrics/summary.csv",
        markdown=f"{RESULTS}/metrics/summary.md",
    log:
        f"{RESULTS}/logs/summary.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        label_note=label_space_note(LABEL_SPACE.name, LABEL_SPACE.classes),
    script:
        "../workflow_scripts/summary.py"


use rule figure_base as figure_robustness with:
    input:
        summary=rules.summary.output.summary,
    output:
        figures=report_figures("robustness", "Summary", "R per model and corruption"),
    log:
        f"{RESULTS}/logs/figures/robustness.log",
    params:
        script="figure_robustness",
        models=list(MODELS.values()),


use rule figure_robustness as figure_r_vs_imagenet_c with:
    output:
        figures=report_figures(
            "r-vs-imagenet-c", "ImageNet-C comparison", "R against ImageNet-C mean"
        ),
    log:
        f"{RESULTS}/logs/figures/r-vs-imagenet-c.log",
    params:
        script="figure_r_vs_imagenet_c",


use rule figure_robustness as figure_human_indices with:
    output:
        figures=report_figures("human-indices", "Human comparison", "HMRI and MRSI"),
    log:
        f"{RESULTS}/logs/figures/human-indices.log",
    params:
        script="figure_human_indices",


use rule figure_base as summary_html with:
    input:
        summary=rules.summary.output.summary,
    output:
        html=report_item(
            f"{RESULTS}/metrics/summary.html",
            "Summary",
            "summary_table",
            figure="summary table",
        ),
    log:
        f"{RESULTS}/logs/figures/summary-html.log",
    params:
        script="summary_html",


use rule figure_base as coverage_table with:
    input:
        summary=rules.summary.output.summary,
        outcomes=expand(
            f"{RESULTS}/outcomes/{{model}}/{{corruption}}.parquet",
            model=list(MODELS)[:1],
            corruption=CORRUPTIONS,
        ),
        imagenet_c=expand(
            f"{RESULTS}/metrics/{{model}}/{{corruption}}-imagenet-c.parquet",
            model=list(MODELS)[:1],
            corruption=IC_CORRUPTIONS,
        ),
        pilot=pilot_files(),
    output:
        markdown=f"{RESULTS}/metrics/coverage.md",
        csv=f"{RESULTS}/metrics/coverage.csv",
        html=report_item(
            f"{RESULTS}/metrics/coverage.html",
            "Visual change coverage",
            "coverage_table",
            figure="coverage table",
        ),
    log:
        f"{RESULTS}/logs/figures/coverage-table.log",
    params:
        script="coverage_table",
        corruptions=CORRUPTIONS,
        binning=config["binning"],
