"""PGD counterparts of the training images (REVa §3.2: "the adversarial counterparts of the
training dataset", crafted with PGD against the standard model).

The counterparts are crafted with :func:`vcrbench.attacks.attack_images` (PGD, untargeted, L∞,
through the model's own preprocessing; random start keyed by ``(seed, "pgd", image_id)``), on
the prepared uint8 training images (224 × 224, or the index's native size), and rounded so that
``‖δ‖∞ ≤ ε`` holds on the stored uint8 pixels. Static (the default): once, on the base model,
shared by every entry with the same base, training images, PGD settings and seed. With
``reva.pgd.recraft``: again at the start of every epoch ``e > 1``, on the model after epoch
``e − 1``.

Schema of a shard, ``models/<name>/pgd/base/shard-<k>.parquet`` (or ``pgd/epoch-<e>/…``), rows
``[k · shard_size, (k + 1) · shard_size)`` of the training index: ``image_id`` (string),
``label`` (int16), ``height``, ``width`` (int32, pixels), ``linf`` (int16, max |δ| in grey
levels), ``image`` (binary: the adversarial ``H × W × 3`` uint8 RGB pixels, row-major).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.training.spec import PgdSettings

SCHEMA = pa.schema([
    ("image_id", pa.string()), ("label", pa.int16()), ("height", pa.int32()),
    ("width", pa.int32()), ("linf", pa.int16()), ("image", pa.binary()),
])


def shard_rows(index: pa.Table, shard: int, shard_size: int) -> pa.Table:
    """Rows ``[shard · shard_size, (shard + 1) · shard_size)`` of a training index (empty past
    its end: an index may have lost unreadable images after the shards were named)."""
    start = min(index.num_rows, shard * shard_size)
    return index.slice(start, max(0, min(index.num_rows, start + shard_size) - start))


def craft_counterparts(images: np.ndarray, labels: np.ndarray, image_ids: list[str], model,
                       settings: PgdSettings, *, seed: int, batch_size: int = 32,
                       device: str | torch.device = "cpu") -> np.ndarray:
    """PGD counterparts of uint8 ``(N, H, W, 3)`` images with labels ``(N,)`` on a loaded
    model (:func:`vcrbench.models.load_model`): uint8 ``(N, H, W, 3)``, within ``ε`` of them."""
    from vcrbench.attacks import attack_images, forward_of

    params = {"eps": settings.eps, "alpha": settings.alpha, "steps": settings.steps,
              "random_start": settings.random_start}
    return attack_images("pgd", forward_of(model), images, np.asarray(labels, np.int64),
                         image_ids=image_ids, seed=int(seed), params=params,
                         batch_size=batch_size, device=device)


def counterpart_table(rows: pa.Table, model, settings: PgdSettings, *, seed: int,
                      batch_size: int = 32, device: str | torch.device = "cpu") -> pa.Table:
    """The PGD counterparts of the training-index ``rows`` as a shard (module docstring), the
    images decoded from their files at the index's size (224 px crops, or native: e.g. 32 px)."""
    from vcrbench.data.datasets import index_size, load_images

    return counterparts_of_images(
        rows.column("image_id").to_pylist(), rows.column("label").to_numpy(),
        load_images(rows.column("path").to_pylist(), index_size(rows)), model, settings,
        seed=seed,
        batch_size=batch_size, device=device)


def counterparts_of_images(image_ids: list[str], labels: np.ndarray, clean: np.ndarray, model,
                           settings: PgdSettings, *, seed: int, batch_size: int = 32,
                           device: str | torch.device = "cpu") -> pa.Table:
    """The PGD counterparts of uint8 ``(N, H, W, 3)`` images with ids and labels ``(N,)`` as a
    shard (module docstring)."""
    labels = np.asarray(labels, np.int64)
    adversarial = (craft_counterparts(clean, labels, image_ids, model, settings, seed=seed,
                                      batch_size=batch_size, device=device)
                   if len(image_ids) else clean)
    n = len(image_ids)
    linf = np.abs(adversarial.astype(np.int16) - clean.astype(np.int16)).reshape(
        n, -1).max(axis=1, initial=0)
    return pa.table({
        "image_id": pa.array(image_ids, pa.string()),
        "label": pa.array(labels, pa.int16()),
        "height": pa.array([clean.shape[1]] * n, pa.int32()),
        "width": pa.array([clean.shape[2]] * n, pa.int32()),
        "linf": pa.array(linf, pa.int16()),
        "image": pa.array([image.tobytes() for image in adversarial], pa.binary()),
    }, schema=SCHEMA)


def counterparts_of_index(shards: pa.Table, index: pa.Table) -> np.ndarray:
    """The counterparts aligned with a training index: uint8 ``(N, H, W, 3)``, row ``i`` the
    counterpart of index row ``i``. Raises naming an image without one."""
    ids = shards.column("image_id").to_pylist()
    row_of = {image_id: i for i, image_id in enumerate(ids)}
    wanted = index.column("image_id").to_pylist()
    missing = [i for i in wanted if i not in row_of]
    if missing:
        raise VcrbenchError(f"the PGD counterparts lack {len(missing)} training images (e.g. "
                            f"{missing[:3]}); delete the entry's pgd folder and re-run")
    heights, widths = shards.column("height").to_numpy(), shards.column("width").to_numpy()
    images = shards.column("image").to_pylist()
    out = []
    for image_id in wanted:
        r = row_of[image_id]
        out.append(np.frombuffer(images[r], np.uint8).reshape(heights[r], widths[r], 3))
    return np.stack(out) if out else np.empty((0, 0, 0, 3), np.uint8)


def labelled_counterparts(index: pa.Table, shard_paths: list[str]) -> np.ndarray:
    """The counterparts of an index's labelled images (label ≥ 0, the images a scratch epoch
    trains on, in index order) from the PGD shard files: uint8 ``(N, H, W, 3)``."""
    from vcrbench.core.tables import read_table

    labelled = index.filter(np.asarray(index.column("label").to_numpy()) >= 0)
    shards = pa.concat_tables([read_table(path) for path in shard_paths])
    return counterparts_of_index(shards, labelled)
