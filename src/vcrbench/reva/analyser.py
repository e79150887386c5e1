"""Algorithm 1's model run: N keyed neighbours of every pool image, classified by the model.

Neighbour ``i`` of image ``x`` is ``x'_i = clip(x + u)``, ``u ~ U[−ε, ε)`` i.i.d. per pixel
and channel on the [0, 1] scale: exactly the registry's ``uniform_noise`` with ``width = ε``
(:func:`vcrbench.corruptions.noise.uniform_noise`), quantised to uint8 like every corrupted
image of the pipeline (so ``|x'_i − x| ≤ ε`` before rounding, ``≤ ε + 0.5/255`` after). Its
noise seed is ``noise_seed(seed, "reva-neighbour/<image_id>", i)``: keyed by the image and the
neighbour number only, so a neighbour's pixels do not depend on the shard, the batch or the
device, and a neighbour is the same image for every model.

The model sees the neighbours as it sees any stored image (:func:`vcrbench.models.predict`),
and the per-neighbour decisions are reduced to the scores of :mod:`vcrbench.reva.resilience`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.core.progress import Progress
from vcrbench.core.seeding import noise_seed
from vcrbench.reva.config import NEIGHBOUR_KEY

#: Images whose neighbours are made and classified together (memory: images × N × 150 kB).
CHUNK_IMAGES = 8


def neighbour_seeds(seed: int, image_id: str, n: int) -> list[int]:
    """The noise seeds of the ``n`` neighbours of one image."""
    return [noise_seed(seed, f"{NEIGHBOUR_KEY}/{image_id}", i) for i in range(n)]


def make_neighbours(clean: np.ndarray, image_id: str, *, epsilon: float, n: int, seed: int,
                    device: str = "cpu") -> np.ndarray:
    """The ``n`` neighbours of one prepared image: ``(n, H, W, 3)`` uint8."""
    import torch

    from vcrbench.corruptions import corrupt_uint8

    batch = np.broadcast_to(clean, (n, *clean.shape)).copy()
    params = {"width": np.full(n, float(epsilon), np.float64)}
    return corrupt_uint8("uniform_noise", batch, params, neighbour_seeds(seed, image_id, n),
                         torch.device(device))


def analyse_pool(
    index: pa.Table,
    model,
    *,
    epsilon: float,
    n: int,
    seed: int,
    batch_size: int = 64,
    precision: str = "fp32",
    device: str = "cpu",
    engine: str = "eager",
    cache_dir: str | None = None,
) -> tuple[pa.Table, pa.Table]:
    """Classify the clean pool images and their neighbours.

    Args:
        index: pool images (``data/index.parquet`` columns).
        model: a :class:`~vcrbench.models.registry.LoadedModel` on ``device``.
        engine, cache_dir: what runs the forward passes (:func:`vcrbench.models.predict`;
            the pipeline passes ``inference.engine``).

    Returns:
        ``clean`` (``image_id``, ``top1`` int16, ``p_top1`` float32: one row per image) and
        ``neighbours`` (``image_id``, ``neighbour`` int32, ``top1`` int16, ``p_top1`` float32:
        one row per neighbour, images in index order).
    """
    from vcrbench.data.datasets import index_size, load_images
    from vcrbench.models import predict

    ids = index.column("image_id").to_pylist()
    paths = index.column("path").to_pylist()
    clean_top1 = np.empty(len(ids), np.int16)
    clean_p = np.empty(len(ids), np.float32)
    top1 = np.empty(len(ids) * n, np.int16)
    p_top1 = np.empty(len(ids) * n, np.float32)
    progress = Progress(f"analyse {model.name}", len(ids), "images")
    for start in range(0, len(ids), CHUNK_IMAGES):
        stop = min(len(ids), start + CHUNK_IMAGES)
        images = load_images(paths[start:stop], index_size(index))
        neighbours = np.concatenate([
            make_neighbours(image, image_id, epsilon=epsilon, n=n, seed=seed, device=device)
            for image, image_id in zip(images, ids[start:stop], strict=True)
        ])
        decided = predict(model, np.concatenate([images, neighbours]), batch_size=batch_size,
                          precision=precision, device=device, engine=engine,
                          cache_dir=cache_dir)
        k = stop - start
        clean_top1[start:stop] = decided["top1"][:k]
        clean_p[start:stop] = decided["p_top1"][:k]
        top1[start * n:stop * n] = decided["top1"][k:]
        p_top1[start * n:stop * n] = decided["p_top1"][k:]
        progress.advance(k)
    clean = pa.table({
        "image_id": pa.array(ids, pa.string()),
        "top1": pa.array(clean_top1, pa.int16()),
        "p_top1": pa.array(clean_p, pa.float32()),
    })
    neighbours = pa.table({
        "image_id": pa.array(np.repeat(np.array(ids, dtype=object), n), pa.string()),
        "neighbour": pa.array(np.tile(np.arange(n, dtype=np.int32), len(ids)), pa.int32()),
        "top1": pa.array(top1, pa.int16()),
        "p_top1": pa.array(p_top1, pa.float32()),
    })
    return clean, neighbours
