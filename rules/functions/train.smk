# Globals, input functions and outputs of rules/train.smk.

from vcrbench.training.train_config import recipe_of_entry  # noqa: E402

# Models trained from scratch (config train[]), by name.
TRAIN = {entry["name"]: entry for entry in config["train"]}


def train_entry(wildcards):
    return TRAIN[wildcards.trained]


def train_data(wildcards):
    return TRAIN[wildcards.trained]["data"]


def train_recipe(wildcards):
    """The entry's full recipe, passed as a parameter so that a changed setting trains again."""
    return recipe_of_entry(TRAIN[wildcards.trained], config["seed"]).as_dict()


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
