"""The random generators of a sample's pixel noise, from the 63-bit seed stored with the sample.

Noise is always drawn on the CPU and then moved to the working device, so CPU and GPU runs
see the same random numbers. A batch's samples are drawn on the job's threads
(:func:`map_per_sample`): each sample's numbers come from its own generator only, so the bytes do
not depend on the thread count, and numpy's generators release the GIL while they fill.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import torch

from vcrbench.core.threads import thread_map

T = TypeVar("T")


def torch_generator(sample_seed: int) -> torch.Generator:
    """A CPU torch generator for one sample's pixel noise."""
    generator = torch.Generator(device="cpu")
    generator.manual_seed(int(sample_seed))
    return generator


def numpy_generator(sample_seed: int) -> np.random.Generator:
    """A numpy generator for one sample's pixel noise (noise drawn with numpy)."""
    return np.random.default_rng(np.random.SeedSequence(int(sample_seed)))


def map_per_sample(function: Callable[[int, int], T], seeds: Sequence[int],
                   serial: bool = False) -> list[T]:
    """``[function(i, seed) for i, seed in enumerate(seeds)]`` on the job's threads
    (:func:`vcrbench.core.threads.thread_map`), results in order.

    ``function`` must draw from ``seed``'s own generator only and write nowhere another
    sample writes, so the results are those of the plain loop whatever the thread count.
    """
    return thread_map(function, range(len(seeds)), [int(s) for s in seeds], serial=serial)
