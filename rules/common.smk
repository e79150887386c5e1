# Config validation, paths and input functions shared by every rule file.
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
# Jobs share cores; spinning OpenMP threads slow each other down badly (see benchmarks/bench_vif.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from vcrbench.config import model_slug, shard_count, validate_config  # noqa: E402
from vcrbench.errors import VcrbenchError  # noqa: E402

try:
    _validated = validate_config(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml")
except VcrbenchError as error:
    raise WorkflowError(f"invalid configuration:\n{error}") from None
config.clear()
config.update(_validated)

RESULTS = f"results/{config['run']}"
CORRUPTIONS = config["corruptions"]
MODELS = {model_slug(name): name for name in config["models"]}
N_SHARDS = shard_count(config["sampling"]["n"], config["sampling"]["shard_size"])
SHARDS = list(range(N_SHARDS))
FORMATS = config["figures"]["formats"]
GPU = 0 if config["device"] == "cpu" else 1


wildcard_constraints:
    corruption="|".join(CORRUPTIONS),
    model="|".join(MODELS),
    shard=r"\d+",


def model_name(wildcards):
    """The configured model string of a model folder name."""
    return MODELS[wildcards.model]


def scored_shards(wildcards):
    return expand(f"{RESULTS}/scored/{wildcards.corruption}/shard-{{shard}}.parquet", shard=SHARDS)


def prediction_shards(wildcards):
    return expand(
        f"{RESULTS}/predictions/{wildcards.model}/{wildcards.corruption}/shard-{{shard}}.parquet",
        shard=SHARDS,
    )


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
    return (
        expand(f"{RESULTS}/figures/curves/{{corruption}}.{{fmt}}", corruption=CORRUPTIONS, fmt=FORMATS)
        + expand(f"{RESULTS}/figures/dv-histograms.{{fmt}}", fmt=FORMATS)
        + expand(f"{RESULTS}/figures/robustness.{{fmt}}", fmt=FORMATS)
    )


def all_outputs():
    return summary_tables() + figure_outputs()
