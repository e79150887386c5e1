# The clean images: the dataset's index (every image decoded once, so a bad file stops here).


rule index:
    output:
        index=f"{RESULTS}/data/index.parquet",
    log:
        f"{RESULTS}/logs/index.log",
    benchmark:
        f"{RESULTS}/benchmarks/index.tsv"
    conda:
        "../envs/vision.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        dataset=config["dataset"],
    script:
        "../workflow_scripts/index.py"
