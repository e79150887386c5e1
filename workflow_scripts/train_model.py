"""Rule train_model: the trained model (last epoch, without optimiser state) and the training log
of every epoch (Parquet, and CSV to read)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import csv_text, read_tables, write_table, write_text  # noqa: E402
from vcrbench.training.scratch import (  # noqa: E402
    load_state,
    read_state_file,
    save_state,
    scratch_log,  # noqa: E402
)

with job(snakemake.log[0], snakemake.threads, "train_model") as log:
    state = load_state(snakemake.input.last)
    data = read_state_file(snakemake.input.last).get("data", {})
    save_state(state, snakemake.output.model, data=data, optimizer=False)
    table = scratch_log(read_tables(list(snakemake.input.log_rows)).to_pylist())
    write_table(table, snakemake.output.training_log)
    write_text(csv_text(table), snakemake.output.csv)
    log.info("%d epochs; last: %s", table.num_rows, table.to_pylist()[-1])
