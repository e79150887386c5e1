rule samples:
    input:
        index=rules.index.output.index,
    output:
        shards=expand(f"{RESULTS}/samples/{{{{corruption}}}}/shard-{{shard}}.parquet", shard=SHARDS),
    params:
        seed=config["seed"],
        sampling=config["sampling"],
        definition=lambda wc: sampling_definition(
            wc.corruption, "uniform", config["sampling"]["spacing"]
        ),
    log:
        f"{RESULTS}/logs/samples/{{corruption}}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/vision.yaml"
    script:
        "../workflow_scripts/make_samples.py"


rule score:
    input:
        samples=f"{RESULTS}/samples/{{corruption}}/shard-{{shard}}.parquet",
        index=rules.index.output.index,
    output:
        scored=f"{RESULTS}/scored/{{corruption}}/shard-{{shard}}.parquet",
    params:
        vif=config["vif"],
        device=config["device"],
    log:
        f"{RESULTS}/logs/score/{{corruption}}/shard-{{shard}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/score/{{corruption}}/shard-{{shard}}.tsv"
    threads: config["threads"]["score"]
    resources:
        mem_mb=4000,
        runtime=120,
        gpu=GPU,
    conda:
        "../envs/vision.yaml"
    script:
        "../workflow_scripts/score_shard.py"
