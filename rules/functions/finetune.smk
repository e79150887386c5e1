# Globals, input functions and outputs of rules/finetune.smk.

import json  # noqa: E402

from vcrbench.core.shards import shard_count  # noqa: E402
from vcrbench.corruptions.sampling import sampling_definition  # noqa: E402
from vcrbench.data.datasets import NATIVE, list_entries_from_config  # noqa: E402
from vcrbench.training.augmix import CorruptionOp  # noqa: E402
from vcrbench.training.spec import ADVERSARIAL_METHODS, regime_of, resolve_pgd  # noqa: E402

# Fine-tuning entries by name; (fine-tuned model, base model) name pairs to compare.
FINETUNE = {entry["name"]: entry for entry in config["finetune"]}
RETRAINED = [(f"finetuned:{name}", entry["base"]) for name, entry in FINETUNE.items()]
# REVa entries (methods reva_minus, reva): the entry whose folder holds the static PGD
# counterparts they read (the first entry with the same base, training images, PGD settings and
# seed: crafted once, shared), and the shard numbers (from the training images' file names).
ADVERSARIAL = {n: e for n, e in FINETUNE.items() if e["method"] in ADVERSARIAL_METHODS}


def _resolved_pgd(entry):
    """An entry's reva.pgd with eps and alpha auto resolved for its training images."""
    return resolve_pgd(entry["reva"]["pgd"], regime_of(entry["train"]))


def _pgd_identity(entry):
    pgd = {k: v for k, v in _resolved_pgd(entry).items() if k != "recraft"}
    seed = config["seed"] if entry["seed"] is None else entry["seed"]
    return json.dumps([entry["base"], entry["train"], pgd, seed], sort_keys=True)


PGD_OWNER = {}
for _name, _entry in ADVERSARIAL.items():
    _owner = [n for n, e in ADVERSARIAL.items() if _pgd_identity(e) == _pgd_identity(_entry)]
    PGD_OWNER[_name] = _owner[0]
PGD_SHARDS = {
    name: list(
        range(
            shard_count(
                len(list_entries_from_config(entry["train"])),
                entry["reva"]["pgd"]["shard_size"],
            )
        )
    )
    for name, entry in ADVERSARIAL.items()
}


wildcard_constraints:
    name="|".join(FINETUNE) or "no-finetune-entries",
    epoch=r"[1-9]\d*",
    pgdshard=r"\d+",


def finetune_entry(wildcards):
    return FINETUNE[wildcards.name]


def finetune_training_images(wildcards):
    return FINETUNE[wildcards.name]["train"]


def previous_epoch_checkpoint(wildcards):
    epoch = int(wildcards.epoch)
    return [] if epoch == 1 else f"{RESULTS}/models/{wildcards.name}/epochs/epoch-{epoch - 1}.pt"


def augmentation_definition(wildcards):
    """The registry's sampling definition of an entry's augmentation corruption (None without),
    or the parameters of a reva entry's listed targeted corruptions: a rule parameter, so that
    a change to that corruption's domain, spacing or severities retrains."""
    entry = FINETUNE[wildcards.name]
    augmentation, reva = entry["augmentation"], entry["reva"]
    if entry["method"] == "reva" and reva["targeted"] != "auto":
        side = _side(entry)
        return {
            name: dict(
                CorruptionOp.at(name, reva["severity"], reva["domain_fraction"], side=side).params
            )
            for name in reva["targeted"]
        }
    if augmentation["corruption"] is None:
        return None
    return sampling_definition(
        augmentation["corruption"], "uniform", augmentation["spacing"], _side(entry)
    )


def _side(entry):
    """The side (px) of an entry's training images: 224, or the native size (e.g. 32)."""
    return dataset_side(entry["train"]) if entry["train"]["size"] == NATIVE else 224


def finetune_base(wildcards):
    return FINETUNE[wildcards.name]["base"]


def trained_base_file(base):
    """The file of a base trained here (trained:<name> -> models/<name>/model.pt, rule
    train_model), else nothing (registry models load from their caches)."""
    kind, _, target = base.partition(":")
    return f"{RESULTS}/models/{target}/model.pt" if kind == "trained" else []


def finetune_base_model(wildcards):
    """The base model's file that an entry's jobs load (trained:<name> bases only)."""
    return trained_base_file(FINETUNE[wildcards.name]["base"])


def pgd_settings(wildcards):
    """An entry's PGD settings (reva.pgd, eps and alpha auto resolved)."""
    return _resolved_pgd(FINETUNE[wildcards.name])


def finetune_regime(wildcards):
    """The data regime (cifar, imagenet) of an entry's training images."""
    return regime_of(FINETUNE[wildcards.name]["train"])


def finetune_seed(wildcards):
    """An entry's seed (its own, else the run's)."""
    seed = FINETUNE[wildcards.name]["seed"]
    return config["seed"] if seed is None else seed


def pgd_counterparts(wildcards):
    """The PGD counterpart shards an epoch of a REVa entry trains on: the static ones of its
    PGD owner, or with reva.pgd.recraft those crafted on the previous epoch (epochs > 1)."""
    name = wildcards.name
    if name not in ADVERSARIAL:
        return []
    epoch = int(wildcards.epoch)
    if ADVERSARIAL[name]["reva"]["pgd"]["recraft"] and epoch > 1:
        folder = f"{RESULTS}/models/{name}/pgd/epoch-{epoch}"
    else:
        folder = f"{RESULTS}/models/{PGD_OWNER[name]}/pgd/base"
    return [f"{folder}/shard-{k}.parquet" for k in PGD_SHARDS[name]]


def reva_targeted_groups(wildcards):
    """REVa part 1's groups of the base model, for a reva entry with targeted: auto (else
    nothing): the table of that model alone, so that the entry does not wait for the report
    of every model (its own fine-tuned one among them)."""
    entry = FINETUNE[wildcards.name]
    if entry["method"] != "reva" or entry["reva"]["targeted"] != "auto":
        return []
    return f"{RESULTS}/reva/by-model/{SLUG[entry['base']]}/groups.parquet"


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


def reva_comparison_training(wildcards=None):
    """method label -> the training index of each fine-tuned method of REVa's comparison
    (rules/reva.smk, reva_comparison: its report says whether their classes cover the
    evaluation classes). REVA_COMPARISON is defined in rules/functions/reva.smk."""
    if not REVA_COMPARISON:
        return {}
    return {
        label: f"{RESULTS}/models/{model.partition(':')[2]}/train-index.parquet"
        for label, model in REVA_COMPARISON.methods.items()
        if model.startswith("finetuned:")
    }


def reva_comparison_training_files(wildcards):
    return list(reva_comparison_training().values())
