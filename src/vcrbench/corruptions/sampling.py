"""Parameter sampling: over the whole domain (the paper's Algorithm 1) or ImageNet-C's five
fixed severities.

Draws of sample ``i`` of corruption ``c`` come from ``core.seeding.parameter_rng(seed, c, i)`` only:
one ``u = rng.uniform(low, high)`` per parameter, in the registry's parameter order, so a
sample's parameters never depend on the shard, the batch or the other samples. Two spacings:

- ``linear``: the parameter is ``u``, uniform over its domain, exactly as the paper.
- ``visual`` (default): for parameters with a log floor ``f`` in the registry (``spacing``),
  ``u`` is moved towards the parameter's clean value ``c`` (registry ``identity``): with
  ``D`` the length of the side of the domain that ``u`` falls on and ``t = |u − c| / D``
  (uniform in [0, 1]), the parameter is ``c ± D · f ** ((1 − t) ** g)``, ``g`` the registry's
  ``spacing_power`` (default 1: the distance from the clean value is log-uniform between
  ``D · f`` and ``D``; ``g > 1`` puts more samples near the far end, ``g < 1`` near the floor).
  Each side keeps its probability and the parameter still reaches the end of the domain; only
  the visually negligible stretch ``[c, c ± D · f]`` (Δv about 0) is left out. Δv grows about
  linearly in the *logarithm* of most parameters (noise level, blur width), so a linear draw
  spends most samples where the image is already destroyed and leaves the low-Δv bins nearly
  empty at the N of a benchmark (the paper's 50,000 images per corruption hid this; its
  Table 2 still shows it for shot and impulse noise). For a corruption with ``coupling``
  ρ > 0, the ``t`` of its parameters are first tied by a Gaussian copula
  (:func:`couple_draws`, one extra normal draw per sample): each ``t`` stays uniform, but
  mild settings of one parameter come with mild settings of the others, without which a small
  Δv (every parameter near its clean value at once) is rare. Floors, powers and couplings were
  chosen per corruption to spread Δv evenly over the bins (``calibration/tune_spacing.py``, then
  measured with ``benchmarks/bench_coverage.py``; docs/corruptions.md). Algorithm 1's rates are
  per Δv bin, so the spacing changes which bins are estimated well; within a bin, the mix of
  parameter settings behind a Δv can differ from the linear draw's. Parameters without a floor
  are linear in both spacings (uniform marginals, coupled or not).

A third spacing, ``adaptive`` (:mod:`vcrbench.corruptions.adaptive`), is not drawn sample by
sample: a scored pilot on the run's images at the run's size decides which candidate points the
run takes, so that Δv is about flat over the bins the corruption reaches, without floors tuned
for one size. ``visual`` and ``linear`` draws and definitions do not change with it.

Image size. The domains are set for 224 x 224 images. The blur parameters of ImageNet-C and
Albumentations are lengths in pixels of the image at hand (registry ``pixel_parameters``), so at
another side ``s`` the same draw would blur a 32 px image far more than a 224 px one. With
``side=s``, :func:`uniform_samples` draws exactly as at 224 px and then moves each pixel
parameter towards its clean value by ``s / 224`` (:func:`scale_point`): a blur of sigma px at
224 px becomes one of sigma · s / 224 px at s. Where a parameter has a threshold below which the
discretised operation does nothing (registry ``pixel_thresholds``: a Gaussian kernel of radius
0, a shuffle of 0 px, one motion tap, a kernel of 1), draws below it stay (clean stays clean)
and the ones above are stretched log-linearly between the threshold and the scaled end
(:func:`scale_distance`), so the share of draws that change the image is the 224 px run's. At
224 nothing changes, to the bit. Above 224 the scaled values are clipped to the registry's
domain. NOC's lengths are already in px of a 224 px side and scale inside the corruption, and
frost's photograph and spatter's settings follow the side inside theirs (registry
``side_layers``). In
``imagenet-c`` mode, :func:`imagenet_c_samples` at side 32 returns CIFAR-10-C's five severities
(``corruptions.cifar_c``) instead of ImageNet-C's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from vcrbench.core.seeding import parameter_rng
from vcrbench.corruptions.registry import Corruption, get_corruption
from vcrbench.errors import VcrbenchError

SPACINGS = ("visual", "linear")
#: The spacing drawn from a scored pilot (:mod:`vcrbench.corruptions.adaptive`), not per sample.
ADAPTIVE = "adaptive"
#: The image side (px) the registry's domains are set for.
REFERENCE_SIDE = 224
#: The side at which ``imagenet-c`` mode uses CIFAR-10-C's severities.
CIFAR_SIDE = 32
_NORMAL = NormalDist()
#: Distances this close to 0 or 1 are moved inside before ``Φ⁻¹`` (which is infinite there).
_T_EDGE = 1e-12


def _side_of_clean(u: float, low: float, high: float, clean: float) -> tuple[bool, float]:
    """Whether ``u`` lies above the clean value (the longer side for ``u == clean``), and the
    length of that side of the domain."""
    upper = u > clean if u != clean else (high - clean) >= (clean - low)
    return upper, (high - clean) if upper else (clean - low)


def space_towards_clean(u: float, low: float, high: float, clean: float,
                        floor: float | None, power: float = 1.0) -> float:
    """Map a uniform draw ``u`` in ``[low, high]`` to ``clean ± D · floor ** ((1 − t) ** power)``.

    ``t = |u − clean| / D``, ``D`` the length of ``u``'s side of the domain (module docstring);
    ``floor`` None returns ``u`` (linear spacing). ``u == clean`` maps to ``clean ± D · floor``
    on the longer side.
    """
    if floor is None:
        return float(u)
    upper, side = _side_of_clean(u, low, high, clean)
    step = side * floor ** ((1.0 - abs(u - clean) / side) ** power)
    return float(min(high, clean + step) if upper else max(low, clean - step))


def couple_draws(draws: dict[str, float], spec: Corruption, shared: float) -> dict[str, float]:
    """Correlate a corruption's uniform draws through a Gaussian copula, marginals unchanged.

    Each draw ``u`` (uniform on its domain) is split into its side of the clean value and its
    normalised distance ``t = |u − c| / D`` (uniform on [0, 1]); ``t`` becomes
    ``Φ(√ρ · shared + √(1 − ρ) · Φ⁻¹(t))`` with ``ρ = spec.coupling`` and ``shared`` one standard
    normal draw per sample, so ``t`` stays uniform, the side keeps its probability and the
    distances of all parameters have Gaussian-copula correlation ``ρ``.
    """
    rho = spec.coupling
    out = {}
    for param, u in draws.items():
        low, high = spec.parameters[param]
        clean = spec.identity[param]
        upper, side = _side_of_clean(u, low, high, clean)
        t = min(max(abs(u - clean) / side, _T_EDGE), 1.0 - _T_EDGE)
        z = math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * _NORMAL.inv_cdf(t)
        step = side * _NORMAL.cdf(z)
        out[param] = min(high, clean + step) if upper else max(low, clean - step)
    return out


def _check_spacing(name: str, spacing: str, adaptive_hint: str) -> None:
    """``VcrbenchError`` unless ``spacing`` is drawn sample by sample (linear, visual); for
    ``adaptive``, ``adaptive_hint`` says where that design lives."""
    if spacing == ADAPTIVE:
        raise VcrbenchError(f"{name}: {adaptive_hint}")
    if spacing not in SPACINGS:
        raise VcrbenchError(f"unknown parameter spacing {spacing!r}; use one of "
                            f"{(*SPACINGS, ADAPTIVE)}")


def sample_parameters(name: str, rng: np.random.Generator,
                      spacing: str = "visual") -> dict[str, float]:
    """One parameter point over the whole domain, ``spacing`` as in the module docstring."""
    spec = get_corruption(name)
    _check_spacing(name, spacing, "adaptive spacing draws from a scored pilot, not sample by "
                   "sample; use vcrbench.corruptions.adaptive.adaptive_samples")
    draws = {param: float(rng.uniform(low, high)) for param, (low, high) in spec.parameters.items()}
    if spacing == "linear":
        return draws
    if spec.coupling > 0:
        draws = couple_draws(draws, spec, float(rng.standard_normal()))
    return {
        param: space_towards_clean(u, *spec.parameters[param], spec.identity[param],
                                   spec.spacing.get(param), spec.spacing_power.get(param, 1.0))
        for param, u in draws.items()
    }


def _check_side(side: object) -> int:
    if isinstance(side, bool) or not isinstance(side, (int, np.integer)) or side < 1:
        raise VcrbenchError(f"image side must be a positive integer (px), got {side!r}")
    return int(side)


def pixel_scale(side: int) -> float:
    """The factor ``side / 224`` by which pixel parameters' sampling domains scale."""
    return _check_side(side) / REFERENCE_SIDE


def scale_distance(distance: float, length: float, side: int,
                   threshold: float | None = None) -> float:
    """Where a pixel parameter's distance from its clean value, drawn for a 224 px image over a
    domain side of ``length``, lands for an image of ``side`` px (``side < 224``).

    Without ``threshold``: ``distance · side / 224``. With one (``pixel_thresholds``: below it
    the operation leaves the image unchanged): a distance up to the threshold stays where it is
    (a clean draw stays clean), and one above is moved log-linearly from ``[threshold, length]``
    onto ``[threshold, length · side / 224]``, so that the share of draws that change the image
    and their spread in the logarithm of the length (along which Δv grows) are those of the 224
    px run. (Scaling the whole draw would push most of it under the threshold: at 32 px, 57 to
    88 % of the blur, median-blur, motion-blur and glass-blur draws left the image unchanged.)
    When the scaled end is not above the threshold, the plain scaling is used.
    """
    scaled_length = length * side / REFERENCE_SIDE
    if threshold is None or scaled_length <= threshold or length <= threshold:
        return distance * side / REFERENCE_SIDE
    if distance <= threshold:
        return distance
    position = math.log(distance / threshold) / math.log(length / threshold)
    return threshold * (scaled_length / threshold) ** position


def scale_point(spec_or_name: str | Corruption, point: dict[str, float],
                side: int) -> dict[str, float]:
    """A parameter point drawn for a 224 px image, moved to an image of side ``side`` px.

    Each pixel parameter ``p`` (registry ``pixel_parameters``) moves towards its clean value:
    its distance ``d`` from ``identity[p]``, on the side of the domain it lies on (length
    ``D``), becomes :func:`scale_distance` ``(d, D, side, pixel_thresholds.get(p))``; the result
    is clipped to the registry's domain (for ``side`` above 224 the distance grows by
    ``side / 224`` and the clip acts; thresholds apply below 224 only). Other parameters are
    unchanged. At ``side == 224`` the point is returned as it is, without arithmetic (a copy),
    so 224 px runs stay byte-identical.
    """
    spec = spec_or_name if isinstance(spec_or_name, Corruption) else get_corruption(spec_or_name)
    side = _check_side(side)
    out = dict(point)
    if side == REFERENCE_SIDE:
        return out
    for param in spec.pixel_parameters:
        low, high = spec.parameters[param]
        clean = spec.identity[param]
        value = float(point[param])
        upper = value >= clean
        length = (high - clean) if upper else (clean - low)
        threshold = spec.pixel_thresholds.get(param) if side < REFERENCE_SIDE else None
        distance = scale_distance(abs(value - clean), length, side, threshold)
        scaled = clean + distance if upper else clean - distance
        out[param] = float(min(high, max(low, scaled)))
    return out


def uniform_samples(name: str, seed: int, sample_ids: Sequence[int],
                    spacing: str = "visual", side: int = REFERENCE_SIDE
                    ) -> list[dict[str, float]]:
    """Parameters of the given samples, each from ``parameter_rng(seed, name, sample_id)``,
    for images of side ``side`` px: drawn as for 224 px, then :func:`scale_point` (module
    docstring, "Image size"; a no-op at 224)."""
    spec = get_corruption(name)
    side = _check_side(side)
    points = [sample_parameters(name, parameter_rng(seed, name, int(i)), spacing)
              for i in sample_ids]
    if side == REFERENCE_SIDE:
        return points
    return [scale_point(spec, point, side) for point in points]


def sampling_definition(name: str, mode: str = "uniform", spacing: str = "visual",
                        side: int = REFERENCE_SIDE) -> dict[str, object]:
    """Everything in the registry that decides corruption ``name``'s parameter draws in
    ``mode`` (JSON-able): for ``uniform``, the domains and, with ``visual`` spacing, the clean
    values, floors, powers and coupling; for ``imagenet-c``, the parameter names and the five
    severities.

    At ``side`` 224 the dict is exactly what it was before image sizes existed (no new keys).
    At another side it also holds ``side`` and, for ``uniform``, the sorted
    ``pixel_parameters`` that scale (with ``linear`` spacing also ``clean``, their clean values,
    which the scaling moves towards); for ``imagenet-c``, ``severities``: the points
    :func:`imagenet_c_samples` returns at that side (CIFAR-10-C's at 32; the key is absent for
    a corruption without severities, as that call raises). In both modes, for a corruption
    whose operation takes something from the side (registry ``side_layers``: frost's photograph
    scale, spatter's settings), ``layers``: that, at this side; for a corruption whose code is
    past its first version (registry ``implementation``), ``implementation``: that version (the
    samples are the same draws, but their bytes are not, so their scores are remade).

    Spacing ``adaptive`` raises: its definition (the ``visual`` one with an ``adaptive`` key) is
    :func:`vcrbench.corruptions.adaptive.adaptive_sampling_definition`; ``visual`` and
    ``linear`` definitions are unchanged by its existence.

    The workflow passes it to the sampling rules as a parameter, so a registry change re-draws
    exactly the samples it touches on the next run instead of reusing stale ones.
    """
    spec = get_corruption(name)
    side = _check_side(side)
    if mode == "imagenet-c":
        out: dict[str, object] = {"parameters": list(spec.parameters), "imagenet_c": None if (
            spec.imagenet_c_severities is None) else [dict(level) for level in
                                                      spec.imagenet_c_severities]}
        if side != REFERENCE_SIDE:
            out["side"] = side
            if spec.imagenet_c_severities is not None:
                out["severities"] = imagenet_c_samples(name, side)
            if spec.side_layers is not None:
                out["layers"] = spec.side_layers(side)
        return _with_implementation(spec, out)
    _check_spacing(name, spacing, "the adaptive spacing's definition is "
                   "vcrbench.corruptions.adaptive.adaptive_sampling_definition")
    domains = {p: [low, high] for p, (low, high) in spec.parameters.items()}
    if spacing == "linear":
        out = {"parameters": domains}
    else:
        out = {
            "parameters": domains,
            "clean": dict(spec.identity),
            "log_floors": dict(spec.spacing),
            "powers": dict(spec.spacing_power),
            "coupling": spec.coupling,
        }
    if side != REFERENCE_SIDE:
        out["side"] = side
        out["pixel_parameters"] = sorted(spec.pixel_parameters)
        out["pixel_thresholds"] = dict(sorted(spec.pixel_thresholds.items()))
        if spacing == "linear":
            # the scaling moves values towards the clean one: the clean values now matter
            out["clean"] = {p: spec.identity[p] for p in sorted(spec.pixel_parameters)}
        if spec.side_layers is not None:
            out["layers"] = spec.side_layers(side)
    return _with_implementation(spec, out)


def _with_implementation(spec, definition: dict[str, object]) -> dict[str, object]:
    """``definition`` with the code's ``implementation`` version where it is past 1 (a version-1
    definition is unchanged, so runs made before versions existed stay valid)."""
    if spec.implementation > 1:
        definition["implementation"] = spec.implementation
    return definition


def imagenet_c_samples(name: str, side: int = REFERENCE_SIDE) -> list[dict[str, float]]:
    """ImageNet-C's five severities (1 to 5) in the registry's parameters; at ``side`` 32,
    CIFAR-10-C's (:func:`vcrbench.corruptions.cifar_c.cifar_c_severities`, in pixels of a 32 px
    image). ``VcrbenchError`` for a corruption without ImageNet-C severities."""
    spec = get_corruption(name)
    side = _check_side(side)
    if spec.imagenet_c_severities is None:
        with_c = [n for n, c in _registry().items() if c.imagenet_c_severities is not None]
        raise VcrbenchError(f"{name} has no ImageNet-C severities (it comes from "
                            f"{spec.source}); corruptions that do: {', '.join(with_c)}")
    if side == CIFAR_SIDE:
        from vcrbench.corruptions.cifar_c import cifar_c_severities

        return [{k: float(v) for k, v in level.items()} for level in cifar_c_severities(name)]
    return [{k: float(v) for k, v in level.items()} for level in spec.imagenet_c_severities]


def _registry():
    from vcrbench.corruptions.registry import CORRUPTIONS

    return CORRUPTIONS
