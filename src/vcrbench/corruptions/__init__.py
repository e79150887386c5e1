"""Image corruptions, batched in torch, with their parameter domains: the VCR paper's 14, the
rest of ImageNet-C and its extras, and the NOC paper's candidate set (``sets`` names them).

``apply_corruption`` corrupts a batch, ``CORRUPTIONS`` is the registry (the VCR paper's 14 first,
in its order),
``sampling`` draws parameters (uniformly over the domains, or ImageNet-C's five severities).
See ``registry`` for the conventions and ``DOMAIN_TABLE`` for the domains; ``generators`` makes
a sample's noise generator from its stored seed.

The ``adaptive`` spacing draws flat in Δv over the curves' bins, so a sampling design may use
the Δv binning (:mod:`vcrbench.curves` imports nothing of corruptions).

May import: :mod:`vcrbench.core`, :mod:`vcrbench.curves`, :mod:`vcrbench.errors`.
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
