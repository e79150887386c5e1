"""Shards: a corruption's samples split into jobs, each sample in exactly one shard."""

from __future__ import annotations

import pytest

from vcrbench.core.shards import shard_count, shard_range
from vcrbench.errors import VcrbenchError


def test_shards_partition_the_samples():
    assert shard_count(1000, 500) == 2 and shard_count(1001, 500) == 3
    ids = [i for k in range(shard_count(1001, 500)) for i in shard_range(k, 1001, 500)]
    assert ids == list(range(1001))
    with pytest.raises(VcrbenchError):
        shard_range(3, 1001, 500)
