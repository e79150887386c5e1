"""One corruption's samples under one sampling design, drawn and scored by the pipeline's own
stage functions (shared by the benchmarks that compare designs).

``adaptive`` first scores its pilot as the workflow's rule pilot does
(:func:`vcrbench.corruptions.adaptive.pilot_design` on
:func:`vcrbench.evaluation.samples.pilot_samples`); every design then draws its shards with
:func:`vcrbench.evaluation.samples.make_samples` and scores them with
:func:`vcrbench.evaluation.scoring.score_shard`, as the rules samples and score do.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from vcrbench.core.shards import shard_count
from vcrbench.corruptions import adaptive
from vcrbench.evaluation.samples import make_samples, pilot_samples
from vcrbench.evaluation.scoring import score_shard


def adaptive_pilot(image_ids: list[str], clean, corruption: str, *, seed: int, n: int,
                   side: int = 224, share: float = adaptive.PILOT_SHARE, bins: int = 40,
                   small_images: str = "enlarge") -> tuple[dict, dict]:
    """Score the pilot of ``corruption`` for a run of ``n`` samples on ``clean`` (a prepared
    store, :class:`~vcrbench.data.prepared.DecodedImages` or an index table): the keyword
    arguments that make :func:`make_samples` draw from it (``pilot``, ``bins``), and
    ``{"dv": (pilot samples,) Δv, "seconds": scoring time}``."""
    start = time.perf_counter()

    def score(points, first):
        table = pilot_samples(image_ids, corruption, seed=seed, points=points, first=first)
        return score_shard(table, clean, store_images=False,
                           small_images=small_images).column("dv").to_numpy()

    columns = adaptive.pilot_design(corruption, seed, n, score, side=side, share=share,
                                    bins=bins)
    return ({"pilot": adaptive.pilot_table(columns), "bins": bins},
            {"dv": np.asarray(columns["dv"]), "seconds": time.perf_counter() - start})


def scored_shards(image_ids: list[str], clean, corruption: str, *, seed: int, n: int,
                  spacing: str, mode: str = "uniform", side: int = 224, shard_size: int = 250,
                  store_images: bool = False, small_images: str = "enlarge", **pilot
                  ) -> Iterator[tuple[pa.Table, pa.Table]]:
    """``(samples, scored)`` of every shard of ``n`` samples, in order; ``pilot``: the
    keyword arguments of :func:`adaptive_pilot` for ``spacing`` adaptive."""
    for shard in range(shard_count(n, shard_size)):
        samples = make_samples(image_ids, corruption, seed=seed, mode=mode, n=n,
                               shard_size=shard_size, shard=shard, spacing=spacing, side=side,
                               **pilot)
        yield samples, score_shard(samples, clean, store_images=store_images,
                                   small_images=small_images)
