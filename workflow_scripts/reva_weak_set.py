"""Rule reva_weak_set: the pool's robustness scores, their ranking and the weak-robust
validation set (an index like data/index.parquet)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, read_tables, write_table, write_text  # noqa: E402
from vcrbench.reva.selection import select_weak  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "reva_weak_set") as log:
    pool = read_table(snakemake.input.pool)
    resilience = read_tables(snakemake.input.scores).sort_by("image_id")
    params = snakemake.params
    ranking, weak, description = select_weak(resilience, pool, size=params.size,
                                             group_by=params.group_by, draw=params.draw,
                                             seed=params.seed)
    text = f"pool: {params.pool_label}, {pool.num_rows} images\n{description}\n"
    log.info(text.strip())
    write_table(resilience, snakemake.output.resilience)
    write_table(ranking, snakemake.output.ranking)
    write_table(weak, snakemake.output.index)
    write_text(text, snakemake.output.selection)
