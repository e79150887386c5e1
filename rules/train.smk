# Models trained from random initialisation (config train[]; docs/cifar.md): a training index per
# entry, one job per epoch (an interrupted training resumes at its last finished epoch; each
# epoch's row of the log has the accuracy on the run's evaluation images), then the model and
# its log; trained:<name> models read models/<name>/model.pt (model_checkpoint() in
# rules/functions/infer.smk).


include: "functions/train.smk"


wildcard_constraints:
    trained="|".join(TRAIN) or "no-train-entries",


rule train_index:
    input:
        evaluation=rules.index.output.index,
    output:
        index=f"{RESULTS}/models/{{trained}}/train-index.parquet",
    log:
        f"{RESULTS}/logs/train/{{trained}}/index.log",
    conda:
        "../envs/vision.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        dataset=train_data,
    script:
        "../workflow_scripts/train_index.py"


# The PGD counterparts of a REVa entry's training images, crafted on its standard model (shared
# by entries with the same standard model, images, PGD settings and seed), one job per shard.
rule train_pgd:
    input:
        index=rules.train_index.output.index,
        prepared=prepared(rules.train_index.output.index),
        crafter=train_pgd_crafter,
    output:
        shard=f"{RESULTS}/models/{{trained}}/pgd/shard-{{pgdshard}}.parquet",
    log:
        f"{RESULTS}/logs/train/{{trained}}/pgd/shard-{{pgdshard}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/train/{{trained}}/pgd/shard-{{pgdshard}}.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["train"]
    resources:
        mem_mb=4000,
        runtime=720,
        gpu=GPU,
    params:
        pgd=train_pgd_settings,
        seed=train_seed,
        device=config["device"],
    script:
        "../workflow_scripts/train_pgd.py"


rule train_epoch:
    input:
        index=rules.train_index.output.index,
        prepared=prepared(rules.train_index.output.index),
        evaluation=rules.index.output.index,
        evaluation_prepared=prepared(rules.index.output.index),
        previous=previous_train_state,
        adversarial=train_counterparts,
        groups=train_targeted_groups,
    output:
        state=temp(f"{RESULTS}/models/{{trained}}/epochs/state-{{epoch}}.pt"),
        log_row=f"{RESULTS}/models/{{trained}}/epochs/state-{{epoch}}.parquet",
    log:
        f"{RESULTS}/logs/train/{{trained}}/epoch-{{epoch}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/train/{{trained}}/epoch-{{epoch}}.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["train"]
    resources:
        mem_mb=train_epoch_mem_mb,
        runtime=720,
        gpu=GPU,
    params:
        recipe=train_recipe,
        label_space=LABEL_SPACE.name,
        device=config["device"],
        view_workers=config["threads"]["train_views"],
    script:
        "../workflow_scripts/train_epoch.py"


rule train_model:
    input:
        last=last_train_state,
        log_rows=train_log_rows,
    output:
        model=f"{RESULTS}/models/{{trained}}/model.pt",
        training_log=f"{RESULTS}/models/{{trained}}/training-log.parquet",
        csv=f"{RESULTS}/models/{{trained}}/training-log.csv",
    log:
        f"{RESULTS}/logs/train/{{trained}}/model.log",
    conda:
        "../envs/vision.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../workflow_scripts/train_model.py"
