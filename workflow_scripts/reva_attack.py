"""Rule reva_attack: adversarial versions of one image set, crafted on one model, stored with
their VIF and Δv like a scored shard."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.models import load_model, resolve_device  # noqa: E402
from vcrbench.reva.adversarial import adversarial_shard  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "reva_attack") as log:
    params = snakemake.params
    device = resolve_device(params.device)
    model = load_model(params.model, device, models_dir=params.models_dir)
    attack = snakemake.wildcards.attack
    scored = adversarial_shard(
        read_table(snakemake.input.index), model, attack, params.settings, seed=params.seed,
        batch_size=params.batch_size, vif_precision=params.vif["precision"],
        vif_batch_size=params.vif["batch_size"], device=device,
    )
    dv = scored.column("dv").to_numpy()
    log.info("%s on %s (%s): %d images, median dv %.3f", attack, params.model,
             params.settings, scored.num_rows, float(sorted(dv)[len(dv) // 2]) if len(dv) else 0)
    write_table(scored, snakemake.output.scored)
