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
image      binary    those pixels, lossless (H × W × 3 uint8, RGB, row-major); only in a shard
                     that stores pixels (``scoring.store_images``)
=========  ========  ==============================================================

Without stored pixels a shard costs about 60 bytes per sample instead of about 80 KB, and
inference regenerates each corrupted image from its samples row (the corruption is a keyed,
deterministic function of the clean image, the parameters and the seed) and checks it against
``checksum`` (:func:`regenerated_batches`, batch by batch as the model classifies them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import torch

from vcrbench.core.progress import Progress
from vcrbench.core.threads import SMALL_ITEM, thread_map
from vcrbench.data.datasets import IMAGE_SIZE
from vcrbench.data.prepared import DecodedImages, PreparedImages
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
#: The schema of a shard without stored pixels: :data:`SCORED_SCHEMA` less ``image``.
SCORED_SCHEMA_NO_PIXELS = pa.schema([f for f in SCORED_SCHEMA if f.name != "image"])

#: Images a run may store before ``scoring.store_images: auto`` stops storing pixels: 1 GB of
#: raw pixels (about 6,600 samples; about 0.5 GB on disk after compression).
AUTO_STORE_LIMIT_BYTES = 10**9
#: Samples of a shard whose VIF is computed together, each clean image once
#: (:func:`vcrbench.vif.vif`'s ``reference_index``: pairs grouped by clean image, each image's
#: pyramid and GSM statistics computed once per chunk of ``vif.batch_size`` pairs). A block
#: holds its corrupted images and their clean images (at 224 px about 40 MB each for 256
#: samples), and the job's progress line moves once a block.
VIF_BLOCK = 256


def stores_images(setting: bool | str, n_samples: int, side: int = IMAGE_SIZE) -> bool:
    """Whether scored shards keep their pixels: ``scoring.store_images`` (``true``, ``false``
    or ``auto``) for a run that scores ``n_samples`` corrupted images of ``side`` px in all.

    ``auto`` stores them while the run's raw pixels stay under :data:`AUTO_STORE_LIMIT_BYTES`:
    there a shard is self-contained and inference reads instead of re-corrupting, at a disk cost
    that does not matter; beyond it (the default run's 11,620 samples, a paper run's 700,000)
    the pixels would be nearly all of the run's bytes (about 80 KB a sample compressed) while
    re-corrupting costs a few ms per image and model.
    """
    if setting == "auto":
        return n_samples * side * side * 3 <= AUTO_STORE_LIMIT_BYTES
    if isinstance(setting, bool):
        return setting
    raise VcrbenchError(f"scoring.store_images is true, false or auto, got {setting!r}")


def pixel_checksum(image: np.ndarray) -> str:
    """BLAKE2b-128 hex digest of a (H, W, 3) uint8 image's bytes."""
    return hashlib.blake2b(np.ascontiguousarray(image).tobytes(), digest_size=16).hexdigest()


def pixel_checksums(images: np.ndarray) -> list[str]:
    """:func:`pixel_checksum` of each of ``(N, H, W, 3)`` uint8 images, on the job's threads
    (hashlib releases the GIL on buffers this large)."""
    return thread_map(pixel_checksum, images,
                      serial=len(images) == 0 or images[0].nbytes < SMALL_ITEM)


def decode_images(column: pa.ChunkedArray | pa.Array, size: int | None = None) -> np.ndarray:
    """Stored ``image`` bytes back to pixels: (N, size, size, 3) uint8; ``size`` None: the
    side of square images, from the first one's byte count."""
    values = column.to_pylist()
    if size is None:
        size = int(round((len(values[0]) / 3) ** 0.5)) if values else IMAGE_SIZE
    out = np.empty((len(values), size, size, 3), dtype=np.uint8)
    for i, raw in enumerate(values):
        if len(raw) != size * size * 3:
            raise VcrbenchError(
                f"stored image {i} has {len(raw)} bytes, expected {size * size * 3}"
            )
        out[i] = np.frombuffer(raw, dtype=np.uint8).reshape(size, size, 3)
    return out


def shard_corruption(samples: pa.Table) -> str:
    """The one corruption of a samples shard."""
    names = set(samples.column("corruption").to_pylist())
    if len(names) != 1:
        raise VcrbenchError(f"a shard must hold one corruption, found {sorted(names)}")
    return names.pop()


def corrupted_batches(
    samples: pa.Table,
    clean: PreparedImages | DecodedImages,
    *,
    batch_size: int = 32,
    device: str | torch.device = "cpu",
) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
    """Corrupt a samples shard batch by batch: ``(rows, clean, corrupted)`` with ``rows`` the
    slice of the shard and both images ``(B, S, S, 3)`` uint8 (S = 224, or the native size).

    A shard with a ``jpeg_quality`` column (ImageNet-C samples with ``imagenet_c.jpeg_quality``)
    has each corrupted image re-saved as a JPEG of its row's quality and decoded again (Pillow,
    as :func:`vcrbench.corruptions.digital.jpeg_round_trip`), as the published ImageNet-C was.
    """
    from vcrbench.corruptions import corrupt_uint8
    from vcrbench.corruptions.digital import jpeg_round_trip

    device = torch.device(device)
    corruption = shard_corruption(samples)
    image_ids = samples.column("image_id").to_pylist()
    missing = sorted({i for i in image_ids if i not in clean})
    if missing:
        raise VcrbenchError(f"samples refer to images not in the index: {missing[:5]}")
    names = parameter_columns(samples)
    # Writable copies: Arrow's zero-copy arrays are read-only, which torch warns about.
    params_all = {name: np.array(samples.column(name).to_numpy(), np.float64) for name in names}
    seeds_all = np.array(samples.column("seed").to_numpy(), np.int64)
    resave = ("jpeg_quality" in samples.column_names
              and samples.column("jpeg_quality").to_pylist())
    for start in range(0, len(image_ids), batch_size):
        rows = slice(start, min(start + batch_size, len(image_ids)))
        images = clean.images(image_ids[rows])
        params = {name: values[rows] for name, values in params_all.items()}
        corrupted = corrupt_uint8(corruption, images, params, seeds_all[rows], device)
        if resave:
            corrupted = np.stack([jpeg_round_trip(image, int(quality))
                                  for image, quality in zip(corrupted, resave[rows], strict=True)])
        yield rows, images, corrupted


def score_shard(
    samples: pa.Table,
    clean: PreparedImages | DecodedImages | pa.Table,
    *,
    vif_precision: str = "fast",
    batch_size: int = 32,
    device: str | torch.device = "cpu",
    store_images: bool = True,
    small_images: str = "enlarge",
) -> pa.Table:
    """Corrupt and score every sample of a shard (see the module docstring for the schema).

    ``clean``: the prepared images (a store, or an index table whose files are decoded here);
    ``store_images``: keep the corrupted pixels in the table; ``small_images``: how images too
    small for the paper's VIF are scored (:func:`vcrbench.vif.vif_any_size`).
    """
    from vcrbench.vif import delta_v, vif_any_size

    if isinstance(clean, pa.Table):
        clean = DecodedImages(clean)
    device = torch.device(device)
    image_ids = samples.column("image_id").to_pylist()
    vifs, checksums, images = [], [], []
    block: list[np.ndarray] = []  # corrupted batches whose VIF is not computed yet
    references: list[np.ndarray] = []  # their clean images, each once, in first-seen order
    positions: dict[str, int] = {}  # image id -> its position in references
    index: list[int] = []  # each sample's clean image, as a position in references
    progress = Progress(f"score {shard_corruption(samples)}", samples.num_rows, "samples")

    def score_block() -> None:
        """VIF of the samples corrupted since the last call, each clean image once."""
        refs = np.ascontiguousarray(np.stack(references).transpose(0, 3, 1, 2))
        dists = np.ascontiguousarray(np.concatenate(block).transpose(0, 3, 1, 2))
        which = np.array(index, np.int64)
        for pending in (block, references, positions, index):
            pending.clear()
        vifs.append(vif_any_size(refs, dists, small=small_images, precision=vif_precision,
                                 device=device, chunk_size=batch_size, reference_index=which))
        progress.advance(len(which))

    for rows, original, corrupted in corrupted_batches(samples, clean, batch_size=batch_size,
                                                       device=device):
        checksums += pixel_checksums(corrupted)
        if store_images:
            images += [image.tobytes() for image in corrupted]
        for image_id, image in zip(image_ids[rows], original, strict=True):
            if image_id not in positions:
                positions[image_id] = len(references)
                references.append(image.copy())  # not a view that keeps its batch alive
            index.append(positions[image_id])
        block.append(corrupted)
        if len(index) >= VIF_BLOCK:
            score_block()
    if block:
        score_block()
    vif_values = np.concatenate(vifs) if vifs else np.empty(0)
    columns = {
        "sample_id": samples.column("sample_id"),
        "image_id": pa.array(samples.column("image_id").to_pylist(), pa.string()),
        "vif": pa.array(vif_values, pa.float64()),
        "dv": pa.array(delta_v(vif_values), pa.float64()),
        "checksum": pa.array(checksums, pa.string()),
    }
    if not store_images:
        return pa.table(columns, schema=SCORED_SCHEMA_NO_PIXELS)
    return pa.table({**columns, "image": pa.array(images, pa.binary())}, schema=SCORED_SCHEMA)


def regenerated_batches(
    scored: pa.Table,
    samples: pa.Table,
    clean: PreparedImages | DecodedImages,
    *,
    batch_size: int = 32,
    device: str | torch.device = "cpu",
) -> Iterator[np.ndarray]:
    """The corrupted images of a scored shard stored without pixels, made again from its
    samples shard batch by batch, in order, each batch checked against the stored checksums
    before it is yielded: ``(B, S, S, 3)`` uint8. A consumer can classify batch k while batch
    k+1 is made (:func:`vcrbench.models.inference.predict_stream` in a loader thread).

    Raises :class:`VcrbenchError` when a regenerated image differs from the one that was scored
    (the corruption ran on another device type or torch build than the scoring job).
    """
    sample_ids = samples.column("sample_id").to_pylist()
    if sample_ids != scored.column("sample_id").to_pylist():
        raise VcrbenchError("the samples shard and the scored shard hold different samples; "
                            "delete the scored shard and re-run to regenerate it")
    checksums = scored.column("checksum").to_pylist()
    for rows, _, corrupted in corrupted_batches(samples, clean, batch_size=batch_size,
                                                device=device):
        made = pixel_checksums(corrupted)
        for i, checksum in zip(range(rows.start, rows.stop), made, strict=True):
            if checksum != checksums[i]:
                raise VcrbenchError(
                    f"sample {sample_ids[i]} ({shard_corruption(samples)}): the corrupted image "
                    f"made again on {torch.device(device)} differs from the one that was scored "
                    "(another device type or torch build scored it, or the corruption's code "
                    "changed since). Predict on the device that scored, or delete the "
                    "corruption's scored shards so that they are scored again (with "
                    "scoring.store_images: true they keep their pixels)"
                )
        yield corrupted


def regenerate_images(
    scored: pa.Table,
    samples: pa.Table,
    clean: PreparedImages | DecodedImages,
    *,
    batch_size: int = 32,
    device: str | torch.device = "cpu",
) -> np.ndarray:
    """All of :func:`regenerated_batches` in one array: (N, S, S, 3) uint8."""
    batches = list(regenerated_batches(scored, samples, clean, batch_size=batch_size,
                                       device=device))
    if not batches:
        return np.empty((0, IMAGE_SIZE, IMAGE_SIZE, 3), np.uint8)
    return np.concatenate(batches)


def score_images(
    sample_ids: np.ndarray,
    image_ids: list[str],
    clean: np.ndarray,
    changed: np.ndarray,
    *,
    vif_precision: str = "fast",
    batch_size: int = 32,
    device: str | torch.device = "cpu",
    small_images: str = "enlarge",
) -> pa.Table:
    """A scored table (module docstring) of images changed by something other than a registry
    corruption (e.g. adversarial images): ``clean`` and ``changed`` are ``(N, S, S, 3)``
    uint8, row ``i`` the same image before and after."""
    from vcrbench.vif import delta_v, vif_any_size

    device = torch.device(device)
    if clean.shape != changed.shape or clean.dtype != np.uint8 or changed.dtype != np.uint8:
        raise VcrbenchError(f"clean and changed images must be uint8 of one shape, got "
                            f"{clean.shape} {clean.dtype} and {changed.shape} {changed.dtype}")
    vifs = []
    for start in range(0, len(image_ids), batch_size):
        stop = min(start + batch_size, len(image_ids))
        ref = clean[start:stop].transpose(0, 3, 1, 2)
        dist = changed[start:stop].transpose(0, 3, 1, 2)
        vifs.append(vif_any_size(ref, dist, small=small_images, precision=vif_precision,
                                 device=device, chunk_size=batch_size))
    vif_values = np.concatenate(vifs) if vifs else np.empty(0)
    return pa.table(
        {
            "sample_id": pa.array(np.asarray(sample_ids, np.int64), pa.int64()),
            "image_id": pa.array(image_ids, pa.string()),
            "vif": pa.array(vif_values, pa.float64()),
            "dv": pa.array(delta_v(vif_values), pa.float64()),
            "checksum": pa.array(pixel_checksums(changed), pa.string()),
            "image": pa.array([image.tobytes() for image in changed], pa.binary()),
        },
        schema=SCORED_SCHEMA,
    )
