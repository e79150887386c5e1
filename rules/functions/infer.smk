# Globals, input functions and outputs of rules/infer.smk.


from vcrbench.models import parse_model_name  # noqa: E402
from vcrbench.models.openclip_zoo import TEXT_EMBEDDINGS_FILE  # noqa: E402


def model_checkpoint(wildcards):
    """The files a model is loaded from beyond its registry source: the checkpoint of a
    finetuned:<name> or trained:<name> model (with a fine-tuned model's trained:<name> base,
    whose architecture it loads), rules/finetune.smk and rules/train.smk build them; an
    openclip: model's text embeddings (rule openclip_text_embeddings); nothing for other
    registry models."""
    name = MODELS[wildcards.model]
    kind, _, target = name.partition(":")
    if kind == "openclip":
        return f"{RESULTS}/models/{wildcards.model}/{TEXT_EMBEDDINGS_FILE}"
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


def openclip_local_checkpoint(wildcards):
    """The local checkpoint file of an openclip:<arch>?pretrained=<file> model (nothing for a
    pretrained tag), so that its text embeddings are made again when it changes."""
    spec = parse_model_name(MODELS[wildcards.model])
    return spec.options.get("pretrained", [])
