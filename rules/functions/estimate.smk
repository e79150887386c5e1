# Globals, input functions and outputs of rules/estimate.smk.


def model_tables(kind):
    """Function of the wildcards: model name -> its ``<kind>/<m>/<corruption>.parquet`` (kind
    "curves" or "rates") for the corruption of the wildcards."""

    def tables(wildcards):
        return {
            name: f"{RESULTS}/{kind}/{slug}/{wildcards.corruption}.parquet"
            for slug, name in MODELS.items()
        }

    return tables


def model_table_files(kind):
    """Input function: the files of :func:`model_tables`."""

    def files(wildcards):
        return list(model_tables(kind)(wildcards).values())

    return files


def human_curve_of(suffix):
    """Input function: the human table ``human/<c><suffix>.parquet`` a corruption is compared
    with (its own data or a visually similar corruption's), nothing without one."""

    def table(wildcards):
        if wildcards.corruption not in HUMAN_FOR:
            return []
        return f"{RESULTS}/human/{HUMAN_FOR[wildcards.corruption][0]}{suffix}.parquet"

    return table


def human_source(wildcards):
    """Whose human data a corruption is compared with ("" without)."""
    return HUMAN_FOR.get(wildcards.corruption, (None, ""))[1]


def curve_figures():
    """The curve figure of every corruption."""
    return expand(
        f"{RESULTS}/figures/curves/{{corruption}}.{{fmt}}", corruption=CORRUPTIONS, fmt=FORMATS
    )
