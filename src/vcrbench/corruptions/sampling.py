"""Parameter sampling: over the whole domain (the paper's Algorithm 1) or ImageNet-C's five
fixed severities.

Draws of sample ``i`` of corruption ``c`` come from ``seeding.parameter_rng(seed, c, i)`` only:
one ``u = rng.uniform(low, high)`` per parameter, in the registry's parameter order, so a
sample's parameters never depend on the shard, the batch or the other samples. Two spacings:

- ``linear``: the parameter is ``u``, uniform over its domain, exactly as the paper.
- ``visual`` (default): for parameters with a log floor ``f`` in the registry (``spacing``),
  ``u`` is moved towards the parameter's clean value ``c`` (registry ``identity``): with
  ``D`` the length of the side of the domain that ``u`` falls on and ``t = |u − c| / D``
  (uniform in [0, 1]), the parameter is ``c ± D · f ** (1 − t)``, log-uniform in its distance
  from the clean value between ``D · f`` and ``D``. Each side keeps its probability and the
  parameter still reaches the end of the domain; only the visually negligible stretch
  ``[c, c ± D · f]`` (Δv about 0) is left out. Δv grows about linearly in the *logarithm*
  of most parameters (noise level, blur width), so a linear draw spends most samples where the
  image is already destroyed and leaves the low-Δv bins nearly empty at the N of a benchmark
  (the paper's 50,000 images per corruption hid this; its Table 2 still shows it for shot and
  impulse noise). The floors were chosen per corruption to spread Δv evenly over the bins
  (``benchmarks/tune_spacing.py``; measured coverage in docs/corruptions.md). Algorithm 1's
  rates are per Δv bin, so the spacing changes which bins are estimated well, not what is
  estimated. Parameters without a floor are linear in both spacings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vcrbench.corruptions.registry import get_corruption
from vcrbench.errors import VcrbenchError
from vcrbench.seeding import parameter_rng

SPACINGS = ("visual", "linear")


def space_towards_clean(u: float, low: float, high: float, clean: float,
                        floor: float | None) -> float:
    """Map a uniform draw ``u`` in ``[low, high]`` to ``clean ± D · floor ** (1 − t)``.

    ``t = |u − clean| / D``, ``D`` the length of ``u``'s side of the domain (module docstring);
    ``floor`` None returns ``u`` (linear spacing). ``u == clean`` maps to ``clean ± D · floor``
    on the longer side.
    """
    if floor is None:
        return float(u)
    upper = u > clean if u != clean else (high - clean) >= (clean - low)
    side = (high - clean) if upper else (clean - low)
    step = side * floor ** (1.0 - abs(u - clean) / side)
    return float(min(high, clean + step) if upper else max(low, clean - step))


def sample_parameters(name: str, rng: np.random.Generator,
                      spacing: str = "visual") -> dict[str, float]:
    """One parameter point over the whole domain, ``spacing`` as in the module docstring."""
    spec = get_corruption(name)
    if spacing not in SPACINGS:
        raise VcrbenchError(f"unknown parameter spacing {spacing!r}; use one of {SPACINGS}")
    point = {}
    for param, (low, high) in spec.parameters.items():
        u = float(rng.uniform(low, high))
        floor = spec.spacing.get(param) if spacing == "visual" else None
        point[param] = space_towards_clean(u, low, high, spec.identity[param], floor)
    return point


def uniform_samples(name: str, seed: int, sample_ids: Sequence[int],
                    spacing: str = "visual") -> list[dict[str, float]]:
    """Parameters of the given samples, each from ``parameter_rng(seed, name, sample_id)``."""
    get_corruption(name)
    return [sample_parameters(name, parameter_rng(seed, name, int(i)), spacing)
            for i in sample_ids]


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
