"""Rule openclip_text_embeddings: an openclip: model's text embeddings of the 1000 class
prompts, encoded once for every prediction job of the model."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.models.openclip_zoo import write_text_embeddings  # noqa: E402
from vcrbench.models.registry import parse_model_name  # noqa: E402

with job(snakemake.log[0], snakemake.threads, snakemake.rule) as log:
    table = write_text_embeddings(parse_model_name(snakemake.params.model),
                                  snakemake.output.embeddings)
    log.info("%s: %d class prompts encoded, %d dimensions", snakemake.params.model,
             table.num_rows, table.column("embedding").type.list_size)
