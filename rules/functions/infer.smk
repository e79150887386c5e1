# Globals, input functions and outputs of rules/infer.smk.


def model_checkpoint(wildcards):
    """The checkpoint a finetuned:<name> model is loaded from (nothing for registry models);
    rules/finetune.smk builds it."""
    name = MODELS[wildcards.model]
    if not name.startswith("finetuned:"):
        return []
    return f"{RESULTS}/models/{name.partition(':')[2]}/checkpoint.pt"


def prediction_shards(wildcards):
    """One model's prediction shards of a corruption's uniform sample."""
    return expand(
        f"{RESULTS}/predictions/{wildcards.model}/{wildcards.corruption}/shard-{{shard}}.parquet",
        shard=SHARDS,
    )
