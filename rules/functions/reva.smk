# Globals, input functions and outputs of rules/reva.smk.

from vcrbench.evaluation.samples import IMAGENET_C_LEVELS  # noqa: E402
from vcrbench.reva.categories import category_of  # noqa: E402
from vcrbench.reva.config import SETS, TRAINED_POOL, reva_plan  # noqa: E402
from vcrbench.reva.selection import SET_NAMES  # noqa: E402

REVA = config["reva"]
#: What the figures call the set part 1 selects: the weak-robust set or a random baseline.
REVA_SET_NAME = SET_NAMES[REVA["weak"]["draw"]]
REVA_DIR = f"{RESULTS}/reva"
# Set sizes, attacks and the pool's origin, resolved before any job (vcrbench.reva.config).
REVA_PLAN = reva_plan(config) if REVA["enabled"] else None
REVA_POOL_SHARDS = (
    list(range(shard_count(REVA_PLAN.pool_size, REVA["analyser"]["shard_size"])))
    if REVA_PLAN
    else []
)
# The ImageNet-C severity sample of both sets: every weak image at the five severities, and as
# many samples of the evaluation set (all of it at every severity when the sizes agree).
REVA_IC_N = IMAGENET_C_LEVELS * REVA_PLAN.weak_size if REVA_PLAN else 0
REVA_IC_SHARDS = (
    list(range(shard_count(REVA_IC_N, config["sampling"]["shard_size"]))) if REVA_PLAN else []
)
REVA_IC_CORRUPTIONS = (
    [c for c in CORRUPTIONS if REGISTRY[c].imagenet_c_severities is not None]
    if REVA_PLAN and REVA["imagenet_c"]
    else []
)
REVA_ATTACKS = list(REVA_PLAN.attacks) if REVA_PLAN else []
# The models part 1 validates (reva.models; all of the run's by default): slug -> name.
REVA_MODELS = {
    slug: name
    for slug, name in MODELS.items()
    if REVA_PLAN and (REVA_PLAN.validated is None or name in REVA_PLAN.validated)
}
REVA_TABLES = ["errors", "relative-errors", "groups", "r-weak-vs-all"]
# The comparison of training methods (reva.comparison; None: not configured).
REVA_COMPARISON = REVA_PLAN.comparison if REVA_PLAN else None
REVA_COMPARISON_TABLES = ["errors", "tests", "vcr"]


wildcard_constraints:
    set="|".join(SETS),
    attack="|".join(REVA_ATTACKS) or "no-attacks",
    poolshard=r"\d+",
    crafter="|".join(MODELS),


def reva_pool_index():
    """The pool's index: the evaluation index, a fine-tuning entry's training index, a train
    entry's training index with ids distinct from the evaluation ids (rule
    reva_pool_from_train), or the pool index built from reva.train."""
    if REVA_PLAN is None or REVA_PLAN.pool_source == "evaluation":
        return f"{RESULTS}/data/index.parquet"
    if REVA_PLAN.pool_source.startswith("finetune:"):
        return f"{RESULTS}/models/{REVA_PLAN.pool_source.partition(':')[2]}/train-index.parquet"
    if REVA_PLAN.pool_source.startswith(TRAINED_POOL):
        return f"{REVA_DIR}/pool/train-index.parquet"
    return f"{REVA_DIR}/pool/index.parquet"


def reva_train_entry_index(wildcards):
    """The training index of the train entry reva.from_train."""
    return f"{RESULTS}/models/{REVA['from_train']}/train-index.parquet"


def reva_set_index(wildcards):
    """The index of set ``weak`` or ``evaluation``."""
    if wildcards.set == "weak":
        return f"{REVA_DIR}/weak/index.parquet"
    return f"{RESULTS}/data/index.parquet"


def reva_ranking_checkpoint(wildcards):
    """The checkpoint of the ranking model when it is fine-tuned or trained here (else
    nothing)."""
    name = REVA_PLAN.ranking_model
    kind, _, target = name.partition(":")
    if kind == "finetuned":
        return f"{RESULTS}/models/{target}/checkpoint.pt"
    if kind == "trained" and not target.endswith(".pt"):
        return f"{RESULTS}/models/{target}/model.pt"
    return []


def reva_categories():
    """corruption -> its REVa category (ImageNet-C's, else the registry's visual class)."""
    return {c: category_of(c, REGISTRY[c].visual_class) for c in CORRUPTIONS}


def reva_attack_settings(wildcards):
    """An attack's parameters (its defaults with reva.attacks.settings applied)."""
    return REVA_PLAN.attacks[wildcards.attack]


def reva_attack_source(wildcards):
    """The folder name of the model an attack on ``wildcards.model`` is crafted on."""
    return SLUG[REVA_PLAN.source] if REVA_PLAN.source else wildcards.model


def reva_attack_shard(wildcards):
    """The adversarial images a model is evaluated on (its own, or the transfer source's)."""
    source = reva_attack_source(wildcards)
    return f"{REVA_DIR}/{wildcards.set}/attacks/{source}/{wildcards.attack}.parquet"


def reva_weak_shards(kind):
    """Input function: the weak set's ``kind`` shards ("scored", or "predictions" of the
    model) of a corruption's uniform sample."""

    def shards(wildcards):
        model = [wildcards.model] if kind == "predictions" else []
        folder = os.path.join(REVA_DIR, "weak", kind, *model, wildcards.corruption)
        return expand(f"{folder}/shard-{{shard}}.parquet", shard=SHARDS)

    return shards


def reva_clean_predictions(set_name, slug):
    """A model's clean predictions on a set."""
    if set_name == "weak":
        return f"{REVA_DIR}/weak/predictions/{slug}/clean.parquet"
    return f"{RESULTS}/predictions/{slug}/clean.parquet"


def reva_inputs(slugs=None):
    """model folder -> every table the REVa report reads for that model (a named mapping passed
    to the script as a parameter and listed as input; vcrbench.reva.inputs reads it), for the
    model folders ``slugs`` (default: the validated models, REVA_MODELS)."""

    def source(slug):
        return SLUG[REVA_PLAN.source] if REVA_PLAN.source else slug

    def ic_shards(s, slug, c):
        folder = f"{REVA_DIR}/{s}/imagenet-c"
        return {
            kind: [f"{folder}/{kind}/{sub}{c}/shard-{k}.parquet" for k in REVA_IC_SHARDS]
            for kind, sub in (("samples", ""), ("scored", ""), ("predictions", f"{slug}/"))
        }

    return {
        slug: {
            "imagenet_c": {
                s: {c: ic_shards(s, slug, c) for c in REVA_IC_CORRUPTIONS} for s in SETS
            },
            "attacks": {
                s: {
                    a: {
                        "scored": f"{REVA_DIR}/{s}/attacks/{source(slug)}/{a}.parquet",
                        "predictions": f"{REVA_DIR}/{s}/attack-predictions/{slug}/{a}.parquet",
                    }
                    for a in REVA_ATTACKS
                }
                for s in SETS
            },
            "curves": {
                c: {
                    "weak_metrics": f"{REVA_DIR}/weak/metrics/{slug}/{c}.parquet",
                    "weak_replicates": f"{REVA_DIR}/weak/curves/{slug}/{c}-replicates.parquet",
                    "evaluation_metrics": f"{RESULTS}/metrics/{slug}/{c}.parquet",
                    "evaluation_replicates": f"{RESULTS}/curves/{slug}/{c}-replicates.parquet",
                }
                for c in CORRUPTIONS
            },
            "clean": {s: reva_clean_predictions(s, slug) for s in SETS},
        }
        for slug in (REVA_MODELS if slugs is None else slugs)
    }


def reva_crafted_predictions(crafter, slug, attack):
    """A model's predictions of the evaluation images' attack crafted on model folder
    ``crafter``: the REVa report's own where that model is shown those images anyway, else
    the comparison's (rule reva_predict_crafted)."""
    shown = SLUG[REVA_PLAN.source] if REVA_PLAN.source else slug
    if shown == crafter:
        return f"{REVA_DIR}/evaluation/attack-predictions/{slug}/{attack}.parquet"
    return f"{REVA_DIR}/evaluation/crafted-on/{crafter}/predictions/{slug}/{attack}.parquet"


def reva_comparison_inputs():
    """method label -> the tables the comparison reads for it on the evaluation images (a
    named mapping passed to the script and listed as input; vcrbench.reva.inputs reads it):
    clean predictions, ImageNet-C shards, white-box and transferred attacks."""
    source = SLUG[REVA_COMPARISON.source_model] if REVA_COMPARISON.source_model else None

    def attacks(crafter, slug):
        return {
            a: {
                "scored": f"{REVA_DIR}/evaluation/attacks/{crafter}/{a}.parquet",
                "predictions": reva_crafted_predictions(crafter, slug, a),
            }
            for a in REVA_COMPARISON.attacks
        }

    def ic_shards(slug, c):
        folder = f"{REVA_DIR}/evaluation/imagenet-c"
        return {
            kind: [f"{folder}/{kind}/{sub}{c}/shard-{k}.parquet" for k in REVA_IC_SHARDS]
            for kind, sub in (("samples", ""), ("scored", ""), ("predictions", f"{slug}/"))
        }

    inputs = {}
    for label, model in REVA_COMPARISON.methods.items():
        slug = SLUG[model]
        inputs[label] = {
            "clean": reva_clean_predictions("evaluation", slug),
            "imagenet_c": {c: ic_shards(slug, c) for c in REVA_IC_CORRUPTIONS},
            "white_box": attacks(slug, slug),
            "transfer": attacks(source, slug) if source else {},
        }
    return inputs


def reva_one_model(wildcards):
    """slug -> name of the one model of a per-model REVa report."""
    return {wildcards.model: MODELS[wildcards.model]}


def reva_model_inputs(wildcards):
    """The tables the REVa report reads for one model (as reva_inputs())."""
    return reva_inputs([wildcards.model])


def reva_model_files(wildcards):
    """Every file of :func:`reva_model_inputs`."""
    return nested_files(reva_model_inputs(wildcards))


def nested_files(nested):
    """Every path in a nested mapping of paths and lists of paths."""
    if isinstance(nested, dict):
        return [path for value in nested.values() for path in nested_files(value)]
    if isinstance(nested, list):
        return list(nested)
    return [nested]


def reva_figures():
    """The REVa figures, when reva.enabled (and the comparison's, when configured)."""
    if REVA_PLAN is None:
        return []
    comparison = rules.figure_reva_comparison.output if REVA_COMPARISON else []
    return [
        *rules.figure_reva_scores.output,
        *rules.figure_reva_weak_vs_all.output,
        *rules.figure_reva_relative_errors.output,
        *comparison,
    ]


def reva_outputs():
    """The REVa tables, report and figures, when reva.enabled (and the comparison's tables and
    report, when reva.comparison is configured)."""
    if REVA_PLAN is None:
        return []
    comparison = rules.reva_comparison.output if REVA_COMPARISON else []
    return [*rules.reva_report.output, *comparison, *reva_figures()]
