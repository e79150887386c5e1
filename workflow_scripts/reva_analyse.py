"""Rule reva_analyse: Algorithm 1 on one shard of the pool: the ranking model on N keyed
neighbours of each image, reduced to the robustness scores (Eq. 1)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.shards import shard_range  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.models import load_model, resolve_device  # noqa: E402
from vcrbench.reva.analyser import analyse_pool  # noqa: E402
from vcrbench.reva.resilience import resilience_table  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "reva_analyse") as log:
    params = snakemake.params
    analyser = params.analyser
    pool = read_table(snakemake.input.index)
    rows = shard_range(int(snakemake.wildcards.poolshard), pool.num_rows, analyser["shard_size"])
    shard = pool.slice(rows.start, len(rows))
    device = resolve_device(params.device)
    model = load_model(params.model, device, models_dir=params.models_dir)
    clean, neighbours = analyse_pool(
        shard, model, epsilon=analyser["epsilon"], n=analyser["neighbours"], seed=params.seed,
        batch_size=params.inference["batch_size"], precision=params.inference["precision"],
        device=device, engine=params.inference["engine"],
        cache_dir=params.inference["cache_dir"] or f"{params.models_dir}/engine-cache",
    )
    scores = resilience_table(shard, clean, neighbours, pool=params.pool,
                              score=analyser["score"],
                              unstable_fraction=analyser["unstable_fraction"])
    log.info("%s: %d pool images x %d neighbours (eps %.4g) on %s", params.model,
             shard.num_rows, analyser["neighbours"], analyser["epsilon"], device)
    write_table(scores, snakemake.output.scores)
