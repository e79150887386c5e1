# Globals, input functions and outputs of rules/imagenet_c.smk.

from vcrbench.corruptions import CORRUPTIONS as REGISTRY  # noqa: E402

IC_N = config["sampling"]["imagenet_c_n"]
# The corruptions that get an ImageNet-C sample: those with ImageNet-C severities.
IC_CORRUPTIONS = [c for c in CORRUPTIONS if IC_N and REGISTRY[c].imagenet_c_severities is not None]
IC_SHARDS = list(range(shard_count(IC_N, config["sampling"]["shard_size"]))) if IC_N else []


def imagenet_c_definition(wildcards):
    """The registry's ImageNet-C severities of a corruption (a rule parameter, as for the
    uniform sample)."""
    return sampling_definition(wildcards.corruption, "imagenet-c", side=IMAGE_SIDE)


def imagenet_c_shards(kind):
    """Input function: one kind of ImageNet-C shards ("samples", "scored") of a corruption."""

    def shards(wildcards):
        return expand(
            f"{RESULTS}/imagenet-c/{kind}/{wildcards.corruption}/shard-{{shard}}.parquet",
            shard=IC_SHARDS,
        )

    return shards


def imagenet_c_prediction_shards(wildcards):
    """One model's prediction shards of a corruption's ImageNet-C sample."""
    folder = f"{RESULTS}/imagenet-c/predictions/{wildcards.model}/{wildcards.corruption}"
    return expand(f"{folder}/shard-{{shard}}.parquet", shard=IC_SHARDS)


def dv_histogram_figures():
    """The Δv histograms of every corruption's uniform (and ImageNet-C) sample."""
    return expand(f"{RESULTS}/figures/dv-histograms.{{fmt}}", fmt=FORMATS)
