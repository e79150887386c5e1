"""Rule prepare_images: decode and prepare every image of an index once (the store)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.data.prepared import write_store  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "prepare_images") as log:
    paths = read_table(snakemake.input.index).column("path").to_pylist()
    write_store(paths, snakemake.output.images, threads=snakemake.threads)
    log.info("%d images prepared with %d threads", len(paths), snakemake.threads)
