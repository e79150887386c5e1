# Globals, input functions and outputs of rules/corrupt.smk.

from vcrbench.core.shards import shard_count  # noqa: E402
from vcrbench.corruptions.sampling import sampling_definition  # noqa: E402
from vcrbench.evaluation.scoring import stores_images  # noqa: E402

SHARDS = list(range(shard_count(config["sampling"]["n"], config["sampling"]["shard_size"])))
# Whether scored shards keep their pixels (scoring.store_images; auto: by the run's size, counted
# as its uniform and ImageNet-C samples).
STORE_IMAGES = stores_images(
    config["scoring"]["store_images"],
    len(CORRUPTIONS) * (config["sampling"]["n"] + config["sampling"]["imagenet_c_n"]),
)


def uniform_definition(wildcards):
    """The registry's sampling definition of a corruption (uniform mode): a rule parameter, so
    that a change to its domains or spacing re-draws exactly that corruption's samples."""
    return sampling_definition(wildcards.corruption, "uniform", config["sampling"]["spacing"])


def sample_shards(folder, shards):
    """The shard files ``<folder>/{corruption}/shard-<k>.parquet`` of one sampling job (the
    corruption stays a wildcard)."""
    return [f"{RESULTS}/{folder}/{{corruption}}/shard-{k}.parquet" for k in shards]


def scored_shards(wildcards):
    """Every scored shard of a corruption."""
    return expand(f"{RESULTS}/scored/{wildcards.corruption}/shard-{{shard}}.parquet", shard=SHARDS)
