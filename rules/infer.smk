# Every model's decisions on the clean images and on every scored shard (its stored pixels, or
# the same images made again from the samples shard and checked against the scored checksums).


include: "functions/infer.smk"


rule predict_clean:
    input:
        index=rules.index.output.index,
        prepared=prepared(rules.index.output.index),
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
        # what makes the corrupted images again when the scored shard has no pixels
        samples=rules.score.input.samples,
        index=rules.score.input.index,
        prepared=rules.score.input.prepared,
        checkpoint=model_checkpoint,
    output:
        predictions=job_shards(f"{RESULTS}/predictions/{{model}}/{{corruption}}", SHARDS),
    log:
        job_file(f"{RESULTS}/logs/predict/{{model}}/{{corruption}}", ".log"),
    benchmark:
        job_file(f"{RESULTS}/benchmarks/predict/{{model}}/{{corruption}}", ".tsv")
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["predict"]
    resources:
        mem_mb=4000,
        runtime=inference_runtime,
        gpu=GPU,
    params:
        model=model_name,
        models_dir=f"{RESULTS}/models",
        device=config["device"],
        inference=config["inference"],
        corruption_batch=config["vif"]["batch_size"],
    script:
        "../workflow_scripts/predict_shard.py"


# An openclip: model's text embeddings of the 1000 class prompts, made once per model and run
# (the prediction jobs read them through model_checkpoint).
rule openclip_text_embeddings:
    input:
        weights=openclip_local_checkpoint,
    output:
        embeddings=f"{RESULTS}/models/{{model}}/{TEXT_EMBEDDINGS_FILE}",
    log:
        f"{RESULTS}/logs/models/{{model}}/text-embeddings.log",
    benchmark:
        f"{RESULTS}/benchmarks/models/{{model}}/text-embeddings.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["predict"]
    resources:
        mem_mb=6000,
        runtime=60,
    params:
        model=model_name,
    script:
        "../workflow_scripts/openclip_text_embeddings.py"
