"""Rule reva_comparison: the training methods' errors with intervals, their signed-rank tests
against the baselines and their VCR robustness side by side, and the Markdown report."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table, write_text  # noqa: E402
from vcrbench.reva.comparison import comparison_tables  # noqa: E402
from vcrbench.reva.inputs import load_comparison_inputs  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "reva_comparison") as log:
    params = snakemake.params
    index = read_table(snakemake.input.index)
    tables, text = comparison_tables(
        methods=load_comparison_inputs(params.inputs, params.methods, index),
        baselines=params.baselines, transfer_from=params.transfer_from, index=index,
        summary=read_table(snakemake.input.summary), seed=params.seed, n_boot=params.n_boot,
        min_units=params.min_units, alternative=params.alternative,
        categories=params.categories,
        training_labels={label: read_table(path, ["label"]).column("label").to_pylist()
                         for label, path in params.training.items()},
        published=params.published,
    )
    log.info("%s", ", ".join(f"{k} {v.num_rows} rows" for k, v in tables.items()))
    for path in snakemake.output.tables:
        write_table(tables[Path(path).name.removesuffix(".parquet")], path)
    write_text(text, snakemake.output.markdown)
