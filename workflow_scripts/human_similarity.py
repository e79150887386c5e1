"""Rule human_similarity: overlap of the human curves' 83 % bands and same/different tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.human.similarity import similarity_tables  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "human_similarity") as log:
    tables = similarity_tables(
        {corruption: read_table(path) for corruption, path in snakemake.params.curves.items()},
        snakemake.input.discrimination[0] if snakemake.input.discrimination else None,
    )
    for row in tables["curves"].to_pylist():
        log.info("%s vs %s: 83 %% bands overlap: %s", row["corruption_a"], row["corruption_b"],
                 row["overlap"])
    for name, table in tables.items():
        write_table(table, snakemake.output[name])
