# Globals, input functions and outputs of rules/human.smk.

from vcrbench.human.transfer import human_assignments, source_name  # noqa: E402

# corruption -> its human data entry; corruption -> (corruption of the human curve it is
# compared with: its own or a visually similar one's, that data's source text).
HUMAN = {entry["corruption"]: entry for entry in config["human"]}
HUMAN_FOR = human_assignments(config["human"], CORRUPTIONS)


def human_entry(wildcards):
    return HUMAN[wildcards.corruption]


def human_source_name(wildcards):
    return source_name(HUMAN[wildcards.corruption])


def human_data_files(wildcards):
    """The files of a human data set (so that editing them re-runs its curve)."""
    path = Path(HUMAN[wildcards.corruption]["path"])
    return [str(path)] if path.is_file() else sorted(str(p) for p in path.iterdir() if p.is_file())


def human_stimuli_input(wildcards):
    """The stimuli table of a model-vs-human data set (other formats carry their own Δv)."""
    if HUMAN[wildcards.corruption]["format"] != "model-vs-human":
        return []
    return f"{RESULTS}/human/{wildcards.corruption}-stimuli.parquet"


def human_curve_tables(suffix=""):
    """corruption -> its human table ``human/<c><suffix>.parquet`` (curves; -replicates,
    -metrics), for every corruption with its own human data."""
    return {corruption: f"{RESULTS}/human/{corruption}{suffix}.parquet" for corruption in HUMAN}


def similarity_outputs():
    """The similarity report, when the run has human data or discrimination trials."""
    if not HUMAN and not config["human_discrimination"]:
        return []
    return [f"{RESULTS}/human/similarity/curves.parquet"]


def human_figures():
    """The human curves by similarity class, when some corruption has a human curve."""
    if not HUMAN_FOR:
        return []
    return expand(f"{RESULTS}/figures/human-similarity.{{fmt}}", fmt=FORMATS)
