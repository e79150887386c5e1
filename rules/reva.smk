# Weak-robust validation (config reva, REVa paper, docs/reva.md): the pool's images ranked by
# local robustness (per-input resilient analyser, one job per pool shard), the weakest as a
# validation set, which goes through the same sampling, scoring, inference and curve rules as
# the evaluation images; both sets at the ImageNet-C severities and under adversarial attacks;
# then errors relative to the clean evaluation error, robust / non-robust groups and R on the
# weak set against R on all images.


include: "functions/reva.smk"


rule reva_pool_index:
    input:
        evaluation=rules.index.output.index,
    output:
        index=f"{REVA_DIR}/pool/index.parquet",
    log:
        f"{RESULTS}/logs/reva/pool-index.log",
    conda:
        "../envs/vision.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        dataset=REVA["train"],
        disjoint=REVA["disjoint"],
    script:
        "../workflow_scripts/reva_pool_index.py"


# reva.from_train: the train entry's training index as the pool, its ids made distinct from
# the evaluation ids (vcrbench.reva.config.distinct_pool_ids) and checked like reva.train's.
rule reva_pool_from_train:
    input:
        train=reva_train_entry_index,
        evaluation=rules.index.output.index,
    output:
        index=f"{REVA_DIR}/pool/train-index.parquet",
    log:
        f"{RESULTS}/logs/reva/pool-from-train.log",
    conda:
        "../envs/vision.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        disjoint=REVA["disjoint"],
        per_class=REVA["pool_per_class"],
    script:
        "../workflow_scripts/reva_pool_from_train.py"


rule reva_analyse:
    input:
        index=reva_pool_index(),
        checkpoint=reva_ranking_checkpoint,
    output:
        scores=f"{REVA_DIR}/resilience/shard-{{poolshard}}.parquet",
    log:
        f"{RESULTS}/logs/reva/analyse/shard-{{poolshard}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/reva/analyse/shard-{{poolshard}}.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["predict"]
    resources:
        mem_mb=6000,
        runtime=720,
        gpu=GPU,
    params:
        model=REVA_PLAN.ranking_model if REVA_PLAN else None,
        models_dir=f"{RESULTS}/models",
        device=config["device"],
        inference=config["inference"],
        analyser=REVA["analyser"],
        pool=REVA_PLAN.pool if REVA_PLAN else None,
        seed=config["seed"],
    script:
        "../workflow_scripts/reva_analyse.py"


rule reva_weak_set:
    input:
        pool=reva_pool_index(),
        scores=expand(f"{REVA_DIR}/resilience/shard-{{k}}.parquet", k=REVA_POOL_SHARDS),
    output:
        resilience=f"{REVA_DIR}/resilience.parquet",
        ranking=f"{REVA_DIR}/ranking.parquet",
        index=f"{REVA_DIR}/weak/index.parquet",
        selection=f"{REVA_DIR}/weak/selection.txt",
    log:
        f"{RESULTS}/logs/reva/weak-set.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        size=REVA_PLAN.weak_size if REVA_PLAN else None,
        group_by=REVA["weak"]["group_by"],
        draw=REVA["weak"]["draw"],
        seed=config["seed"],
        pool_label=REVA_PLAN.pool_label() if REVA_PLAN else None,
    script:
        "../workflow_scripts/reva_weak_set.py"


# The weak set's uniform sample: the rules of the evaluation images on reva/weak/.
use rule samples as reva_samples with:
    input:
        index=rules.reva_weak_set.output.index,
    output:
        shards=sample_shards("reva/weak/samples", SHARDS),
    log:
        f"{RESULTS}/logs/reva/weak/samples/{{corruption}}.log",


use rule score as reva_score with:
    input:
        samples=job_shards(f"{REVA_DIR}/weak/samples/{{corruption}}", SHARDS),
        index=rules.reva_weak_set.output.index,
        prepared=prepared(rules.reva_weak_set.output.index),
    output:
        scored=job_shards(f"{REVA_DIR}/weak/scored/{{corruption}}", SHARDS),
    log:
        job_file(f"{RESULTS}/logs/reva/weak/score/{{corruption}}", ".log"),
    benchmark:
        job_file(f"{RESULTS}/benchmarks/reva/weak/score/{{corruption}}", ".tsv")


use rule predict_clean as reva_predict_clean with:
    input:
        index=rules.reva_weak_set.output.index,
        prepared=prepared(rules.reva_weak_set.output.index),
        checkpoint=model_checkpoint,
    output:
        predictions=f"{REVA_DIR}/weak/predictions/{{model}}/clean.parquet",
    log:
        f"{RESULTS}/logs/reva/weak/predict/{{model}}/clean.log",
    benchmark:
        f"{RESULTS}/benchmarks/reva/weak/predict/{{model}}/clean.tsv"


use rule predict_shard as reva_predict_shard with:
    input:
        scored=rules.reva_score.output.scored,
        samples=rules.reva_score.input.samples,
        index=rules.reva_score.input.index,
        prepared=rules.reva_score.input.prepared,
        checkpoint=model_checkpoint,
    output:
        predictions=job_shards(f"{REVA_DIR}/weak/predictions/{{model}}/{{corruption}}", SHARDS),
    log:
        job_file(f"{RESULTS}/logs/reva/weak/predict/{{model}}/{{corruption}}", ".log"),
    benchmark:
        job_file(f"{RESULTS}/benchmarks/reva/weak/predict/{{model}}/{{corruption}}", ".tsv")


use rule rates as reva_rates with:
    input:
        index=rules.reva_weak_set.output.index,
        scored=reva_weak_shards("scored"),
        predictions=reva_weak_shards("predictions"),
        clean=rules.reva_predict_clean.output.predictions,
    output:
        outcomes=f"{REVA_DIR}/weak/outcomes/{{model}}/{{corruption}}.parquet",
        rates=f"{REVA_DIR}/weak/rates/{{model}}/{{corruption}}.parquet",
    log:
        f"{RESULTS}/logs/reva/weak/rates/{{model}}/{{corruption}}.log",


use rule curves as reva_curves with:
    input:
        outcomes=rules.reva_rates.output.outcomes,
    output:
        curves=f"{REVA_DIR}/weak/curves/{{model}}/{{corruption}}.parquet",
        replicates=f"{REVA_DIR}/weak/curves/{{model}}/{{corruption}}-replicates.parquet",
        metrics=f"{REVA_DIR}/weak/metrics/{{model}}/{{corruption}}.parquet",
    log:
        f"{RESULTS}/logs/reva/weak/curves/{{model}}/{{corruption}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/reva/weak/curves/{{model}}/{{corruption}}.tsv"


# Both sets at the five ImageNet-C severities (uCE, Eq. 7).
use rule samples as reva_imagenet_c_samples with:
    input:
        index=reva_set_index,
    output:
        shards=sample_shards("reva/{set}/imagenet-c/samples", REVA_IC_SHARDS),
    log:
        f"{RESULTS}/logs/reva/{{set}}/imagenet-c/samples/{{corruption}}.log",
    params:
        seed=config["seed"],
        sampling={**config["sampling"], "mode": "imagenet-c", "n": REVA_IC_N, **IC_JPEG},
        definition=imagenet_c_definition,
        side=IMAGE_SIDE,


use rule score as reva_imagenet_c_score with:
    input:
        samples=job_shards(f"{REVA_DIR}/{{set}}/imagenet-c/samples/{{corruption}}", REVA_IC_SHARDS),
        index=reva_set_index,
        prepared=prepared(reva_set_index),
    output:
        scored=job_shards(f"{REVA_DIR}/{{set}}/imagenet-c/scored/{{corruption}}", REVA_IC_SHARDS),
    log:
        job_file(f"{RESULTS}/logs/reva/{{set}}/imagenet-c/score/{{corruption}}", ".log"),
    benchmark:
        job_file(f"{RESULTS}/benchmarks/reva/{{set}}/imagenet-c/score/{{corruption}}", ".tsv")


use rule predict_shard as reva_imagenet_c_predict_shard with:
    input:
        scored=rules.reva_imagenet_c_score.output.scored,
        samples=rules.reva_imagenet_c_score.input.samples,
        index=reva_set_index,
        prepared=prepared(reva_set_index),
        checkpoint=model_checkpoint,
    output:
        predictions=job_shards(
            f"{REVA_DIR}/{{set}}/imagenet-c/predictions/{{model}}/{{corruption}}", REVA_IC_SHARDS
        ),
    log:
        job_file(
            f"{RESULTS}/logs/reva/{{set}}/imagenet-c/predict/{{model}}/{{corruption}}",
            ".log",
        ),
    benchmark:
        job_file(
            f"{RESULTS}/benchmarks/reva/{{set}}/imagenet-c/predict/{{model}}/{{corruption}}",
            ".tsv",
        )


# Adversarial images of a set, crafted on one model (stored like a scored shard, with Δv).
rule reva_attack:
    input:
        index=reva_set_index,
        checkpoint=model_checkpoint,
    output:
        scored=f"{REVA_DIR}/{{set}}/attacks/{{model}}/{{attack}}.parquet",
    log:
        f"{RESULTS}/logs/reva/{{set}}/attacks/{{model}}/{{attack}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/reva/{{set}}/attacks/{{model}}/{{attack}}.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["predict"]
    resources:
        mem_mb=8000,
        runtime=720,
        gpu=GPU,
    params:
        model=model_name,
        models_dir=f"{RESULTS}/models",
        device=config["device"],
        settings=reva_attack_settings,
        batch_size=REVA["attacks"]["batch_size"],
        vif=config["vif"],
        seed=config["seed"],
    script:
        "../workflow_scripts/reva_attack.py"


use rule predict_shard as reva_predict_attack with:
    input:
        scored=reva_attack_shard,
        checkpoint=model_checkpoint,
    output:
        predictions=f"{REVA_DIR}/{{set}}/attack-predictions/{{model}}/{{attack}}.parquet",
    log:
        f"{RESULTS}/logs/reva/{{set}}/attack-predictions/{{model}}/{{attack}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/reva/{{set}}/attack-predictions/{{model}}/{{attack}}.tsv"


# An attack of the evaluation images crafted on one model, classified by another (the
# comparison's transferred or white-box attacks that the REVa report does not already predict).
use rule predict_shard as reva_predict_crafted with:
    input:
        scored=f"{REVA_DIR}/evaluation/attacks/{{crafter}}/{{attack}}.parquet",
        checkpoint=model_checkpoint,
    output:
        predictions=f"{REVA_DIR}/evaluation/crafted-on/{{crafter}}/predictions/{{model}}/"
        "{attack}.parquet",
    log:
        f"{RESULTS}/logs/reva/evaluation/crafted-on/{{crafter}}/{{model}}/{{attack}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/reva/evaluation/crafted-on/{{crafter}}/{{model}}/{{attack}}.tsv"


rule reva_report:
    input:
        weak=rules.reva_weak_set.output.index,
        evaluation=rules.index.output.index,
        selection=rules.reva_weak_set.output.selection,
        tables=nested_files(reva_inputs()) if REVA_PLAN else [],
    output:
        tables=expand(f"{REVA_DIR}/{{table}}.parquet", table=REVA_TABLES),
        markdown=f"{REVA_DIR}/report.md",
    log:
        f"{RESULTS}/logs/reva/report.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        models=REVA_MODELS,
        inputs=reva_inputs() if REVA_PLAN else {},
        groups=REVA["groups"],
        draw=REVA["weak"]["draw"],
        categories=reva_categories(),
        n_boot=config["bootstrap"]["replicates"],
        min_units=config["bootstrap"]["min_units"],
        seed=config["seed"],
    script:
        "../workflow_scripts/reva_report.py"


# The same tables for one model alone (reva/by-model/<model>/): what a fine-tuning entry with
# method reva and reva.targeted auto reads (rules/finetune.smk), so that it does not wait for
# the report of every model, its own fine-tuned one among them.
use rule reva_report as reva_model_report with:
    input:
        weak=rules.reva_weak_set.output.index,
        evaluation=rules.index.output.index,
        selection=rules.reva_weak_set.output.selection,
        tables=reva_model_files,
    output:
        tables=expand(f"{REVA_DIR}/by-model/{{{{model}}}}/{{table}}.parquet", table=REVA_TABLES),
        markdown=f"{REVA_DIR}/by-model/{{model}}/report.md",
    log:
        f"{RESULTS}/logs/reva/report-{{model}}.log",
    params:
        models=reva_one_model,
        inputs=reva_model_inputs,
        groups=REVA["groups"],
        draw=REVA["weak"]["draw"],
        categories=reva_categories(),
        n_boot=config["bootstrap"]["replicates"],
        min_units=config["bootstrap"]["min_units"],
        seed=config["seed"],


use rule figure_base as figure_reva_scores with:
    input:
        resilience=rules.reva_weak_set.output.resilience,
        ranking=rules.reva_weak_set.output.ranking,
    output:
        figures=report_figures("reva-scores", "Weak-robust validation", "resilience scores"),
    log:
        f"{RESULTS}/logs/figures/reva-scores.log",
    params:
        script="figure_reva_scores",
        set_name=REVA_SET_NAME,
        score=REVA["analyser"]["score"],


use rule figure_base as figure_reva_weak_vs_all with:
    input:
        table=f"{REVA_DIR}/r-weak-vs-all.parquet",
    output:
        figures=report_figures("reva-weak-vs-all", "Weak-robust validation", "R weak vs all"),
    log:
        f"{RESULTS}/logs/figures/reva-weak-vs-all.log",
    params:
        script="figure_reva_weak_vs_all",
        set_name=REVA_SET_NAME,
        models=list(REVA_MODELS.values()),


use rule figure_base as figure_reva_relative_errors with:
    input:
        relative=f"{REVA_DIR}/relative-errors.parquet",
        groups=f"{REVA_DIR}/groups.parquet",
    output:
        figures=report_figures("reva-relative-errors", "Weak-robust validation", "relative errors"),
    log:
        f"{RESULTS}/logs/figures/reva-relative-errors.log",
    params:
        script="figure_reva_relative_errors",
        set_name=REVA_SET_NAME,
        models=list(REVA_MODELS.values()),


# The comparison of training methods (reva.comparison; REVa Tables 2-5) on the evaluation images.
rule reva_comparison:
    input:
        index=rules.index.output.index,
        summary=SUMMARY,
        tables=nested_files(reva_comparison_inputs()) if REVA_COMPARISON else [],
        training=reva_comparison_training_files,
    output:
        tables=expand(f"{REVA_DIR}/comparison/{{table}}.parquet", table=REVA_COMPARISON_TABLES),
        markdown=f"{REVA_DIR}/comparison/report.md",
    log:
        f"{RESULTS}/logs/reva/comparison.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        methods=REVA_COMPARISON.methods if REVA_COMPARISON else {},
        baselines=REVA_COMPARISON.baselines if REVA_COMPARISON else [],
        transfer_from=REVA_COMPARISON.transfer_from if REVA_COMPARISON else None,
        alternative=REVA_COMPARISON.alternative if REVA_COMPARISON else None,
        published=config["reva"]["comparison"]["published"],
        inputs=reva_comparison_inputs() if REVA_COMPARISON else {},
        categories=reva_categories(),
        n_boot=config["bootstrap"]["replicates"],
        min_units=config["bootstrap"]["min_units"],
        seed=config["seed"],
        training=reva_comparison_training,
    script:
        "../workflow_scripts/reva_comparison.py"


use rule figure_base as figure_reva_comparison with:
    input:
        errors=f"{REVA_DIR}/comparison/errors.parquet",
    output:
        figures=report_figures(
            "reva-comparison", "Weak-robust validation", "comparison of training methods"
        ),
    log:
        f"{RESULTS}/logs/figures/reva-comparison.log",
    params:
        script="figure_reva_comparison",
        methods=REVA_COMPARISON.methods if REVA_COMPARISON else {},
        models=list(MODELS.values()),
