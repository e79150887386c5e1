# Config validation, paths and input functions shared by every rule file.
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
# Jobs share cores; spinning OpenMP threads slow each other down badly (see benchmarks/bench_vif.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from vcrbench.config import evaluated_models, model_slug, shard_count, validate_config  # noqa: E402
from vcrbench.corruptions import CORRUPTIONS as REGISTRY  # noqa: E402
from vcrbench.corruptions.sampling import sampling_definition  # noqa: E402
from vcrbench.human_sources import human_assignments, source_name  # noqa: E402
from vcrbench.errors import VcrbenchError  # noqa: E402

try:
    _validated = validate_config(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml")
except VcrbenchError as error:
    raise WorkflowError(f"invalid configuration:\n{error}") from None
config.clear()
config.update(_validated)

RESULTS = f"results/{config['run']}"
CORRUPTIONS = config["corruptions"]
# Evaluated models: folder name -> model string (config models, then fine-tuned ones and bases).
MODELS = {model_slug(name): name for name in evaluated_models(config)}
# Fine-tuning entries by name; (fine-tuned model folder, base model folder) pairs to compare.
FINETUNE = {entry["name"]: entry for entry in config["finetune"]}
# Overlap report (config overlap): role ("standard" or a candidate) -> model string, CE baseline.
OVERLAP = config["overlap"]
OVERLAP_CANDIDATES = OVERLAP["candidates"]
OVERLAP_ROLES = {
    role: (
        OVERLAP["base"]
        if role == "standard" and OVERLAP["standard"] == "base"
        else f"finetuned:overlap-{role}"
    )
    for role in (["standard"] + OVERLAP_CANDIDATES if OVERLAP_CANDIDATES else [])
}
OVERLAP_BASELINE = OVERLAP["baseline"] or OVERLAP["base"]
SLUG = {name: slug for slug, name in MODELS.items()}
RETRAINED = [(model_slug(f"finetuned:{n}"), model_slug(e["base"])) for n, e in FINETUNE.items()]
N_SHARDS = shard_count(config["sampling"]["n"], config["sampling"]["shard_size"])
SHARDS = list(range(N_SHARDS))
# The ImageNet-C severity sample (sampling.imagenet_c_n > 0), for the corruptions that have severities.
IC_N = config["sampling"]["imagenet_c_n"]
IC_CORRUPTIONS = [c for c in CORRUPTIONS if IC_N and REGISTRY[c].imagenet_c_severities is not None]
IC_SHARDS = list(range(shard_count(IC_N, config["sampling"]["shard_size"]))) if IC_N else []
# Human data: corruption -> its config entry; corruption -> (corruption of the curve it uses, source).
HUMAN = {entry["corruption"]: entry for entry in config["human"]}
HUMAN_FOR = human_assignments(config["human"], CORRUPTIONS)
FORMATS = config["figures"]["formats"]
GPU = 0 if config["device"] == "cpu" else 1


wildcard_constraints:
    corruption="|".join(CORRUPTIONS),
    model="|".join(MODELS),
    shard=r"\d+",
    name="|".join(FINETUNE) or "no-finetune-entries",
    epoch=r"[1-9]\d*",


def model_name(wildcards):
    """The configured model string of a model folder name."""
    return MODELS[wildcards.model]


def model_checkpoint(wildcards):
    """The checkpoint a finetuned:<name> model is loaded from (nothing for registry models)."""
    name = MODELS[wildcards.model]
    if not name.startswith("finetuned:"):
        return []
    return f"{RESULTS}/models/{name.partition(':')[2]}/checkpoint.pt"


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


def retraining_keys():
    """(model, corruption) of every replicate table the retraining table reads, in input order."""
    names = dict.fromkeys(MODELS[m] for pair in RETRAINED for m in pair)
    return [(name, c) for name in names for c in CORRUPTIONS]


def retraining_outputs():
    """The retraining table and figure, when the run fine-tunes models."""
    if not FINETUNE:
        return []
    return [
        f"{RESULTS}/metrics/retraining.parquet",
        f"{RESULTS}/metrics/retraining.csv",
        f"{RESULTS}/metrics/retraining.md",
    ] + expand(f"{RESULTS}/figures/retraining.{{fmt}}", fmt=FORMATS)


def overlap_models():
    """The models the overlap report reads (none without overlap candidates)."""
    if not OVERLAP_CANDIDATES:
        return []
    return list(dict.fromkeys([*OVERLAP_ROLES.values(), OVERLAP_BASELINE]))


def overlap_keys():
    """(model, candidate) pairs of the overlap report, in the order of its per-pair inputs."""
    return [(m, c) for m in overlap_models() for c in OVERLAP_CANDIDATES]


def overlap_inputs(kind):
    """Input files of the overlap report: clean predictions per model (overlap_models() order),
    outcomes or bootstrap replicates per (model, candidate) (overlap_keys() order)."""
    if kind == "clean":
        return [f"{RESULTS}/predictions/{SLUG[m]}/clean.parquet" for m in overlap_models()]
    if kind == "outcomes":
        return [f"{RESULTS}/outcomes/{SLUG[m]}/{c}.parquet" for m, c in overlap_keys()]
    return [f"{RESULTS}/curves/{SLUG[m]}/{c}-replicates.parquet" for m, c in overlap_keys()]


def overlap_outputs():
    """The overlap tables, report and heat map, when the run has overlap candidates."""
    if not OVERLAP_CANDIDATES:
        return []
    return [
        f"{RESULTS}/overlap/{table}.parquet" for table in ("robustness", "matrix", "benchmarks", "ce")
    ] + [f"{RESULTS}/overlap/report.md"] + expand(f"{RESULTS}/figures/overlap.{{fmt}}", fmt=FORMATS)


def scored_shards(wildcards):
    return expand(f"{RESULTS}/scored/{wildcards.corruption}/shard-{{shard}}.parquet", shard=SHARDS)


def prediction_shards(wildcards):
    return expand(
        f"{RESULTS}/predictions/{wildcards.model}/{wildcards.corruption}/shard-{{shard}}.parquet",
        shard=SHARDS,
    )


def imagenet_c_shards(kind):
    """Input function: one kind of ImageNet-C shards ("samples", "scored") of a corruption."""

    def shards(wildcards):
        return expand(
            f"{RESULTS}/imagenet-c/{kind}/{wildcards.corruption}/shard-{{shard}}.parquet",
            shard=IC_SHARDS,
        )

    return shards


def imagenet_c_prediction_shards(wildcards):
    return expand(
        f"{RESULTS}/imagenet-c/predictions/{wildcards.model}/{wildcards.corruption}/shard-{{shard}}.parquet",
        shard=IC_SHARDS,
    )


def human_entry(wildcards):
    return HUMAN[wildcards.corruption]


def human_data_files(wildcards):
    """The files of a human data set (so that editing them re-runs its curve)."""
    path = Path(HUMAN[wildcards.corruption]["path"])
    return [str(path)] if path.is_file() else sorted(str(p) for p in path.iterdir() if p.is_file())


def human_stimuli_input(wildcards):
    if HUMAN[wildcards.corruption]["format"] != "model-vs-human":
        return []
    return f"{RESULTS}/human/{wildcards.corruption}-stimuli.parquet"


def human_curve_of(kind):
    """Input function: the human table (kind "" or "-replicates") a corruption is compared with."""

    def table(wildcards):
        return f"{RESULTS}/human/{HUMAN_FOR[wildcards.corruption][0]}{kind}.parquet"

    return table


def model_curves(wildcards):
    return expand(f"{RESULTS}/curves/{{model}}/{wildcards.corruption}.parquet", model=MODELS)


def model_rates(wildcards):
    return expand(f"{RESULTS}/rates/{{model}}/{wildcards.corruption}.parquet", model=MODELS)


def summary_tables():
    return [
        f"{RESULTS}/metrics/summary.parquet",
        f"{RESULTS}/metrics/summary.csv",
        f"{RESULTS}/metrics/summary.md",
    ]


def figure_outputs():
    """Every figure (each format) and the coverage table; the human figures only with human
    data, R against ImageNet-C only with an ImageNet-C sample. All are built from tables."""
    figures = ["dv-histograms", "robustness"]
    if HUMAN_FOR:
        figures += ["human-indices", "human-similarity"]
    if IC_CORRUPTIONS:
        figures += ["r-vs-imagenet-c"]
    return (
        expand(f"{RESULTS}/figures/curves/{{corruption}}.{{fmt}}", corruption=CORRUPTIONS, fmt=FORMATS)
        + expand(f"{RESULTS}/figures/{{figure}}.{{fmt}}", figure=figures, fmt=FORMATS)
        + [f"{RESULTS}/metrics/coverage.md", f"{RESULTS}/metrics/coverage.csv"]
    )


def similarity_outputs():
    """The similarity report, when the run has human data or discrimination trials."""
    if not HUMAN and not config["human_discrimination"]:
        return []
    return [f"{RESULTS}/human/similarity/curves.parquet"]


def all_outputs():
    return (
        summary_tables()
        + similarity_outputs()
        + figure_outputs()
        + retraining_outputs()
        + overlap_outputs()
    )
