"""Scoring: corrupt each sample's prepared image, quantise to uint8, and measure Δv with VIF.

Schema of ``scored/<c>/shard-<k>.parquet`` (one row per sample, in ``sample_id`` order):

=========  ========  ==============================================================
column     type      meaning
=========  ========  ==============================================================
sample_id  int64     as in the samples shard
image_id   string    the clean image
vif        float64   VIF(clean, corrupted) of the paper (1 = unchanged)
dv         float64   Δv = max(0, 1 − VIF), in [0, 1]
checksum   string    BLAKE2b-128 hex of the corrupted pixels (H × W × 3 uint8, RGB, row-major)
image      binary    those pixels, lossless (H × W × 3 uint8, RGB, row-major)
=========  ========  ==============================================================
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import torch

from vcrbench.core.progress import Progress
from vcrbench.data.datasets import IMAGE_SIZE, load_images
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.samples import parameter_columns

SCORED_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.int64(), nullable=False),
        pa.field("image_id", pa.string(), nullable=False),
        pa.field("vif", pa.float64(), nullable=False),
        pa.field("dv", pa.float64(), nullable=False),
        pa.field("checksum", pa.string(), nullable=False),
        pa.field("image", pa.binary(), nullable=False),
    ]
)


def pixel_checksum(image: np.ndarray) -> str:
    """BLAKE2b-128 hex digest of a (H, W, 3) uint8 image's bytes."""
    return hashlib.blake2b(np.ascontiguousarray(image).tobytes(), digest_size=16).hexdigest()


def decode_images(column: pa.ChunkedArray | pa.Array, size: int = IMAGE_SIZE) -> np.ndarray:
    """Stored ``image`` bytes back to pixels: (N, size, size, 3) uint8."""
    values = column.to_pylist()
    out = np.empty((len(values), size, size, 3), dtype=np.uint8)
    for i, raw in enumerate(values):
        if len(raw) != size * size * 3:
            raise VcrbenchError(
                f"stored image {i} has {len(raw)} bytes, expected {size * size * 3}"
            )
        out[i] = np.frombuffer(raw, dtype=np.uint8).reshape(size, size, 3)
    return out


def score_shard(
    samples: pa.Table,
    index: pa.Table,
    *,
    vif_precision: str = "fast",
    batch_size: int = 32,
    device: str | torch.device = "cpu",
) -> pa.Table:
    """Corrupt and score every sample of a shard (see the module docstring for the schema)."""
    from vcrbench.corruptions import corrupt_uint8
    from vcrbench.vif import delta_v, vif

    device = torch.device(device)
    paths = dict(
        zip(index.column("image_id").to_pylist(), index.column("path").to_pylist(), strict=True)
    )
    corruption_names = set(samples.column("corruption").to_pylist())
    if len(corruption_names) != 1:
        raise VcrbenchError(f"a shard must hold one corruption, found {sorted(corruption_names)}")
    corruption = corruption_names.pop()
    image_ids = samples.column("image_id").to_pylist()
    missing = sorted(set(image_ids) - set(paths))
    if missing:
        raise VcrbenchError(f"samples refer to images not in the index: {missing[:5]}")
    names = parameter_columns(samples)
    # Writable copies: Arrow's zero-copy arrays are read-only, which torch warns about.
    params_all = {name: np.array(samples.column(name).to_numpy(), np.float64) for name in names}
    seeds_all = np.array(samples.column("seed").to_numpy(), np.int64)
    unique_paths = sorted({paths[i] for i in image_ids})
    clean_by_path = dict(zip(unique_paths, load_images(unique_paths), strict=True))

    vifs, checksums, images = [], [], []
    progress = Progress(f"score {corruption}", len(image_ids), "samples")
    for start in range(0, len(image_ids), batch_size):
        stop = min(start + batch_size, len(image_ids))
        clean = np.stack([clean_by_path[paths[i]] for i in image_ids[start:stop]])
        params = {name: values[start:stop] for name, values in params_all.items()}
        corrupted = corrupt_uint8(corruption, clean, params, seeds_all[start:stop], device)
        ref = torch.from_numpy(clean).permute(0, 3, 1, 2)
        dist = torch.from_numpy(corrupted).permute(0, 3, 1, 2)
        vifs.append(vif(ref, dist, precision=vif_precision, device=device, chunk_size=batch_size))
        for image in corrupted:
            checksums.append(pixel_checksum(image))
            images.append(image.tobytes())
        progress.advance(stop - start)
    vif_values = np.concatenate(vifs) if vifs else np.empty(0)
    return pa.table(
        {
            "sample_id": samples.column("sample_id"),
            "image_id": pa.array(image_ids, pa.string()),
            "vif": pa.array(vif_values, pa.float64()),
            "dv": pa.array(delta_v(vif_values), pa.float64()),
            "checksum": pa.array(checksums, pa.string()),
            "image": pa.array(images, pa.binary()),
        },
        schema=SCORED_SCHEMA,
    )


def score_images(
    sample_ids: np.ndarray,
    image_ids: list[str],
    clean: np.ndarray,
    changed: np.ndarray,
    *,
    vif_precision: str = "fast",
    batch_size: int = 32,
    device: str | torch.device = "cpu",
) -> pa.Table:
    """A scored table (module docstring) of images changed by something other than a registry
    corruption (e.g. adversarial images): ``clean`` and ``changed`` are ``(N, 224, 224, 3)``
    uint8, row ``i`` the same image before and after."""
    from vcrbench.vif import delta_v, vif

    device = torch.device(device)
    if clean.shape != changed.shape or clean.dtype != np.uint8 or changed.dtype != np.uint8:
        raise VcrbenchError(f"clean and changed images must be uint8 of one shape, got "
                            f"{clean.shape} {clean.dtype} and {changed.shape} {changed.dtype}")
    vifs = []
    for start in range(0, len(image_ids), batch_size):
        stop = min(start + batch_size, len(image_ids))
        ref = torch.from_numpy(clean[start:stop]).permute(0, 3, 1, 2)
        dist = torch.from_numpy(changed[start:stop]).permute(0, 3, 1, 2)
        vifs.append(vif(ref, dist, precision=vif_precision, device=device, chunk_size=batch_size))
    vif_values = np.concatenate(vifs) if vifs else np.empty(0)
    return pa.table(
        {
            "sample_id": pa.array(np.asarray(sample_ids, np.int64), pa.int64()),
            "image_id": pa.array(image_ids, pa.string()),
            "vif": pa.array(vif_values, pa.float64()),
            "dv": pa.array(delta_v(vif_values), pa.float64()),
            "checksum": pa.array([pixel_checksum(image) for image in changed], pa.string()),
            "image": pa.array([image.tobytes() for image in changed], pa.binary()),
        },
        schema=SCORED_SCHEMA,
    )
