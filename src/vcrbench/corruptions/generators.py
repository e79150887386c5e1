"""The random generators of a sample's pixel noise, from the 63-bit seed stored with the sample.

Noise is always drawn on the CPU and then moved to the working device, so CPU and GPU runs
see the same random numbers. A batch's samples are drawn on the job's threads
(:func:`map_per_sample`): each sample's numbers come from its own generator only, so the bytes do
not depend on the thread count, and numpy's generators release the GIL while they fill.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import TypeVar

import numpy as np
import torch

T = TypeVar("T")


def torch_generator(sample_seed: int) -> torch.Generator:
    """A CPU torch generator for one sample's pixel noise."""
    generator = torch.Generator(device="cpu")
    generator.manual_seed(int(sample_seed))
    return generator


def numpy_generator(sample_seed: int) -> np.random.Generator:
    """A numpy generator for one sample's pixel noise (noise drawn with numpy)."""
    return np.random.default_rng(np.random.SeedSequence(int(sample_seed)))


@lru_cache(maxsize=4)
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="vcrbench-noise")


def map_per_sample(function: Callable[[int, int], T], seeds: Sequence[int]) -> list[T]:
    """``[function(i, seed) for i, seed in enumerate(seeds)]`` on up to
    ``torch.get_num_threads()`` threads (the job's thread count), results in order.

    ``function`` must draw from ``seed``'s own generator only and write nowhere another
    sample writes, so the results are those of the plain loop whatever the thread count.
    """
    threads = min(torch.get_num_threads(), len(seeds))
    if threads <= 1:
        return [function(i, int(seed)) for i, seed in enumerate(seeds)]
    return list(_pool(threads).map(function, range(len(seeds)), [int(s) for s in seeds]))
