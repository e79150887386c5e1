"""Samples: which image, which corruption parameters and which noise seed each sample gets.

Sample ``i`` of corruption ``c`` is fully determined by ``(seed, c, i)``: its image is entry
``i mod n_images`` of a permutation of the index keyed by ``(seed, c)``, its parameters come from
:func:`vcrbench.core.seeding.parameter_rng` (uniform mode, spaced ``visual`` or ``linear``, pixel
parameters scaled to the image ``side``) or from the ImageNet-C severity ``i mod 5 + 1``
(imagenet-c mode, image ``i // 5``; CIFAR-10-C's at ``side`` 32), its pixel noise from
:func:`vcrbench.core.seeding.noise_seed`. So shards can be made in any order, by any job.

Schema of ``samples/<c>/shard-<k>.parquet``: ``sample_id`` (int64), ``image_id`` (string),
``corruption`` (string), ``seed`` (int64, the per-sample noise seed), ``severity`` (int8: 1–5 in
imagenet-c mode, 0 in uniform mode), then one float64 column per corruption parameter (units as
in the corruption registry), and in imagenet-c mode one per registry setting that the severity
table gives (CIFAR-10-C's snow at 32 px: ``layer_std``, ``blur_radius``, ``cifar_layer``). An
imagenet-c shard made with ``jpeg_quality`` (config ``imagenet_c.jpeg_quality``) also has a
``jpeg_quality`` column (int16): each corrupted image is then re-saved as a JPEG of that
quality, as the published ImageNet-C images were
(:func:`vcrbench.evaluation.scoring.corrupted_batches`). Without it the shard is byte for byte
what it was before the option existed.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.core.seeding import IMAGE_ORDER, noise_seed
from vcrbench.core.shards import shard_range
from vcrbench.errors import VcrbenchError

FIXED_COLUMNS = ("sample_id", "image_id", "corruption", "seed", "severity")
#: Columns a shard may have besides the fixed ones and the parameters.
OPTIONAL_COLUMNS = ("jpeg_quality",)
IMAGENET_C_LEVELS = 5


def image_order(n_images: int, seed: int, corruption: str) -> np.ndarray:
    """A permutation of ``range(n_images)`` keyed by ``(seed, corruption)``."""
    return IMAGE_ORDER.rng(seed, corruption).permutation(n_images)


def make_samples(
    image_ids: list[str],
    corruption: str,
    *,
    seed: int,
    mode: str,
    n: int,
    shard_size: int,
    shard: int,
    spacing: str = "visual",
    side: int = 224,
    jpeg_quality: int | None = None,
    pilot: pa.Table | None = None,
    bins: int = 40,
) -> pa.Table:
    """The samples table of one shard (see module docstring); ``spacing`` as in
    :mod:`vcrbench.corruptions.sampling` (uniform mode only; ``adaptive``: from the scored
    ``pilot`` table with the run's M ``bins``, :mod:`vcrbench.corruptions.adaptive`);
    ``side``, the side (px) of the images the samples are for: pixel parameters' draws scale
    with it in uniform mode, and imagenet-c mode uses CIFAR-10-C's severities at 32
    (``sampling``, "Image size"; 224, the default, is the registry's own domains and
    ImageNet-C's severities); ``jpeg_quality``
    (imagenet-c mode only; None: none) re-saves every corrupted image as a JPEG of that quality
    (the ``jpeg_quality`` column)."""
    # imported here: the corruptions load torch, which the statistics jobs that read this
    # module's constants do not need
    from vcrbench.corruptions import get_corruption, imagenet_c_samples, uniform_samples

    spec = get_corruption(corruption)
    names = list(spec.parameters)
    clash = (set(names) | set(spec.settings)) & set(FIXED_COLUMNS + OPTIONAL_COLUMNS)
    if clash:
        raise VcrbenchError(f"corruption {corruption}: parameter names {clash} clash with columns")
    ids = list(shard_range(shard, n, shard_size))
    order = image_order(len(image_ids), seed, corruption)
    if mode == "uniform" and spacing == "adaptive":
        from vcrbench.corruptions.adaptive import adaptive_samples  # torch, as above

        if pilot is None:
            raise VcrbenchError(f"{corruption}: sampling.spacing adaptive needs the scored pilot "
                                "table (rule pilot)")
        pilot_columns = {name: pilot.column(name).to_numpy() for name in [*names, "round", "dv"]}
        every = adaptive_samples(corruption, seed, n, pilot_columns, side=side, bins=bins)
        params = [every[i] for i in ids]
        images = [image_ids[order[i % len(image_ids)]] for i in ids]
        severity = [0] * len(ids)
    elif mode == "uniform":
        params = uniform_samples(corruption, seed, ids, spacing, side)
        images = [image_ids[order[i % len(image_ids)]] for i in ids]
        severity = [0] * len(ids)
    elif mode == "imagenet-c":
        levels = imagenet_c_samples(corruption, side)
        # settings that a severity table gives (CIFAR-10-C's snow) are columns too, their
        # default where a level leaves them out
        names += [k for k in spec.settings if any(k in level for level in levels)]
        levels = [{**{k: default for k, (_, _, default) in spec.settings.items()
                      if k in names}, **level} for level in levels]
        params = [levels[i % IMAGENET_C_LEVELS] for i in ids]
        images = [image_ids[order[(i // IMAGENET_C_LEVELS) % len(image_ids)]] for i in ids]
        severity = [i % IMAGENET_C_LEVELS + 1 for i in ids]
    else:
        raise VcrbenchError(f"sampling.mode {mode!r} unknown; use uniform or imagenet-c")
    if jpeg_quality is not None and (mode != "imagenet-c" or not 1 <= int(jpeg_quality) <= 100):
        raise VcrbenchError(f"jpeg_quality {jpeg_quality!r}: an integer in [1, 100], and only for "
                            "imagenet-c samples")
    columns = {
        "sample_id": pa.array(ids, pa.int64()),
        "image_id": pa.array(images, pa.string()),
        "corruption": pa.array([corruption] * len(ids), pa.string()),
        "seed": pa.array([noise_seed(seed, corruption, i) for i in ids], pa.int64()),
        "severity": pa.array(severity, pa.int8()),
    }
    for name in names:
        columns[name] = pa.array([float(p[name]) for p in params], pa.float64())
    if jpeg_quality is not None:
        columns["jpeg_quality"] = pa.array([int(jpeg_quality)] * len(ids), pa.int16())
    return pa.table(columns)


def parameter_columns(table: pa.Table) -> list[str]:
    """The corruption-parameter columns of a samples table."""
    return [c for c in table.column_names if c not in FIXED_COLUMNS + OPTIONAL_COLUMNS]


def pilot_samples(image_ids: list[str], corruption: str, *, seed: int,
                  points: list[dict[str, float]], first: int) -> pa.Table:
    """A samples table (schema of a uniform shard) of pilot samples ``first`` …
    ``first + len(points) − 1`` with the given parameters: images and noise seeds from the
    pilot's own keys (:func:`vcrbench.corruptions.adaptive.pilot_images`,
    :func:`~vcrbench.corruptions.adaptive.pilot_noise_seeds`), ``sample_id`` the pilot index."""
    # imported here: the corruptions load torch (see make_samples)
    from vcrbench.corruptions import get_corruption
    from vcrbench.corruptions.adaptive import pilot_images, pilot_noise_seeds

    count = first + len(points)
    ids = list(range(first, count))
    images = pilot_images(image_ids, seed, corruption, count)[first:]
    seeds = pilot_noise_seeds(seed, corruption, count)[first:]
    columns = {
        "sample_id": pa.array(ids, pa.int64()),
        "image_id": pa.array(images, pa.string()),
        "corruption": pa.array([corruption] * len(ids), pa.string()),
        "seed": pa.array(seeds, pa.int64()),
        "severity": pa.array([0] * len(ids), pa.int8()),
    }
    for name in get_corruption(corruption).parameters:
        columns[name] = pa.array([float(p[name]) for p in points], pa.float64())
    return pa.table(columns)
