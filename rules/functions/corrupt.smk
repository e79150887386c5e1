# Globals, input functions and outputs of rules/corrupt.smk.

from vcrbench.core.shards import shard_count  # noqa: E402
from vcrbench.corruptions.adaptive import adaptive_sampling_definition  # noqa: E402
from vcrbench.corruptions.sampling import sampling_definition  # noqa: E402
from vcrbench.evaluation.scoring import stores_images  # noqa: E402

# sampling.spacing adaptive: a scored pilot per corruption decides the uniform draws.
ADAPTIVE = config["sampling"]["spacing"] == "adaptive" and config["sampling"]["mode"] == "uniform"
if ADAPTIVE and config["reva"]["enabled"]:
    raise WorkflowError(
        "sampling.spacing adaptive has no pilot for REVa's weak set yet; use "
        "spacing visual or linear with reva.enabled"
    )
SHARDS = list(range(shard_count(config["sampling"]["n"], config["sampling"]["shard_size"])))
# ImageNet-C severity samples re-saved as JPEG (imagenet_c.jpeg_quality): a key of their rules'
# sampling parameter only when set, so that the default leaves every rule's parameters unchanged.
IC_JPEG = (
    {"jpeg_quality": config["imagenet_c"]["jpeg_quality"]}
    if config["imagenet_c"]["jpeg_quality"] is not None
    else {}
)
# Whether scored shards keep their pixels (scoring.store_images; auto: by the run's size, counted
# as its uniform and ImageNet-C samples).
STORE_IMAGES = stores_images(
    config["scoring"]["store_images"],
    len(CORRUPTIONS) * (config["sampling"]["n"] + config["sampling"]["imagenet_c_n"]),
    IMAGE_SIDE,
)


# One scoring or inference job per corruption (every shard in one process: one start-up, one
# model load) or per shard (jobs.per).
PER_SHARD = config["jobs"]["per"] == "shard"


def job_shards(folder, shards):
    """The shard files of one scoring or inference job in ``folder`` (which keeps its
    wildcards): ``shard-{shard}`` alone (jobs.per: shard) or every shard of ``shards``."""
    if PER_SHARD:
        return [f"{folder}/shard-{{shard}}.parquet"]
    return [f"{folder}/shard-{k}.parquet" for k in shards]


def job_file(path, suffix):
    """The log or benchmark file ``<path>/shard-{shard}<suffix>`` of such a job (jobs.per:
    shard), else ``<path><suffix>``."""
    return f"{path}/shard-{{shard}}{suffix}" if PER_SHARD else f"{path}{suffix}"


def file_count(files):
    """How many files a named input holds (one path, or a list of them)."""
    return 1 if isinstance(files, str) else len(files)


def scoring_runtime(wildcards, input):
    """Minutes a scoring job may take: 120 per shard it scores."""
    return 120 * file_count(input.samples)


def inference_runtime(wildcards, input):
    """Minutes an inference job may take: 120 per shard it classifies."""
    return 120 * file_count(input.scored)


def uniform_definition(wildcards):
    """The registry's sampling definition of a corruption (uniform mode): a rule parameter, so
    that a change to its domains or spacing re-draws exactly that corruption's samples (with
    adaptive spacing also the pilot's settings and M; visual and linear runs' are unchanged)."""
    if ADAPTIVE:
        return adaptive_sampling_definition(
            wildcards.corruption,
            side=IMAGE_SIDE,
            pilot_share=config["sampling"].get("pilot_share"),
            bins=config["binning"]["bins"],
        )
    return sampling_definition(
        wildcards.corruption, "uniform", config["sampling"]["spacing"], side=IMAGE_SIDE
    )


def pilot_file(corruption):
    """The scored pilot of a corruption (sampling.spacing adaptive)."""
    return f"{RESULTS}/pilot/{corruption}.parquet"


def samples_inputs(wildcards):
    """The samples rule's inputs: the index, and the pilot with adaptive spacing only (so that
    visual and linear runs keep their inputs)."""
    inputs = {"index": rules.index.output.index}
    if ADAPTIVE:
        inputs["pilot"] = pilot_file(wildcards.corruption)
    return inputs


def adaptive_outcomes():
    """With adaptive spacing, every corruption's outcomes of the first model (their Δv: a bin a
    sample lands in is reachable, for the summary's note), else none."""
    if not ADAPTIVE:
        return []
    return [f"{RESULTS}/outcomes/{list(MODELS)[0]}/{c}.parquet" for c in CORRUPTIONS]


def pilot_files():
    """Every corruption's pilot with adaptive spacing, else none (coverage table, summary)."""
    return [pilot_file(c) for c in CORRUPTIONS] if ADAPTIVE else []


def sample_shards(folder, shards):
    """The shard files ``<folder>/{corruption}/shard-<k>.parquet`` of one sampling job (the
    corruption stays a wildcard)."""
    return [f"{RESULTS}/{folder}/{{corruption}}/shard-{k}.parquet" for k in shards]


def scored_shards(wildcards):
    """Every scored shard of a corruption."""
    return expand(f"{RESULTS}/scored/{wildcards.corruption}/shard-{{shard}}.parquet", shard=SHARDS)
