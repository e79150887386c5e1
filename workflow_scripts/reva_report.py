"""Rule reva_report: errors, relative errors, robust / non-robust groups and R on the weak set
against R on all images, for every model, and the Markdown report."""

import sys
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table, write_text  # noqa: E402
from vcrbench.reva.inputs import load_model_inputs  # noqa: E402
from vcrbench.reva.report import reva_tables  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "reva_report") as log:
    params = snakemake.params
    indexes = {"weak": read_table(snakemake.input.weak),
               "evaluation": read_table(snakemake.input.evaluation)}
    selection = Path(snakemake.input.selection).read_text(encoding="utf-8").strip()
    tables, texts = {}, []
    for slug, model in params.models.items():
        inputs = load_model_inputs(params.inputs[slug], indexes)
        made, text = reva_tables(
            model=model, seed=params.seed, n_boot=params.n_boot, min_units=params.min_units,
            weak_index=indexes["weak"], evaluation_index=indexes["evaluation"],
            groups=params.groups, categories=params.categories, description=selection,
            draw=params.draw,
            **inputs,
        )
        for name, table in made.items():
            tables.setdefault(name, []).append(table)
        texts.append(text)
        log.info("%s: %s", model, ", ".join(f"{k} {v.num_rows} rows" for k, v in made.items()))
    for path in snakemake.output.tables:
        name = Path(path).name.removesuffix(".parquet")
        write_table(pa.concat_tables(tables[name]), path)
    write_text("\n\n".join(texts) + "\n", snakemake.output.markdown)
