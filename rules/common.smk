# What every stage needs: the validated config, the results folder, the corruptions and models
# of the run and their wildcards, and the report files of a figure. Each stage owns the rest:
# its rules in rules/<stage>.smk, its globals, input functions and *_outputs() in
# rules/functions/<stage>.smk (included by the stage file). Files are included in the
# Snakefile's order, and a file uses only what an earlier one defines.
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
# Jobs share cores; spinning OpenMP threads slow each other down badly
# (see benchmarks/bench_vif.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# Batch-sized tensors from the heap, reused from batch to batch (vcrbench.core.allocator).
from vcrbench.core.allocator import set_job_allocator  # noqa: E402

set_job_allocator()

from vcrbench.errors import VcrbenchError  # noqa: E402
from vcrbench.host import check_torch  # noqa: E402

# The host's torch / torchvision first (a cluster's own PyTorch may be too old), before
# anything imports them.
try:
    check_torch()
except VcrbenchError as error:
    raise WorkflowError(str(error)) from None

from vcrbench.config import evaluated_models, model_slug, validate_config  # noqa: E402
from vcrbench.corruptions import CORRUPTIONS as REGISTRY  # noqa: E402
from vcrbench.data.datasets import dataset_side, label_space  # noqa: E402
from vcrbench.data.prepared import store_path  # noqa: E402

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
SLUG = {name: slug for slug, name in MODELS.items()}
FORMATS = config["figures"]["formats"]
# The dataset's label space (ImageNet-1k, CIFAR-10, CIFAR-100) and the side of its prepared
# images (224, or the native size, e.g. 32 for CIFAR).
LABEL_SPACE = label_space(config["dataset"])
IMAGE_SIDE = dataset_side(config["dataset"])
GPU = 0 if config["device"] == "cpu" else 1


onstart:
    # device: cuda asked for on a host whose torch sees no GPU: said before any job starts (a
    # cluster's jobs run on its GPU nodes, not here, so only local execution is checked)
    if workflow.local_exec and config["device"] not in ("auto", "cpu"):
        from vcrbench.models.inference import resolve_device

        try:
            resolve_device(config["device"])
        except VcrbenchError as error:
            raise WorkflowError(f"{error} (no job was started)") from None


# Weights before any job (dry runs too): a model whose clean predictions are not made yet needs
# its weight files in place now; a finished model's figures and tables need none.
if workflow.is_main_process:
    from vcrbench.models.weights import missing_weights_report  # noqa: E402

    _missing = missing_weights_report(
        name
        for slug, name in MODELS.items()
        if not Path(f"{RESULTS}/predictions/{slug}/clean.parquet").is_file()
    )
    if _missing:
        raise WorkflowError("model weights are missing (no job has run):\n" + "\n\n".join(_missing))


wildcard_constraints:
    corruption="|".join(CORRUPTIONS),
    model="|".join(MODELS),
    shard=r"\d+",


def model_name(wildcards):
    """The configured model string of a model folder name."""
    return MODELS[wildcards.model]


def prepared(index):
    """The prepared-image store (rule prepare_images) of an index file, or an input function
    giving it for an input function that gives an index file."""
    if not callable(index):
        return store_path(index)

    def store_of(wildcards):
        return store_path(index(wildcards))

    return store_of


def files_of(nested):
    """The paths of a nested mapping (e.g. model -> corruption -> path), in order: the input
    files of a rule that passes its script the mapping itself as a parameter."""
    return [path for by in nested.values() for path in by.values()]


#: The report's categories in reading order, those of this run only: Snakemake sorts them by
#: name, so each name starts with its position.
REPORT_CATEGORIES = {
    name: f"{i}. {name}"
    for i, name in enumerate(
        [
            name
            for name, present in (
                ("Summary", True),
                ("Robustness curves", True),
                ("Human comparison", bool(config["human"])),
                (
                    "ImageNet-C comparison",
                    bool(config["sampling"]["imagenet_c_n"])
                    and any(REGISTRY[c].imagenet_c_severities for c in CORRUPTIONS),
                ),
                ("Visual change coverage", True),
                ("Fine-tuning", bool(config["finetune"])),
                ("Corruption overlap", bool(config["overlap"]["candidates"])),
                ("Weak-robust validation", bool(config["reva"]["enabled"])),
            )
            if present
        ],
        start=1,
    )
}
#: The one format of a figure shown in the report: PNG where the run makes it (browsers show
#: it inline; a PDF pane is blank in some and a plug-in in others). Other formats stay on disk.
REPORT_FORMAT = "png" if "png" in FORMATS else FORMATS[0]


def report_item(path, category, caption, **labels):
    """``path`` as a report item of a category of :data:`REPORT_CATEGORIES` (a category this
    run has no data for keeps its plain name: none of its items is made)."""
    return report(
        path,
        caption=f"../report/{caption}.rst",
        category=REPORT_CATEGORIES.get(category, category),
        labels=labels,
    )


def report_figures(name, category, label, caption=None, **labels):
    """The output files of figure ``figures/<name>.<fmt>`` (every configured format); the
    :data:`REPORT_FORMAT` one is a report item with caption ``report/<caption>.rst`` (default:
    the name with '_' for '-')."""
    caption = caption or name.replace("-", "_")
    if label:
        labels["figure"] = label
    files = []
    for fmt in FORMATS:
        path = f"{RESULTS}/figures/{name}.{fmt}"
        files.append(
            report_item(path, category, caption, **labels) if fmt == REPORT_FORMAT else path
        )
    return files
