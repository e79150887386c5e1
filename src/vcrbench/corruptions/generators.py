"""The random generators of a sample's pixel noise, from the 63-bit seed stored with the sample.

Noise is always drawn on the CPU and then moved to the working device, so CPU and GPU runs
see the same random numbers.
"""

from __future__ import annotations

import numpy as np
import torch


def torch_generator(sample_seed: int) -> torch.Generator:
    """A CPU torch generator for one sample's pixel noise."""
    generator = torch.Generator(device="cpu")
    generator.manual_seed(int(sample_seed))
    return generator


def numpy_generator(sample_seed: int) -> np.random.Generator:
    """A numpy generator for one sample's pixel noise (noise drawn with numpy)."""
    return np.random.default_rng(np.random.SeedSequence(int(sample_seed)))
