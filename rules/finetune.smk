# Fine-tuning (config finetune[]): a training index per entry, one job per epoch (so an
# interrupted training resumes at its last finished epoch), then the model checkpoint and its
# training log. finetuned:<name> models read models/<name>/checkpoint.pt (model_checkpoint()).


rule finetune_index:
    input:
        evaluation=rules.index.output.index,
    output:
        index=f"{RESULTS}/models/{{name}}/train-index.parquet",
    params:
        dataset=lambda wildcards: FINETUNE[wildcards.name]["train"],
    log:
        f"{RESULTS}/logs/finetune/{{name}}/index.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../envs/vision.yaml"
    script:
        "../workflow_scripts/finetune_index.py"


rule finetune_epoch:
    input:
        index=rules.finetune_index.output.index,
        previous=previous_epoch_checkpoint,
    output:
        checkpoint=temp(f"{RESULTS}/models/{{name}}/epochs/epoch-{{epoch}}.pt"),
        log_row=f"{RESULTS}/models/{{name}}/epochs/epoch-{{epoch}}.parquet",
    params:
        entry=lambda wildcards: FINETUNE[wildcards.name],
        augmentation_definition=augmentation_definition,
        seed=config["seed"],
        device=config["device"],
    log:
        f"{RESULTS}/logs/finetune/{{name}}/epoch-{{epoch}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/finetune/{{name}}/epoch-{{epoch}}.tsv"
    threads: config["threads"]["train"]
    resources:
        mem_mb=8000,
        runtime=720,
        gpu=GPU,
    conda:
        "../envs/vision.yaml"
    script:
        "../workflow_scripts/finetune_epoch.py"


rule finetune_model:
    input:
        last=last_epoch_checkpoint,
        log_rows=epoch_log_rows,
    output:
        checkpoint=f"{RESULTS}/models/{{name}}/checkpoint.pt",
        training_log=f"{RESULTS}/models/{{name}}/training-log.parquet",
    log:
        f"{RESULTS}/logs/finetune/{{name}}/model.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/vision.yaml"
    script:
        "../workflow_scripts/finetune_model.py"


rule retraining_table:
    input:
        summary=f"{RESULTS}/metrics/summary.parquet",
        replicates=[f"{RESULTS}/curves/{SLUG[m]}/{c}-replicates.parquet" for m, c in retraining_keys()],
    output:
        table=f"{RESULTS}/metrics/retraining.parquet",
        csv=f"{RESULTS}/metrics/retraining.csv",
        markdown=f"{RESULTS}/metrics/retraining.md",
    params:
        pairs=[(MODELS[finetuned], MODELS[base]) for finetuned, base in RETRAINED],
        replicate_keys=retraining_keys(),
    log:
        f"{RESULTS}/logs/retraining.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/retraining_table.py"
