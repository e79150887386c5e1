"""Rule prepare_images: decode and prepare every image of an index once (the store)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.data.datasets import index_size  # noqa: E402
from vcrbench.data.prepared import write_store  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "prepare_images") as log:
    index = read_table(snakemake.input.index)
    paths, size = index.column("path").to_pylist(), index_size(index)
    write_store(paths, snakemake.output.images, threads=snakemake.threads, size=size)
    log.info("%d images prepared (size %s) with %d threads", len(paths), size, snakemake.threads)
