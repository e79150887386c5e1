"""The 14 image corruptions of the VCR paper, batched in torch, with their parameter domains.

``apply_corruption`` corrupts a batch, ``CORRUPTIONS`` is the registry (in the paper's order),
``sampling`` draws parameters (uniformly over the domains, or ImageNet-C's five severities).
See ``registry`` for the conventions and ``DOMAIN_TABLE`` for the domains; ``generators`` makes
a sample's noise generator from its stored seed.

May import: :mod:`vcrbench.core`, :mod:`vcrbench.errors`.
"""

from vcrbench.corruptions.registry import (
    BOUNDS_RATIONALE,
    CORRUPTIONS,
    DOMAIN_TABLE,
    Corruption,
    apply_corruption,
    corrupt_uint8,
    get_corruption,
    validate_parameters,
)
from vcrbench.corruptions.sampling import imagenet_c_samples, sample_parameters, uniform_samples

__all__ = [
    "BOUNDS_RATIONALE",
    "CORRUPTIONS",
    "DOMAIN_TABLE",
    "Corruption",
    "apply_corruption",
    "corrupt_uint8",
    "get_corruption",
    "imagenet_c_samples",
    "sample_parameters",
    "uniform_samples",
    "validate_parameters",
]
