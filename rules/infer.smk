# Every model's decisions on the clean images and on every scored shard.


include: "functions/infer.smk"


rule predict_clean:
    input:
        index=rules.index.output.index,
        checkpoint=model_checkpoint,
    output:
        predictions=f"{RESULTS}/predictions/{{model}}/clean.parquet",
    log:
        f"{RESULTS}/logs/predict/{{model}}/clean.log",
    benchmark:
        f"{RESULTS}/benchmarks/predict/{{model}}/clean.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["predict"]
    resources:
        mem_mb=6000,
        runtime=240,
        gpu=GPU,
    params:
        model=model_name,
        models_dir=f"{RESULTS}/models",
        device=config["device"],
        inference=config["inference"],
    script:
        "../workflow_scripts/predict_clean.py"


rule predict_shard:
    input:
        scored=rules.score.output.scored,
        checkpoint=model_checkpoint,
    output:
        predictions=f"{RESULTS}/predictions/{{model}}/{{corruption}}/shard-{{shard}}.parquet",
    log:
        f"{RESULTS}/logs/predict/{{model}}/{{corruption}}/shard-{{shard}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/predict/{{model}}/{{corruption}}/shard-{{shard}}.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["predict"]
    resources:
        mem_mb=4000,
        runtime=120,
        gpu=GPU,
    params:
        model=model_name,
        models_dir=f"{RESULTS}/models",
        device=config["device"],
        inference=config["inference"],
    script:
        "../workflow_scripts/predict_shard.py"
