# Globals, input functions and outputs of rules/infer.smk.


def model_checkpoint(wildcards):
    """The checkpoint a finetuned:<name> or trained:<name> model is loaded from (with a
    fine-tuned model's trained:<name> base, whose architecture it loads; nothing for registry
    models); rules/finetune.smk and rules/train.smk build them."""
    name = MODELS[wildcards.model]
    kind, _, target = name.partition(":")
    if kind == "finetuned":
        weights = f"{RESULTS}/models/{target}/checkpoint.pt"
        bases = [e["base"] for e in config["finetune"] if e["name"] == target]
        base_kind, _, base = bases[0].partition(":") if bases else ("", "", "")
        if base_kind == "trained":
            return [weights, f"{RESULTS}/models/{base}/model.pt"]
        return weights
    if kind == "trained" and not target.endswith(".pt"):
        return f"{RESULTS}/models/{target}/model.pt"
    return []


def prediction_shards(wildcards):
    """One model's prediction shards of a corruption's uniform sample."""
    return expand(
        f"{RESULTS}/predictions/{wildcards.model}/{wildcards.corruption}/shard-{{shard}}.parquet",
        shard=SHARDS,
    )
