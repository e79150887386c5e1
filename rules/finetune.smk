# Fine-tuning (config finetune[], and the entries the overlap report generates): a training
# index per entry, one job per epoch (so an interrupted training resumes at its last finished
# epoch), then the model checkpoint and its training log; finetuned:<name> models read
# models/<name>/checkpoint.pt (model_checkpoint() in rules/functions/infer.smk). A base trained
# here (trained:<name>, native-size runs) is an input of every job that loads it
# (models/<name>/model.pt). Then every metric before and after fine-tuning (VCR paper Table 3).


include: "functions/finetune.smk"


rule finetune_index:
    input:
        evaluation=rules.index.output.index,
    output:
        index=f"{RESULTS}/models/{{name}}/train-index.parquet",
    log:
        f"{RESULTS}/logs/finetune/{{name}}/index.log",
    conda:
        "../envs/vision.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        dataset=finetune_training_images,
    script:
        "../workflow_scripts/finetune_index.py"


# The PGD counterparts of a REVa entry's training images, crafted on the base model (shared by
# entries with the same base, images, PGD settings and seed: PGD_OWNER), one job per shard.
rule finetune_pgd:
    input:
        index=rules.finetune_index.output.index,
        base=finetune_base_model,
    output:
        shard=f"{RESULTS}/models/{{name}}/pgd/base/shard-{{pgdshard}}.parquet",
    log:
        f"{RESULTS}/logs/finetune/{{name}}/pgd/base/shard-{{pgdshard}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/finetune/{{name}}/pgd/base/shard-{{pgdshard}}.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["train"]
    resources:
        mem_mb=6000,
        runtime=720,
        gpu=GPU,
    params:
        base=finetune_base,
        pgd=pgd_settings,
        regime=finetune_regime,
        seed=finetune_seed,
        device=config["device"],
    script:
        "../workflow_scripts/finetune_pgd.py"


# With reva.pgd.recraft: the counterparts of epoch e > 1, crafted on the model after epoch e - 1.
use rule finetune_pgd as finetune_pgd_recraft with:
    input:
        index=rules.finetune_index.output.index,
        base=finetune_base_model,
        model=previous_epoch_checkpoint,
    output:
        shard=f"{RESULTS}/models/{{name}}/pgd/epoch-{{epoch}}/shard-{{pgdshard}}.parquet",
    log:
        f"{RESULTS}/logs/finetune/{{name}}/pgd/epoch-{{epoch}}/shard-{{pgdshard}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/finetune/{{name}}/pgd/epoch-{{epoch}}/shard-{{pgdshard}}.tsv"


rule finetune_epoch:
    input:
        index=rules.finetune_index.output.index,
        base=finetune_base_model,
        previous=previous_epoch_checkpoint,
        adversarial=pgd_counterparts,
        groups=reva_targeted_groups,
    output:
        checkpoint=temp(f"{RESULTS}/models/{{name}}/epochs/epoch-{{epoch}}.pt"),
        log_row=f"{RESULTS}/models/{{name}}/epochs/epoch-{{epoch}}.parquet",
    log:
        f"{RESULTS}/logs/finetune/{{name}}/epoch-{{epoch}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/finetune/{{name}}/epoch-{{epoch}}.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["train"]
    resources:
        mem_mb=8000,
        runtime=720,
        gpu=GPU,
    params:
        entry=finetune_entry,
        augmentation_definition=augmentation_definition,
        seed=config["seed"],
        device=config["device"],
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
    conda:
        "../envs/vision.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../workflow_scripts/finetune_model.py"


rule retraining_table:
    input:
        summary=rules.summary.output.summary,
        replicates=files_of(retraining_replicates()),
    output:
        table=f"{RESULTS}/metrics/retraining.parquet",
        csv=f"{RESULTS}/metrics/retraining.csv",
        markdown=f"{RESULTS}/metrics/retraining.md",
    log:
        f"{RESULTS}/logs/retraining.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        pairs=RETRAINED,
        replicates=retraining_replicates(),
    script:
        "../workflow_scripts/retraining_table.py"


use rule figure_base as figure_retraining with:
    input:
        table=rules.retraining_table.output.table,
    output:
        figures=report_figures("retraining", "Fine-tuning", "before and after fine-tuning"),
    log:
        f"{RESULTS}/logs/figures/retraining.log",
    params:
        script="figure_retraining",
        models=list(MODELS.values()),
