rule predict_clean:
    input:
        index=rules.index.output.index,
        checkpoint=model_checkpoint,
    output:
        predictions=f"{RESULTS}/predictions/{{model}}/clean.parquet",
    params:
        model=model_name,
        models_dir=f"{RESULTS}/models",
        device=config["device"],
        inference=config["inference"],
    log:
        f"{RESULTS}/logs/predict/{{model}}/clean.log",
    benchmark:
        f"{RESULTS}/benchmarks/predict/{{model}}/clean.tsv"
    threads: config["threads"]["predict"]
    resources:
        mem_mb=6000,
        runtime=240,
        gpu=GPU,
    conda:
        "../envs/vision.yaml"
    script:
        "../workflow_scripts/predict.py"


rule predict_shard:
    input:
        scored=rules.score.output.scored,
        checkpoint=model_checkpoint,
    output:
        predictions=f"{RESULTS}/predictions/{{model}}/{{corruption}}/shard-{{shard}}.parquet",
    params:
        model=model_name,
        models_dir=f"{RESULTS}/models",
        device=config["device"],
        inference=config["inference"],
    log:
        f"{RESULTS}/logs/predict/{{model}}/{{corruption}}/shard-{{shard}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/predict/{{model}}/{{corruption}}/shard-{{shard}}.tsv"
    threads: config["threads"]["predict"]
    resources:
        mem_mb=4000,
        runtime=120,
        gpu=GPU,
    conda:
        "../envs/vision.yaml"
    script:
        "../workflow_scripts/predict.py"
