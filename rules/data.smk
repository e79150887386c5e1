# The clean images: the dataset's index (every image decoded once, so a bad file stops here), and
# the prepared-image store of every index of the run (each image decoded and prepared once more,
# then read by every job that needs clean pixels).


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


rule prepare_images:
    input:
        index=f"{RESULTS}/{{index}}.parquet",
    output:
        images=f"{RESULTS}/{{index}}-prepared.npy",
    log:
        f"{RESULTS}/logs/prepare_images/{{index}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/prepare_images/{{index}}.tsv"
    wildcard_constraints:
        index=r"(data|reva/\w+|models/[^/]+)/(train-)?index",
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["score"]
    resources:
        mem_mb=1000,
        runtime=120,
    script:
        "../workflow_scripts/prepare_images.py"
