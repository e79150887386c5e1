rule index:
    output:
        index=f"{RESULTS}/data/index.parquet",
    params:
        dataset=config["dataset"],
    log:
        f"{RESULTS}/logs/index.log",
    benchmark:
        f"{RESULTS}/benchmarks/index.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../envs/vision.yaml"
    script:
        "../workflow_scripts/build_index.py"
