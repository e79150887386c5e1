# Globals, input functions and outputs of rules/finetune.smk.

from vcrbench.corruptions.sampling import sampling_definition  # noqa: E402

# Fine-tuning entries by name; (fine-tuned model, base model) name pairs to compare.
FINETUNE = {entry["name"]: entry for entry in config["finetune"]}
RETRAINED = [(f"finetuned:{name}", entry["base"]) for name, entry in FINETUNE.items()]


wildcard_constraints:
    name="|".join(FINETUNE) or "no-finetune-entries",
    epoch=r"[1-9]\d*",


def finetune_entry(wildcards):
    return FINETUNE[wildcards.name]


def finetune_training_images(wildcards):
    return FINETUNE[wildcards.name]["train"]


def previous_epoch_checkpoint(wildcards):
    epoch = int(wildcards.epoch)
    return [] if epoch == 1 else f"{RESULTS}/models/{wildcards.name}/epochs/epoch-{epoch - 1}.pt"


def augmentation_definition(wildcards):
    """The registry's sampling definition of an entry's augmentation corruption (None without):
    a rule parameter, so that a change to that corruption's domain or spacing retrains."""
    augmentation = FINETUNE[wildcards.name]["augmentation"]
    if augmentation["corruption"] is None:
        return None
    return sampling_definition(augmentation["corruption"], "uniform", augmentation["spacing"])


def last_epoch_checkpoint(wildcards):
    epochs = FINETUNE[wildcards.name]["epochs"]
    return f"{RESULTS}/models/{wildcards.name}/epochs/epoch-{epochs}.pt"


def epoch_log_rows(wildcards):
    epochs = range(1, FINETUNE[wildcards.name]["epochs"] + 1)
    return [f"{RESULTS}/models/{wildcards.name}/epochs/epoch-{e}.parquet" for e in epochs]


def retraining_replicates():
    """model -> corruption -> the curve replicates of every model the retraining table
    compares (fine-tuned models and their bases)."""
    names = dict.fromkeys(name for pair in RETRAINED for name in pair)
    return {
        name: {c: f"{RESULTS}/curves/{SLUG[name]}/{c}-replicates.parquet" for c in CORRUPTIONS}
        for name in names
    }


def retraining_outputs():
    """The retraining table and figure, when the run fine-tunes models."""
    if not FINETUNE:
        return []
    return [*rules.retraining_table.output, *rules.figure_retraining.output]
