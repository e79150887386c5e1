# Globals, input functions and outputs of rules/summary.smk.

from vcrbench.vcr.summary import label_space_note  # noqa: E402

SUMMARY = f"{RESULTS}/metrics/summary.parquet"


def summary_outputs():
    """The summary as Parquet (the table other stages read), CSV and Markdown (called from the
    Snakefile's targets, once every rule is defined)."""
    return list(rules.summary.output)


def summary_figures():
    """The figures and the HTML tables made from the summary (human and ImageNet-C figures
    only when the run has those data)."""
    made = [rules.summary_html, rules.figure_robustness, rules.coverage_table]
    if HUMAN_FOR:
        made.append(rules.figure_human_indices)
    if IC_CORRUPTIONS:
        made.append(rules.figure_r_vs_imagenet_c)
    return [path for rule in made for path in rule.output]
