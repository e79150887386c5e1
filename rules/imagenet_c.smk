# The ImageNet-C severity sample (sampling.imagenet_c_n > 0): the same sampling, scoring and
# inference rules on other paths, reduced to per-severity rates, their mean and the Δv coverage;
# and the Δv histograms of both samples.


include: "functions/imagenet_c.smk"


use rule samples as imagenet_c_samples with:
    input:
        index=rules.index.output.index,
    output:
        shards=sample_shards("imagenet-c/samples", IC_SHARDS),
    log:
        f"{RESULTS}/logs/imagenet-c/samples/{{corruption}}.log",
    params:
        seed=config["seed"],
        sampling={**config["sampling"], "mode": "imagenet-c", "n": IC_N, **IC_JPEG},
        definition=imagenet_c_definition,
        side=IMAGE_SIDE,


use rule score as imagenet_c_score with:
    input:
        samples=job_shards(f"{RESULTS}/imagenet-c/samples/{{corruption}}", IC_SHARDS),
        index=rules.index.output.index,
        prepared=prepared(rules.index.output.index),
    output:
        scored=job_shards(f"{RESULTS}/imagenet-c/scored/{{corruption}}", IC_SHARDS),
    log:
        job_file(f"{RESULTS}/logs/imagenet-c/score/{{corruption}}", ".log"),
    benchmark:
        job_file(f"{RESULTS}/benchmarks/imagenet-c/score/{{corruption}}", ".tsv")


use rule predict_shard as imagenet_c_predict_shard with:
    input:
        scored=rules.imagenet_c_score.output.scored,
        samples=rules.imagenet_c_score.input.samples,
        index=rules.imagenet_c_score.input.index,
        prepared=rules.imagenet_c_score.input.prepared,
        checkpoint=model_checkpoint,
    output:
        predictions=job_shards(
            f"{RESULTS}/imagenet-c/predictions/{{model}}/{{corruption}}", IC_SHARDS
        ),
    log:
        job_file(f"{RESULTS}/logs/imagenet-c/predict/{{model}}/{{corruption}}", ".log"),
    benchmark:
        job_file(f"{RESULTS}/benchmarks/imagenet-c/predict/{{model}}/{{corruption}}", ".tsv")


rule imagenet_c_metrics:
    input:
        index=rules.index.output.index,
        samples=imagenet_c_shards("samples"),
        scored=imagenet_c_shards("scored"),
        predictions=imagenet_c_prediction_shards,
        clean=rules.predict_clean.output.predictions,
    output:
        metrics=f"{RESULTS}/metrics/{{model}}/{{corruption}}-imagenet-c.parquet",
    log:
        f"{RESULTS}/logs/imagenet-c/metrics/{{model}}/{{corruption}}.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        binning=config["binning"],
        bootstrap=config["bootstrap"],
        seed=config["seed"],
        model=model_name,
        label_classes=LABEL_SPACE.classes,
    script:
        "../workflow_scripts/imagenet_c_metrics.py"


use rule figure_base as figure_dv_histograms with:
    input:
        scored=expand(
            f"{RESULTS}/scored/{{corruption}}/shard-{{shard}}.parquet",
            corruption=CORRUPTIONS,
            shard=SHARDS,
        ),
        imagenet_c=expand(
            f"{RESULTS}/imagenet-c/scored/{{corruption}}/shard-{{shard}}.parquet",
            corruption=IC_CORRUPTIONS,
            shard=IC_SHARDS,
        ),
    output:
        figures=report_figures("dv-histograms", "Visual change coverage", "Δv histograms"),
    log:
        f"{RESULTS}/logs/figures/dv-histograms.log",
    params:
        script="figure_dv_histograms",
        corruptions=CORRUPTIONS,
        binning=config["binning"],
