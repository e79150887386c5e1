# Globals, input functions and outputs of rules/overlap.smk.

from vcrbench.overlap.config import baseline, report_models, roles  # noqa: E402

OVERLAP = config["overlap"]
OVERLAP_TABLES = ["robustness", "gains", "matrix", "matrix_replicates", "benchmarks", "ce"]


def overlap_tables(kind):
    """model -> corruption -> the ``<kind>`` table ("outcomes" or "replicates") of every model
    and candidate of the report."""
    return {
        model: {
            c: (
                f"{RESULTS}/outcomes/{SLUG[model]}/{c}.parquet"
                if kind == "outcomes"
                else f"{RESULTS}/curves/{SLUG[model]}/{c}-replicates.parquet"
            )
            for c in OVERLAP["candidates"]
        }
        for model in report_models(OVERLAP)
    }


def overlap_classes():
    """The property the report reads: 16 (ImageNet's categories) or the data set's own count
    (overlap.classes 1000: 1000 on ImageNet, 10 on CIFAR-10)."""
    return 16 if OVERLAP["classes"] == 16 else LABEL_SPACE.classes


def overlap_clean_predictions():
    """model -> its clean predictions, for every model of the report."""
    return {
        model: f"{RESULTS}/predictions/{SLUG[model]}/clean.parquet"
        for model in report_models(OVERLAP)
    }


def overlap_outputs():
    """The overlap tables, report and heat map, when the run has overlap candidates."""
    if not OVERLAP["candidates"]:
        return []
    return [*rules.overlap_report.output, *rules.figure_overlap.output]
