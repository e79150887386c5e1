"""core.threads.thread_map: map's results, in order, at any thread count."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from vcrbench.core.threads import thread_map
from vcrbench.evaluation.scoring import pixel_checksum, pixel_checksums


@pytest.fixture
def threads():
    saved = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(saved)


@pytest.mark.parametrize("count", [1, 2, 7])
def test_thread_map_is_map_in_order(threads, count):
    threads(count)
    items = list(range(53))
    assert thread_map(lambda a, b: a * 1000 + b, items, reversed(items)) == [
        a * 1000 + b for a, b in zip(items, reversed(items), strict=True)]
    assert thread_map(str, []) == []
    assert thread_map(str, items, serial=True) == [str(i) for i in items]


def test_pixel_checksums_are_each_images_blake2b(threads):
    threads(3)
    for side in (32, 160):  # under and over SMALL_ITEM: in this thread, then on three
        images = np.random.default_rng(side).integers(0, 256, (9, side, side, 3),
                                                      dtype=np.uint8)
        expected = [hashlib.blake2b(image.tobytes(), digest_size=16).hexdigest()
                    for image in images]
        assert pixel_checksums(images) == expected
    images = np.random.default_rng(0).integers(0, 256, (9, 32, 32, 3), dtype=np.uint8)
    expected = [hashlib.blake2b(image.tobytes(), digest_size=16).hexdigest() for image in images]
    assert pixel_checksums(images) == expected == [pixel_checksum(i) for i in images]
    # a non-contiguous view hashes its pixels, not its memory
    assert pixel_checksums(images[:, ::-1])[0] == hashlib.blake2b(
        np.ascontiguousarray(images[0, ::-1]).tobytes(), digest_size=16).hexdigest()
