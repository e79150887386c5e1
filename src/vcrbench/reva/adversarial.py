"""Adversarial versions of an image set, stored like a scored shard.

One table per (set, crafting model, attack): the schema of ``scored/<c>/shard-<k>.parquet``
(:mod:`vcrbench.evaluation.scoring`): ``sample_id`` (the image's row in the set's index),
``image_id``, ``vif``, ``dv`` (so attacks sit on the Δv axis next to the corruptions),
``checksum`` and the lossless adversarial pixels, which every evaluated model then classifies
with the same rule as any corrupted image (white-box when it crafted them, transfer otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from vcrbench.errors import VcrbenchError


def adversarial_shard(
    index: pa.Table,
    model,
    attack: str,
    settings: Mapping[str, float],
    *,
    seed: int,
    batch_size: int = 32,
    vif_precision: str = "fast",
    vif_batch_size: int = 32,
    device: str = "cpu",
    small_images: str = "enlarge",
) -> pa.Table:
    """Attack every image of ``index`` through ``model`` (a loaded model) and score the result.

    The images are loaded at the index's size (224, or native: :func:`~vcrbench.data.datasets.
    index_size`); ``small_images`` scores Δv of images too small for the paper's VIF
    (``scoring.small_images``).

    Raises :class:`VcrbenchError` when an image has no label (an untargeted attack needs it).
    """
    from vcrbench.attacks import attack_images, forward_of
    from vcrbench.data.datasets import index_size, load_images
    from vcrbench.evaluation.scoring import score_images

    labels = index.column("label").to_numpy().astype(np.int64)
    ids = index.column("image_id").to_pylist()
    if (labels < 0).any():
        missing = [i for i, label in zip(ids, labels, strict=True) if label < 0]
        raise VcrbenchError(f"attack {attack}: images without a label cannot be attacked "
                            f"(untargeted attacks need the true class): {missing[:5]}")
    clean = load_images(index.column("path").to_pylist(), index_size(index))
    adversarial = attack_images(attack, forward_of(model), clean, labels, image_ids=ids,
                                seed=seed, params=dict(settings), batch_size=batch_size,
                                device=device)
    return score_images(np.arange(len(ids)), ids, clean, adversarial,
                        vif_precision=vif_precision, batch_size=vif_batch_size, device=device,
                        small_images=small_images)
