"""Rule human_stimuli: Δv of a model-vs-human experiment's conditions on the run's images."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.human.stimuli import stimuli_for_run  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "human_stimuli") as log:
    entry = snakemake.params.entry
    stimuli = stimuli_for_run(
        read_table(snakemake.input.index),
        entry["path"],
        seed=snakemake.params.seed,
        n_images=entry["stimulus_images"],
        vif_precision=snakemake.params.vif["precision"],
    )
    log.info("%d condition x image Δv values", stimuli.num_rows)
    write_table(stimuli, snakemake.output.stimuli)
