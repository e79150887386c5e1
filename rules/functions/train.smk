# Globals, input functions and outputs of rules/train.smk.

from vcrbench.core.shards import shard_count  # noqa: E402
from vcrbench.data.datasets import list_entries_from_config  # noqa: E402
from vcrbench.training.scratch import ADVERSARIAL_METHODS as SCRATCH_ADVERSARIAL  # noqa: E402
from vcrbench.training.scratch import AUGMIX_METHODS as SCRATCH_AUGMIX  # noqa: E402
from vcrbench.training.train_config import pgd_identity, workflow_recipe  # noqa: E402
from vcrbench.training.view_workers import view_worker_count  # noqa: E402

# Models trained from scratch (config train[]), by name.
TRAIN = {entry["name"]: entry for entry in config["train"]}
# REVa entries (reva_minus, reva): the entry whose folder holds the PGD counterparts they read
# (the first with the same standard model, training images, PGD settings and seed: crafted
# once, shared) and its shard numbers.
TRAIN_ADVERSARIAL = {n: e for n, e in TRAIN.items() if e["method"] in SCRATCH_ADVERSARIAL}
TRAIN_PGD_OWNER = {
    name: next(
        n
        for n, e in TRAIN_ADVERSARIAL.items()
        if pgd_identity(e, config["seed"]) == pgd_identity(entry, config["seed"])
    )
    for name, entry in TRAIN_ADVERSARIAL.items()
}
TRAIN_PGD_SHARDS = {
    name: range(
        shard_count(
            len(list_entries_from_config(entry["data"])), entry["reva"]["pgd"]["shard_size"]
        )
    )
    for name, entry in TRAIN_ADVERSARIAL.items()
    if TRAIN_PGD_OWNER[name] == name
}


def train_entry(wildcards):
    return TRAIN[wildcards.trained]


def train_data(wildcards):
    return TRAIN[wildcards.trained]["data"]


def train_recipe(wildcards):
    """The entry's full recipe, passed as a parameter so that a changed setting trains again
    (a REVa entry's also names its standard model, measure and PGD settings)."""
    return workflow_recipe(TRAIN[wildcards.trained], config["seed"])


def train_epoch_mem_mb(wildcards, threads):
    """4 GB, plus 0.5 GB per AugMix view worker (a spawned process with torch loaded;
    threads.train_views, counted as the job will count them; device auto as a GPU)."""
    if train_recipe(wildcards).get("method", "standard") not in SCRATCH_AUGMIX:
        return 4000
    device = "cpu" if config["device"] == "cpu" else "cuda"
    return 4000 + 500 * view_worker_count(config["threads"]["train_views"], threads, device)


def train_seed(wildcards):
    entry = TRAIN[wildcards.trained]
    return config["seed"] if entry["seed"] is None else entry["seed"]


def train_pgd_crafter(wildcards):
    """The standard model's file, which crafts a REVa entry's PGD counterparts."""
    return f"{RESULTS}/models/{TRAIN[wildcards.trained]['reva']['standard']}/model.pt"


def train_pgd_settings(wildcards):
    return TRAIN[wildcards.trained]["reva"]["pgd"]


def train_counterparts(wildcards):
    """A REVa entry's PGD counterpart shards (in its owner's folder); none for other methods."""
    name = wildcards.trained
    if name not in TRAIN_ADVERSARIAL:
        return []
    owner = TRAIN_PGD_OWNER[name]
    return [f"{RESULTS}/models/{owner}/pgd/shard-{k}.parquet" for k in TRAIN_PGD_SHARDS[owner]]


def train_targeted_groups(wildcards):
    """REVa part 1's groups of the standard model, for a reva entry with targeted: auto."""
    entry = TRAIN[wildcards.trained]
    if entry["method"] != "reva" or entry["reva"]["targeted"] != "auto":
        return []
    standard = SLUG[f"trained:{entry['reva']['standard']}"]
    return f"{RESULTS}/reva/by-model/{standard}/groups.parquet"


def previous_train_state(wildcards):
    epoch = int(wildcards.epoch)
    return [] if epoch == 1 else f"{RESULTS}/models/{wildcards.trained}/epochs/state-{epoch - 1}.pt"


def _epochs(wildcards):
    return range(1, train_recipe(wildcards)["epochs"] + 1)


def last_train_state(wildcards):
    return f"{RESULTS}/models/{wildcards.trained}/epochs/state-{max(_epochs(wildcards))}.pt"


def train_log_rows(wildcards):
    return [
        f"{RESULTS}/models/{wildcards.trained}/epochs/state-{e}.parquet" for e in _epochs(wildcards)
    ]


def train_outputs():
    """Every trained model and its training log."""
    return [
        f"{RESULTS}/models/{name}/{what}"
        for name in TRAIN
        for what in ("model.pt", "training-log.csv")
    ]
