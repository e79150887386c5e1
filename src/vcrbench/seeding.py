"""Keyed randomness: every draw for sample ``i`` of corruption ``c`` comes from ``(seed, c, i)``.

Nothing here touches global random state, so results do not depend on shard size, job order,
batch composition, the number of cores or the machine.

Keys are built with numpy's ``SeedSequence``; a corruption name enters as the 32-bit words of
its SHA-256 digest (stable across Python runs, unlike ``hash``).
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch

#: Streams spawned from one sample key; each consumer takes its own so that adding a draw to
#: one stream never shifts another.
PARAMETER_STREAM = 0
NOISE_STREAM = 1
BOOTSTRAP_STREAM = 2


def name_words(name: str) -> list[int]:
    """Stable 32-bit words for a string (first 128 bits of its SHA-256)."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()[:16]
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


def sample_key(seed: int, corruption: str, sample_id: int, stream: int) -> np.random.SeedSequence:
    """The seed sequence of one stream of one sample: ``(seed, corruption, sample_id, stream)``."""
    if seed < 0 or sample_id < 0 or stream < 0:
        raise ValueError("seed, sample_id and stream must be non-negative integers")
    entropy = [int(seed) & 0xFFFFFFFF, int(seed) >> 32, *name_words(corruption)]
    return np.random.SeedSequence(entropy, spawn_key=(int(sample_id), int(stream)))


def parameter_rng(seed: int, corruption: str, sample_id: int) -> np.random.Generator:
    """numpy generator for the corruption parameters of one sample."""
    return np.random.default_rng(sample_key(seed, corruption, sample_id, PARAMETER_STREAM))


def seed_of(key: np.random.SeedSequence) -> int:
    """A 63-bit integer seed drawn from a seed sequence (fits an int64 column)."""
    state = key.generate_state(2, np.uint32)
    return int((int(state[0]) | (int(state[1]) << 32)) & 0x7FFF_FFFF_FFFF_FFFF)


def noise_seed(seed: int, corruption: str, sample_id: int) -> int:
    """A 63-bit integer seed for the pixel noise of one sample (stored in the samples table)."""
    return seed_of(sample_key(seed, corruption, sample_id, NOISE_STREAM))


def torch_generator(sample_seed: int) -> torch.Generator:
    """A CPU torch generator for one sample's pixel noise.

    Noise is always drawn on the CPU and then moved to the working device, so CPU and GPU runs
    see the same random numbers.
    """
    generator = torch.Generator(device="cpu")
    generator.manual_seed(int(sample_seed))
    return generator


def numpy_rng_from_seed(sample_seed: int) -> np.random.Generator:
    """numpy generator from a stored per-sample seed (for noise drawn with numpy)."""
    return np.random.default_rng(np.random.SeedSequence(int(sample_seed)))
