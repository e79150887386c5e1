# The uniform sample of every corruption: which image, parameters and noise seed each sample
# gets (one job per corruption), then the corrupted images with their VIF and Δv (one job per
# shard), with or without their pixels (scoring.store_images).


include: "functions/corrupt.smk"


rule samples:
    input:
        index=rules.index.output.index,
    output:
        shards=sample_shards("samples", SHARDS),
    log:
        f"{RESULTS}/logs/samples/{{corruption}}.log",
    conda:
        "../envs/vision.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        seed=config["seed"],
        sampling=config["sampling"],
        definition=uniform_definition,
    script:
        "../workflow_scripts/samples.py"


rule score:
    input:
        samples=f"{RESULTS}/samples/{{corruption}}/shard-{{shard}}.parquet",
        index=rules.index.output.index,
        prepared=prepared(rules.index.output.index),
    output:
        scored=f"{RESULTS}/scored/{{corruption}}/shard-{{shard}}.parquet",
    log:
        f"{RESULTS}/logs/score/{{corruption}}/shard-{{shard}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/score/{{corruption}}/shard-{{shard}}.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["score"]
    resources:
        mem_mb=4000,
        runtime=120,
        gpu=GPU,
    params:
        vif=config["vif"],
        device=config["device"],
        store_images=STORE_IMAGES,
    script:
        "../workflow_scripts/score.py"
