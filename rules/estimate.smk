rule rates:
    input:
        index=rules.index.output.index,
        scored=scored_shards,
        predictions=prediction_shards,
        clean=rules.predict_clean.output.predictions,
    output:
        outcomes=f"{RESULTS}/outcomes/{{model}}/{{corruption}}.parquet",
        rates=f"{RESULTS}/rates/{{model}}/{{corruption}}.parquet",
    params:
        binning=config["binning"],
    log:
        f"{RESULTS}/logs/rates/{{model}}/{{corruption}}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/compute_rates.py"


rule curves:
    input:
        outcomes=rules.rates.output.outcomes,
    output:
        curves=f"{RESULTS}/curves/{{model}}/{{corruption}}.parquet",
        replicates=f"{RESULTS}/curves/{{model}}/{{corruption}}-replicates.parquet",
        metrics=f"{RESULTS}/metrics/{{model}}/{{corruption}}.parquet",
    params:
        binning=config["binning"],
        bootstrap=config["bootstrap"],
        seed=config["seed"],
        model=model_name,
    log:
        f"{RESULTS}/logs/curves/{{model}}/{{corruption}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/curves/{{model}}/{{corruption}}.tsv"
    threads: config["threads"]["estimate"]
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/fit_curves.py"


rule summary:
    input:
        metrics=expand(f"{RESULTS}/metrics/{{model}}/{{corruption}}.parquet", model=MODELS, corruption=CORRUPTIONS),
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
    output:
        summary=f"{RESULTS}/metrics/summary.parquet",
        csv=f"{RESULTS}/metrics/summary.csv",
        markdown=f"{RESULTS}/metrics/summary.md",
    log:
        f"{RESULTS}/logs/summary.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/summarize.py"
