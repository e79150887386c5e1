"""Shards: the fixed fan-out of a corruption's N samples into jobs of ``shard_size`` samples.

Shard ``k`` holds sample ids ``[k · shard_size, min(N, (k + 1) · shard_size))``; the number of
shards is known from the config, so the workflow expands them up front (no checkpoints).
"""

from __future__ import annotations

from vcrbench.errors import VcrbenchError


def shard_count(n: int, shard_size: int) -> int:
    """Number of shards for N samples of one corruption."""
    return -(-int(n) // int(shard_size))


def shard_range(shard: int, n: int, shard_size: int) -> range:
    """Sample ids of one shard: ``[shard * shard_size, min(n, (shard + 1) * shard_size))``."""
    if not 0 <= shard < shard_count(n, shard_size):
        raise VcrbenchError(f"shard {shard} does not exist for n={n}, shard_size={shard_size}")
    return range(shard * shard_size, min(n, (shard + 1) * shard_size))
