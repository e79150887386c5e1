"""Parameter sampling: uniform over the whole domain (the paper's Algorithm 1) or ImageNet-C's
five fixed severities.

Uniform draws of sample ``i`` of corruption ``c`` come from ``seeding.parameter_rng(seed, c, i)``
only: one ``rng.uniform(low, high)`` per parameter, in the registry's parameter order, so a
sample's parameters never depend on the shard, the batch or the other samples.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vcrbench.corruptions.registry import get_corruption
from vcrbench.errors import VcrbenchError
from vcrbench.seeding import parameter_rng


def sample_parameters(name: str, rng: np.random.Generator) -> dict[str, float]:
    """One parameter point, each parameter uniform over its own domain ``[low, high]``."""
    spec = get_corruption(name)
    return {param: float(rng.uniform(low, high)) for param, (low, high) in
            spec.parameters.items()}


def uniform_samples(name: str, seed: int, sample_ids: Sequence[int]) -> list[dict[str, float]]:
    """Parameters of the given samples, each from ``parameter_rng(seed, name, sample_id)``."""
    get_corruption(name)
    return [sample_parameters(name, parameter_rng(seed, name, int(i))) for i in sample_ids]


def imagenet_c_samples(name: str) -> list[dict[str, float]]:
    """ImageNet-C's five severities (1 to 5) in the registry's parameters."""
    spec = get_corruption(name)
    if spec.imagenet_c_severities is None:
        with_c = [n for n, c in _registry().items() if c.imagenet_c_severities is not None]
        raise VcrbenchError(f"{name} has no ImageNet-C severities (it comes from "
                            f"{spec.source}); corruptions that do: {', '.join(with_c)}")
    return [{k: float(v) for k, v in level.items()} for level in spec.imagenet_c_severities]


def _registry():
    from vcrbench.corruptions.registry import CORRUPTIONS

    return CORRUPTIONS
