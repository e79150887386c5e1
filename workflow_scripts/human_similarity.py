"""Rule human_similarity: simultaneous tests of the human curves' differences and same/different
tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.human.similarity import HumanCurve, similarity_tables  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "human_similarity") as log:
    params = snakemake.params
    tables = similarity_tables(
        {corruption: HumanCurve.from_tables(corruption, read_table(path),
                                            read_table(params.replicates[corruption]),
                                            read_table(params.metrics[corruption]))
         for corruption, path in params.curves.items()},
        snakemake.input.discrimination[0] if snakemake.input.discrimination else None,
    )
    for row in tables["curves"].to_pylist():
        log.info("%s vs %s on Δv [%s, %s]: similar %s (p = %s)%s", row["corruption_a"],
                 row["corruption_b"], row["v_min"], row["v_max"], row["similar"], row["p_value"],
                 f"; {row['note']}" if row["note"] else "")
    for name, table in tables.items():
        write_table(table, snakemake.output[name])
