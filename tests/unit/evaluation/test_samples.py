"""Samples are keyed: independent of shard layout, reproducible, uniform over the domain."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.corruptions import get_corruption
from vcrbench.evaluation.samples import image_order, make_samples

IMAGES = [f"img{i:03d}" for i in range(7)]


def _all(shard_size: int, n: int = 60, mode: str = "uniform", name: str = "gaussian_blur"):
    shards = -(-n // shard_size)
    return pa.concat_tables(
        make_samples(IMAGES, name, seed=3, mode=mode, n=n, shard_size=shard_size, shard=k)
        for k in range(shards)
    )


def test_shard_size_does_not_change_samples():
    assert _all(60).equals(_all(7))


def test_seed_and_corruption_change_samples():
    a = make_samples(IMAGES, "gaussian_blur", seed=3, mode="uniform", n=10, shard_size=10, shard=0)
    b = make_samples(IMAGES, "gaussian_blur", seed=4, mode="uniform", n=10, shard_size=10, shard=0)
    assert not a.equals(b)


def test_images_are_balanced_and_parameters_in_domain():
    table = _all(20, n=70)
    counts = np.unique(table.column("image_id").to_numpy(zero_copy_only=False), return_counts=True)[
        1
    ]
    assert counts.min() == counts.max() == 10
    for name, (low, high) in get_corruption("gaussian_blur").parameters.items():
        values = table.column(name).to_numpy()
        assert values.min() >= low and values.max() <= high


def test_imagenet_c_mode_cycles_severities():
    table = _all(10, n=35, mode="imagenet-c", name="gaussian_noise")
    assert table.column("severity").to_pylist()[:10] == [1, 2, 3, 4, 5] * 2
    image_ids = table.column("image_id").to_pylist()
    assert len(set(image_ids[:5])) == 1 and image_ids[5] != image_ids[0]


def test_image_order_is_a_keyed_permutation():
    order = image_order(50, 0, "frost")
    assert sorted(order) == list(range(50))
    assert np.array_equal(order, image_order(50, 0, "frost"))
    assert not np.array_equal(order, image_order(50, 0, "brightness"))
