# Globals, input functions and outputs of rules/summary.smk.

SUMMARY = f"{RESULTS}/metrics/summary.parquet"


def summary_outputs():
    """The summary as Parquet (the table other stages read), CSV and Markdown."""
    return [SUMMARY, f"{RESULTS}/metrics/summary.csv", f"{RESULTS}/metrics/summary.md"]


def summary_figures():
    """The figures and the coverage table made from the summary (human and ImageNet-C figures
    only when the run has those data)."""
    figures = ["robustness"]
    if HUMAN_FOR:
        figures.append("human-indices")
    if IC_CORRUPTIONS:
        figures.append("r-vs-imagenet-c")
    return expand(f"{RESULTS}/figures/{{figure}}.{{fmt}}", figure=figures, fmt=FORMATS) + [
        f"{RESULTS}/metrics/coverage.md",
        f"{RESULTS}/metrics/coverage.csv",
    ]
