# Globals, input functions and outputs of rules/infer.smk.


def model_checkpoint(wildcards):
    """The checkpoint a finetuned:<name> or trained:<name> model is loaded from (nothing for
    registry models); rules/finetune.smk and rules/train.smk build them."""
    name = MODELS[wildcards.model]
    kind, _, target = name.partition(":")
    if kind == "finetuned":
        return f"{RESULTS}/models/{target}/checkpoint.pt"
    if kind == "trained" and not target.endswith(".pt"):
        return f"{RESULTS}/models/{target}/model.pt"
    return []


def prediction_shards(wildcards):
    """One model's prediction shards of a corruption's uniform sample."""
    return expand(
        f"{RESULTS}/predictions/{wildcards.model}/{wildcards.corruption}/shard-{{shard}}.parquet",
        shard=SHARDS,
    )
