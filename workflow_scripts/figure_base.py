"""Rule figure_base: the template of every figure rule, never a job of its own. Asking for its
output (results/<run>/figures/.figure-base) explains that and stops."""

raise SystemExit(
    "figure_base is the template of the figure rules (use rule figure_base as figure_<x>), not a "
    "figure: ask for a figure, e.g. `snakemake figures`"
)
