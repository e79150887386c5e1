# The uniform sample of every corruption: which image, parameters and noise seed each sample
# gets (one job per corruption), then the corrupted images with their VIF and Δv (one job per
# corruption or shard, jobs.per), with or without their pixels (scoring.store_images). With
# sampling.spacing adaptive, a scored pilot per corruption comes first and decides the draws.


include: "functions/corrupt.smk"


rule pilot:
    input:
        index=rules.index.output.index,
        prepared=prepared(rules.index.output.index),
    output:
        pilot=f"{RESULTS}/pilot/{{corruption}}.parquet",
    log:
        f"{RESULTS}/logs/pilot/{{corruption}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/pilot/{{corruption}}.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["score"]
    resources:
        mem_mb=4000,
        runtime=120,
        gpu=GPU,
    params:
        seed=config["seed"],
        n=config["sampling"]["n"],
        definition=uniform_definition,
        side=IMAGE_SIDE,
        vif=config["vif"],
        device=config["device"],
        small_images=config["scoring"]["small_images"],
    script:
        "../workflow_scripts/pilot.py"


rule samples:
    input:
        unpack(samples_inputs),
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
        side=IMAGE_SIDE,
    script:
        "../workflow_scripts/samples.py"


rule score:
    input:
        samples=job_shards(f"{RESULTS}/samples/{{corruption}}", SHARDS),
        index=rules.index.output.index,
        prepared=prepared(rules.index.output.index),
    output:
        scored=job_shards(f"{RESULTS}/scored/{{corruption}}", SHARDS),
    log:
        job_file(f"{RESULTS}/logs/score/{{corruption}}", ".log"),
    benchmark:
        job_file(f"{RESULTS}/benchmarks/score/{{corruption}}", ".tsv")
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["score"]
    resources:
        mem_mb=4000,
        runtime=scoring_runtime,
        gpu=GPU,
    params:
        vif=config["vif"],
        device=config["device"],
        store_images=STORE_IMAGES,
        small_images=config["scoring"]["small_images"],
    script:
        "../workflow_scripts/score.py"
