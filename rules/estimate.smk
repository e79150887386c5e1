# Algorithm 1 per model and corruption: per-sample outcomes and per-bin rates, then the
# monotone curves with bootstrap bands and R; and the curve figure of each corruption.


include: "functions/estimate.smk"


rule rates:
    input:
        index=rules.index.output.index,
        scored=scored_shards,
        predictions=prediction_shards,
        clean=rules.predict_clean.output.predictions,
    output:
        outcomes=f"{RESULTS}/outcomes/{{model}}/{{corruption}}.parquet",
        rates=f"{RESULTS}/rates/{{model}}/{{corruption}}.parquet",
    log:
        f"{RESULTS}/logs/rates/{{model}}/{{corruption}}.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        binning=config["binning"],
        label_classes=LABEL_SPACE.classes,
    script:
        "../workflow_scripts/rates.py"


rule curves:
    input:
        outcomes=rules.rates.output.outcomes,
    output:
        curves=f"{RESULTS}/curves/{{model}}/{{corruption}}.parquet",
        replicates=f"{RESULTS}/curves/{{model}}/{{corruption}}-replicates.parquet",
        metrics=f"{RESULTS}/metrics/{{model}}/{{corruption}}.parquet",
    log:
        f"{RESULTS}/logs/curves/{{model}}/{{corruption}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/curves/{{model}}/{{corruption}}.tsv"
    conda:
        "../envs/stats.yaml"
    threads: config["threads"]["estimate"]
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        binning=config["binning"],
        bootstrap=config["bootstrap"],
        seed=config["seed"],
        model=model_name,
        label_classes=LABEL_SPACE.classes,
    script:
        "../workflow_scripts/curves.py"


use rule figure_base as figure_curves with:
    input:
        curves=model_table_files("curves"),
        rates=model_table_files("rates"),
        metrics=model_table_files("metrics"),
        human=human_curve_of(""),
        human_rates=human_curve_of("-rates"),
        human_metrics=human_curve_of("-metrics"),
    output:
        figures=report_figures(
            "curves/{corruption}",
            "Robustness curves",
            None,
            caption="curves",
            corruption="{corruption}",
        ),
    log:
        f"{RESULTS}/logs/figures/curves-{{corruption}}.log",
    params:
        script="figure_curves",
        models=list(MODELS.values()),
        curves=model_tables("curves"),
        rates=model_tables("rates"),
        metrics=model_tables("metrics"),
        human_source=human_source,
