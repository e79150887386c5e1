"""The corruption registry and ``apply_corruption``, the one entry point that corrupts images.

Each ``Corruption`` names its source, its visual class, its parameters with their continuous
domains (each sampled over its own range with the entry's ``spacing``, see ``sampling``; the
paper's "whole domain", from the clean image to complete destruction), the five ImageNet-C
severities in the same parameters, the parameter values of the clean image (``identity``) and
of the most destroyed one (``strongest``), and a ``docs`` string on why the bounds are where
they are. ``DOMAIN_TABLE`` renders all of it as Markdown for the documentation.

Images are ``(B, 3, H, W)`` float32/float64 tensors in ``[0, 1]`` (RGB) on any device, ``H, W >=
32``. Outputs are ``(B, 3, H, W)`` uint8 on the same device, quantised by *rounding to nearest*
(``torch.round``: half to even) of ``clip(x, 0, 1) * 255``. (ImageNet-C returns floats in
``[0, 255]`` that ``imagecorruptions`` truncates with ``np.uint8``; Albumentations rounds; rounding
is unbiased, so our ImageNet-C outputs are on average half a grey level above the package's.)

Reproducibility: sample ``i``'s output depends only on its image, its parameters and its noise
seed; on one machine the bytes are identical whatever the batch composition and the number of
torch threads, and float32 vs float64 input or CPU vs GPU differ by float round-off only (one
grey level, on the values that sit at a rounding boundary: few for most corruptions, but
noc_rain's (p + 1) / 2 puts the even 8-bit values under one disc exactly on one, so there
0.5 % of all values differ at 12 discs, 4 % at 120, 6 % at 1,000, 3 % over its sample). All
randomness is drawn on the CPU from the per-sample seeds (``vcrbench.core.seeding``), never
from global generators.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import torch

from vcrbench.corruptions import (
    blur,
    colour,
    digital,
    imagenet_c_more,
    noc_figure,
    noc_table,
    noise,
    weather,
)
from vcrbench.errors import VcrbenchError

#: A batched corruption: images ``(B, 3, H, W)`` float in [0, 1], parameters as float64 arrays of
#: length B, B noise seeds -> float images in [0, 1] (quantised by ``apply_corruption``).
CorruptionFn = Callable[[torch.Tensor, dict[str, np.ndarray], Sequence[int]], torch.Tensor]

SOURCES = ("imagenet-c", "albumentations", "geirhos2018", "noc")
VISUAL_CLASSES = ("noise", "blur", "colour", "weather", "digital", "geometric", "occlusion")
MIN_SIZE = 32
MAX_SEED = 2**63


@dataclass(frozen=True)
class Corruption:
    """One corruption of the benchmark (see the module docstring for the fields' meaning)."""

    name: str
    source: str
    visual_class: str
    parameters: Mapping[str, tuple[float, float]]
    imagenet_c_severities: tuple[Mapping[str, float], ...] | None
    stochastic: bool
    identity: Mapping[str, float]
    strongest: Mapping[str, float]
    docs: str
    function: CorruptionFn = field(repr=False)
    #: ``visual`` parameter spacing (see ``corruptions.sampling``): parameter -> log floor f in
    #: (0, 1); the normalised distance from the clean value is drawn log-uniformly on [f, 1].
    #: Parameters not listed are spaced linearly.
    spacing: Mapping[str, float] = field(default_factory=dict)
    #: ``visual`` spacing: parameter (one with a floor) -> power g > 0 on the distance draw,
    #: ``f ** ((1 − t) ** g)``: 1 (default) is log-uniform, g > 1 moves samples towards the far
    #: end of the domain, g < 1 towards the floor.
    spacing_power: Mapping[str, float] = field(default_factory=dict)
    #: ``visual`` spacing: Gaussian-copula correlation ρ in [0, 1) between the parameters'
    #: distance draws (mild with mild, strong with strong); 0 draws them independently.
    coupling: float = 0.0
    #: The source's own range of each parameter where it publishes one instead of ImageNet-C's
    #: five severities (NOC's "severity range"), in the registry's units; inside the domain.
    source_range: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: Parameters that are lengths in pixels of the image at hand (ImageNet-C's and
    #: Albumentations' blurs): the domain is set for a 224 px image, and the *sampling* domain
    #: of these parameters scales with the image side (``sampling.scale_point``). Empty for
    #: parameters without a length and for NOC's, which are px of a 224 px side already.
    pixel_parameters: frozenset[str] = frozenset()
    #: Pixel parameter -> the distance from its clean value below which the discretised
    #: operation leaves every image unchanged (a Gaussian of radius ``int(4 sigma + 0.5)`` = 0
    #: below sigma 0.125 px, a shuffle of ``round(max_delta)`` = 0 px below 0.5, one motion tap
    #: below radius 0.5, an odd kernel of 1 below ksize 2). ``sampling.scale_point`` keeps the
    #: draws below it and stretches the ones above log-linearly; parameters not listed scale
    #: linearly.
    pixel_thresholds: Mapping[str, float] = field(default_factory=dict)
    #: Settings of the operation that a given point may set and continuous draws never do:
    #: name -> ``(low, high, default)``. A point without a setting (every drawn sample) gets its
    #: default, so draws and their bytes do not change; severity tables set them where a
    #: source's constants are not on the registry's domain (CIFAR-10-C's snow: its layer's
    #: spread, its blur radius and its layer's order of steps).
    settings: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)
    #: Parameter -> a wider range that *given* points may use (severity tables) while draws
    #: still cover ``parameters`` (CIFAR-10-C's snow flakes at zoom 1, under the drawn 1.5).
    point_domain: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: What the operation itself takes from the image side (px -> JSON-able, None where it
    #: takes nothing): frost's photograph scale, spatter's table of settings. It is part of
    #: ``sampling.sampling_definition`` at sides other than 224, so runs remake such samples
    #: when it changes.
    side_layers: Callable[[int], object] | None = field(default=None, repr=False)
    #: The version of the operation's code that makes the bytes: 1 for the first (per-sample
    #: numpy draws), 2 for the batched device code with counter-based (Philox) draws. It is part
    #: of ``sampling.sampling_definition`` from 2 on, so runs made with older code re-score
    #: those samples instead of failing their checksums.
    implementation: int = 1

    def __post_init__(self) -> None:
        if self.source not in SOURCES or self.visual_class not in VISUAL_CLASSES:
            raise ValueError(f"{self.name}: bad source or visual class")
        settings = {k: tuple(float(v) for v in rng) for k, rng in self.settings.items()}
        if set(settings) & set(self.parameters) or not all(
                len(r) == 3 and r[0] <= r[2] <= r[1] for r in settings.values()):
            raise ValueError(f"{self.name}: settings map new names to (low, high, default)")
        object.__setattr__(self, "settings", MappingProxyType(settings))
        wider = {p: (float(lo), float(hi)) for p, (lo, hi) in self.point_domain.items()}
        if set(wider) - set(self.parameters) or not all(
                wider[p][0] <= self.parameters[p][0] and self.parameters[p][1] <= wider[p][1]
                for p in wider):
            raise ValueError(f"{self.name}: point_domain widens parameters' domains")
        object.__setattr__(self, "point_domain", MappingProxyType(wider))
        object.__setattr__(self, "parameters", MappingProxyType(dict(self.parameters)))
        object.__setattr__(self, "identity", MappingProxyType(dict(self.identity)))
        object.__setattr__(self, "strongest", MappingProxyType(dict(self.strongest)))
        spacing = {p: float(f) for p, f in self.spacing.items()}
        if set(spacing) - set(self.parameters) or not all(0 < f < 1 for f in spacing.values()):
            raise ValueError(f"{self.name}: spacing maps its parameters to floors in (0, 1)")
        object.__setattr__(self, "spacing", MappingProxyType(spacing))
        powers = {p: float(g) for p, g in self.spacing_power.items()}
        if set(powers) - set(spacing) or not all(0 < g < np.inf for g in powers.values()):
            raise ValueError(f"{self.name}: spacing_power maps floored parameters to powers > 0")
        object.__setattr__(self, "spacing_power", MappingProxyType(powers))
        pixel = frozenset(self.pixel_parameters)
        if pixel - set(self.parameters):
            raise ValueError(f"{self.name}: pixel_parameters must be parameters of the entry")
        object.__setattr__(self, "pixel_parameters", pixel)
        thresholds = {p: float(t) for p, t in self.pixel_thresholds.items()}
        if set(thresholds) - pixel or not all(t > 0 for t in thresholds.values()):
            raise ValueError(f"{self.name}: pixel_thresholds map pixel parameters to distances > 0")
        object.__setattr__(self, "pixel_thresholds", MappingProxyType(thresholds))
        if not (isinstance(self.implementation, int) and self.implementation >= 1):
            raise ValueError(f"{self.name}: implementation is a version number >= 1")
        if not 0 <= self.coupling < 1:
            raise ValueError(f"{self.name}: coupling is a correlation in [0, 1)")
        if self.imagenet_c_severities is not None:
            object.__setattr__(self, "imagenet_c_severities", tuple(
                MappingProxyType(dict(level)) for level in self.imagenet_c_severities))
            if len(self.imagenet_c_severities) != 5:
                raise ValueError(f"{self.name}: ImageNet-C has five severities")
        for point in (self.identity, self.strongest, *(self.imagenet_c_severities or ())):
            validate_point(self, point)
        ranges = {p: (float(lo), float(hi)) for p, (lo, hi) in self.source_range.items()}
        object.__setattr__(self, "source_range", MappingProxyType(ranges))
        for param, (low, high) in ranges.items():
            if low > high:
                raise ValueError(f"{self.name}: source_range of {param!r} is not an interval")
            validate_point(self, {**self.identity, param: low})
            validate_point(self, {**self.identity, param: high})


def validate_point(spec: Corruption, point: Mapping[str, float]) -> None:
    """Check one parameter point (names and domains) against a corruption's domain."""
    validate_parameters(spec, {k: [v] for k, v in point.items()})


def _entry(name: str, source: str, visual_class: str, parameters: dict[str, tuple[float, float]],
           severities: list[tuple[float, ...]] | None, stochastic: bool,
           identity: tuple[float, ...], strongest: tuple[float, ...], docs: str,
           function: CorruptionFn, spacing: dict[str, float] | None = None,
           spacing_power: dict[str, float] | None = None, coupling: float = 0.0,
           source_range: dict[str, tuple[float, float]] | None = None,
           pixel_parameters: tuple[str, ...] = (),
           pixel_thresholds: dict[str, float] | None = None,
           settings: dict[str, tuple[float, float, float]] | None = None,
           point_domain: dict[str, tuple[float, float]] | None = None,
           side_layers: Callable[[int], object] | None = None,
           implementation: int = 1) -> Corruption:
    names = list(parameters)
    return Corruption(
        name=name, source=source, visual_class=visual_class, parameters=parameters,
        imagenet_c_severities=None if severities is None else tuple(
            dict(zip(names, level, strict=True)) for level in severities),
        stochastic=stochastic,
        identity=dict(zip(names, identity, strict=True)),
        strongest=dict(zip(names, strongest, strict=True)),
        docs=" ".join(docs.split()), function=function, spacing=spacing or {},
        spacing_power=spacing_power or {}, coupling=coupling, source_range=source_range or {},
        pixel_parameters=frozenset(pixel_parameters), pixel_thresholds=pixel_thresholds or {},
        settings=settings or {}, point_domain=point_domain or {}, side_layers=side_layers,
        implementation=implementation)


def get_corruption(name: str) -> Corruption:
    """The registry entry of a corruption; ``VcrbenchError`` listing the known names if unknown."""
    try:
        return CORRUPTIONS[name]
    except (KeyError, TypeError):
        raise VcrbenchError(
            f"unknown corruption {name!r}; known: {', '.join(CORRUPTIONS)}") from None


def _as_array(name: str, param: str, values: object) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise VcrbenchError(f"{name}: parameter {param!r} must be numbers") from None
    return arr.reshape(-1) if arr.ndim == 0 else arr


def validate_parameters(name: str | Corruption, params: Mapping[str, object]) -> None:
    """Check that ``params`` has exactly the corruption's parameters, and perhaps some of its
    settings, all inside their domains (a parameter's ``point_domain`` where it has one).

    Values may be scalars or 1-D sequences / arrays / tensors. Raises ``VcrbenchError`` naming
    the offending parameter and its domain.
    """
    spec = name if isinstance(name, Corruption) else get_corruption(name)
    if not isinstance(params, Mapping):
        raise VcrbenchError(f"{spec.name}: parameters must be a mapping of name -> values")
    expected = list(spec.parameters)
    unknown = [p for p in params if p not in spec.parameters and p not in spec.settings]
    if unknown:
        optional = f" (settings: {', '.join(spec.settings)})" if spec.settings else ""
        raise VcrbenchError(f"{spec.name}: unknown parameter(s) {', '.join(map(repr, unknown))};"
                            f" expected {', '.join(expected)}{optional}")
    missing = [p for p in expected if p not in params]
    if missing:
        raise VcrbenchError(f"{spec.name}: missing parameter(s) {', '.join(map(repr, missing))};"
                            f" expected {', '.join(expected)}")
    domains = {**{p: spec.point_domain.get(p, rng) for p, rng in spec.parameters.items()},
               **{k: (low, high) for k, (low, high, _) in spec.settings.items() if k in params}}
    for param, (low, high) in domains.items():
        arr = _as_array(spec.name, param, params[param])
        if arr.ndim != 1:
            raise VcrbenchError(f"{spec.name}: parameter {param!r} must be one value per sample")
        bad = ~((arr >= low) & (arr <= high))
        if bad.any():
            raise VcrbenchError(
                f"{spec.name}: parameter {param!r} = {float(arr[bad][0])!r} is outside its domain "
                f"[{low:g}, {high:g}]")


def _check_images(images: object) -> torch.Tensor:
    if not isinstance(images, torch.Tensor):
        raise VcrbenchError(f"images must be a torch.Tensor, got {type(images).__name__}")
    if images.dtype not in (torch.float32, torch.float64):
        raise VcrbenchError(f"images must be float32 or float64 in [0, 1], got {images.dtype}")
    if images.ndim != 4 or images.shape[1] != 3:
        raise VcrbenchError(f"images must have shape (B, 3, H, W), got {tuple(images.shape)}")
    h, w = images.shape[2:]
    if h < MIN_SIZE or w < MIN_SIZE:
        raise VcrbenchError(f"images must be at least {MIN_SIZE} x {MIN_SIZE} px, got {h} x {w}")
    if images.numel():
        low, high = torch.aminmax(images)
        if not (bool(low >= 0) and bool(high <= 1)):
            raise VcrbenchError("image values must lie in [0, 1] (and be finite)")
    return images


def _check_seeds(seeds: object, batch: int) -> list[int]:
    try:
        out = [int(s) for s in seeds]  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise VcrbenchError("noise_seeds must be a sequence of integers") from None
    if len(out) != batch:
        raise VcrbenchError(f"got {len(out)} noise seeds for {batch} images")
    if any(s < 0 or s >= MAX_SEED for s in out):
        raise VcrbenchError("noise seeds must be integers in [0, 2**63)")
    return out


def apply_corruption(name: str, images: torch.Tensor,
                     params: Mapping[str, torch.Tensor | np.ndarray | Sequence[float]],
                     noise_seeds: Sequence[int]) -> torch.Tensor:
    """Corrupt a batch: ``(B, 3, H, W)`` float in [0, 1] -> ``(B, 3, H, W)`` uint8, same device.

    ``params`` maps every parameter of the corruption to B values (one per image), and
    ``noise_seeds`` holds B per-sample seeds (``core.seeding.noise_seed``), the only source
    of randomness. Deterministic corruptions ignore the seeds but still check them.
    """
    spec = get_corruption(name)
    images = _check_images(images)
    batch = images.shape[0]
    validate_parameters(spec, params)
    arrays = {p: _as_array(spec.name, p, params[p])
              for p in (*spec.parameters, *(k for k in spec.settings if k in params))}
    for param, arr in arrays.items():
        if arr.shape != (batch,):
            raise VcrbenchError(f"{spec.name}: parameter {param!r} has {arr.size} values for "
                                f"{batch} images")
    seeds = _check_seeds(noise_seeds, batch)
    if batch == 0:
        return torch.empty(images.shape, dtype=torch.uint8, device=images.device)
    # one memory layout for everyone (e.g. a permuted HWC batch): same speed, same bytes
    images = images.contiguous()
    with _exact_float32(images.device):
        out = spec.function(images, arrays, seeds)
    out = out * 255.0  # a new tensor: the in-place steps below never touch the caller's
    return out.clamp_(0.0, 255.0).round_().to(torch.uint8)


def corrupt_uint8(name: str, clean: np.ndarray, params: Mapping[str, np.ndarray],
                  noise_seeds: Sequence[int], device: torch.device) -> np.ndarray:
    """:func:`apply_corruption` on prepared images: ``(B, H, W, 3)`` uint8 RGB in and out
    (numpy, on the CPU); the work is done on ``device``."""
    batch = torch.from_numpy(clean).to(device).permute(0, 3, 1, 2).to(torch.float32) / 255.0
    out = apply_corruption(name, batch, params, [int(s) for s in noise_seeds])
    return out.permute(0, 2, 3, 1).contiguous().cpu().numpy()


class _exact_float32:
    """Turn off TF32 matmul/convolutions on CUDA while corrupting (they change the bytes)."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"

    def __enter__(self) -> None:
        if self.cuda:
            self.saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False

    def __exit__(self, *exc: object) -> None:
        if self.cuda:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = self.saved


#: How the domains' bounds were chosen (for the documentation; each entry's ``docs`` has details).
BOUNDS_RATIONALE = " ".join("""
The lower end of every domain (or the ``identity`` point) is the clean image. The upper end is
where a 224 px image has no usable visual information left, checked with the reference VIF
(tests/helpers/vif_reference.py) on 8 ImageNet validation images: dv = 1 - VIF reaches its floor
there (about 0.97, the dv of an unrelated image or of pure noise) or, for the noises, whose dv
only creeps towards that floor, the per-pixel correlation with the clean image has fallen to
about 0.2. Quoted dv values are means over those images; the dv of the five ImageNet-C
severities shows how little of the range they span. Parameters are in the units of the source
library, on images in [0, 1] (noise) or in pixels (blur).
""".split())

#: The blurs' domain ends, owned by the operation (tables and FFT planes are sized by them).
_GLASS_HIGH = tuple(blur.DOMAIN_HIGH["glass_blur", p] for p in ("sigma", "max_delta", "iterations"))
_GAUSSIAN_HIGH = blur.DOMAIN_HIGH["gaussian_blur", "sigma"]
_DEFOCUS_RADIUS_HIGH = blur.DOMAIN_HIGH["defocus_blur", "radius"]
_MOTION_HIGH = tuple(blur.DOMAIN_HIGH["motion_blur", p] for p in ("radius", "sigma"))

_ENTRIES = [
    _entry(
        "shot_noise", "imagenet-c", "noise", {"noise_scale": (0.0, 2.5)},
        [(60 ** -0.5,), (25 ** -0.5,), (12 ** -0.5,), (5 ** -0.5,), (3 ** -0.5,)],
        True, (0.0,), (2.5,),
        """x' = clip(poisson(x * lam) / lam) with lam = 1 / noise_scale^2 photons at white:
        noise_scale is the noise standard deviation at a white pixel (noise_scale * sqrt(x) at
        value x), so the noise grows linearly with it. ImageNet-C's lam = 60, 25, 12, 5, 3 are
        noise_scale = 0.13, 0.20, 0.29, 0.45, 0.58 (dv 0.53 to 0.80). Sampling lam uniformly
        (noise exponential in the parameter) starves small dv, which is why the paper reached
        only 0.59 coverage. 0 is the clean image; at 2.5 (lam = 0.16) a sparse binary speckle
        is left, pixel correlation 0.19, dv 0.93 (noise never quite reaches the 0.97 floor).""",
        noise.shot_noise, spacing={"noise_scale": 0.003}, implementation=2),
    _entry(
        "impulse_noise", "imagenet-c", "noise", {"amount": (0.0, 1.0)},
        [(0.03,), (0.06,), (0.09,), (0.17,), (0.27,)],
        True, (0.0,), (1.0,),
        """Salt and pepper per pixel and channel (skimage random_noise 's&p', as ImageNet-C):
        each value is replaced with probability amount, by 0 or 1 with equal odds. The domain
        is all of [0, 1]: 0 is the clean image, 1 pure noise (dv 0.98). ImageNet-C: dv 0.55 to
        0.80.""",
        noise.impulse_noise, spacing={"amount": 0.0003}, implementation=2),
    _entry(
        "gaussian_noise", "imagenet-c", "noise", {"sigma": (0.0, 1.5)},
        [(0.08,), (0.12,), (0.18,), (0.26,), (0.38,)],
        True, (0.0,), (1.5,),
        """x' = clip(x + N(0, sigma^2)) per pixel and channel on [0, 1] images (ImageNet-C:
        sigma 0.08 to 0.38, dv 0.51 to 0.80). At 1.5 the noise has six times the standard
        deviation of a typical image and clipping leaves an almost binary image: pixel
        correlation 0.19, dv 0.93.""",
        noise.gaussian_noise, spacing={"sigma": 0.003}, implementation=2),
    _entry(
        "glass_blur", "imagenet-c", "blur",
        {"sigma": (0.0, _GLASS_HIGH[0]), "max_delta": (0.0, _GLASS_HIGH[1]),
         "iterations": (0.0, _GLASS_HIGH[2])},
        [(0.7, 1, 2), (0.9, 2, 1), (1.0, 2, 3), (1.1, 3, 2), (1.5, 4, 2)],
        True, (0.0, 0.0, 0.0), _GLASS_HIGH,
        """ImageNet-C glass blur: Gaussian blur (sigma px), truncation to 8 bits, `iterations`
        passes of local pixel shuffling within max_delta px (draws from the seed), Gaussian blur
        again. max_delta and iterations are integers: the continuous value is rounded half up
        (the end values get half-width intervals). ImageNet-C stops at (1.5, 4, 2), dv 0.73 to
        0.86; at (6, 12, 4) dv is 0.96. sigma and max_delta are in pixels of the image at hand;
        their sampling domain scales with the image side (the domain is for 224 px;
        sampling.scale_point).""",
        blur.glass_blur, spacing={"sigma": 0.05, "max_delta": 0.003},
        spacing_power={"sigma": 0.7, "max_delta": 0.7}, coupling=0.5,
        pixel_parameters=("sigma", "max_delta"),
        pixel_thresholds={"sigma": 0.125, "max_delta": 0.5}, implementation=2),
    _entry(
        "gaussian_blur", "imagenet-c", "blur", {"sigma": (0.0, _GAUSSIAN_HIGH)},
        [(1.0,), (2.0,), (3.0,), (4.0,), (6.0,)],
        False, (0.0,), (_GAUSSIAN_HIGH,),
        """skimage gaussian (truncate 4, edges replicated), standard deviation sigma px;
        ImageNet-C: 1 to 6 (dv 0.28 to 0.83). 40 px is also the strongest low-pass condition of
        the human experiments of Geirhos et al. (2018) on 224 px images; dv 0.98. sigma is in
        pixels of the image at hand; its sampling domain scales with the image side (the domain
        is for 224 px; sampling.scale_point).""",
        blur.gaussian_blur, spacing={"sigma": 0.01}, pixel_parameters=("sigma",),
        pixel_thresholds={"sigma": 0.125}, implementation=2),
    _entry(
        "defocus_blur", "imagenet-c", "blur",
        {"radius": (0.0, _DEFOCUS_RADIUS_HIGH), "alias_blur": (0.1, 0.5)},
        [(3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5)],
        False, (0.0, 0.1), (_DEFOCUS_RADIUS_HIGH, 0.5),
        """ImageNet-C defocus: correlation with a disk x^2 + y^2 <= radius^2 (px, continuous;
        under 1 the disk is one pixel) smoothed by a Gaussian of standard deviation alias_blur,
        reflected borders. alias_blur spans ImageNet-C's two values (at 0.1 the smoothing is
        the identity). ImageNet-C: radius 3 to 10, dv 0.45 to 0.84; at radius 30 dv is 0.97.
        radius is in pixels of the image at hand; its sampling domain scales with the image
        side (the domain is for 224 px; sampling.scale_point). Given points may set alias_blur
        up to 0.6 (CIFAR-10-C's severity 3: corruptions.cifar_c); draws keep 0.1 to 0.5.""",
        blur.defocus_blur, spacing={"radius": 0.01}, pixel_parameters=("radius",),
        point_domain={"alias_blur": (0.1, blur.DOMAIN_HIGH["defocus_blur", "alias_blur"])},
        implementation=2),
    _entry(
        "motion_blur", "imagenet-c", "blur",
        {"radius": (0.0, _MOTION_HIGH[0]), "sigma": (0.0, _MOTION_HIGH[1])},
        [(10, 3), (15, 5), (15, 8), (15, 12), (20, 15)],
        True, (0.0, 0.0), _MOTION_HIGH,
        """ImageNet-C motion blur: a one-sided Gaussian streak (standard deviation sigma px) over
        2 * round(radius) + 1 taps, in a direction drawn from the seed, uniform in [-45, 45]
        degrees as in ImageNet-C. Either parameter at 0 is the clean image. ImageNet-C: (10, 3)
        to (20, 15), dv 0.75 to 0.93; at (100, 60) dv is 0.96 (structure across the streak
        survives longest). radius and sigma are in pixels of the image at hand; their sampling
        domain scales with the image side (the domain is for 224 px; sampling.scale_point).""",
        blur.motion_blur, spacing={"radius": 0.006, "sigma": 0.006},
        spacing_power={"radius": 0.5, "sigma": 0.5}, coupling=0.7,
        pixel_parameters=("radius", "sigma"), pixel_thresholds={"radius": 0.5},
        implementation=2),
    _entry(
        "brightness", "imagenet-c", "colour", {"shift": (0.0, 1.0)},
        [(0.1,), (0.2,), (0.3,), (0.4,), (0.5,)],
        False, (0.0,), (1.0,),
        """ImageNet-C brightness: V <- clip(V + shift) in HSV, the whole possible range. At 1
        every pixel has V = 1 and only hue and saturation are left (grey turns white): dv 0.88
        on average, up to 1 for dull images. ImageNet-C: dv 0.31 to 0.77. (ImageNet-C groups
        brightness under 'weather'; visually it is a colour change.)""",
        colour.brightness, spacing={"shift": 0.01}, spacing_power={"shift": 2.0}),
    _entry(
        "frost", "imagenet-c", "weather",
        {"image_weight": (0.0, 1.0), "frost_weight": (0.0, 1.0)},
        [(1.0, 0.4), (0.8, 0.6), (0.7, 0.7), (0.65, 0.7), (0.6, 0.75)],
        True, (1.0, 0.0), (0.0, 1.0),
        """ImageNet-C frost: clip(image_weight * x + frost_weight * frost), a crop of a real
        frost photograph (which one and where from the seed). Both mixing coefficients are
        sampled over [0, 1]: (1, 0) is the clean image, (0, 1) the photograph alone (dv 0.98).
        ImageNet-C's five pairs lie on image_weight + frost_weight = 1.35 to 1.4, dv 0.61 to
        0.76.""",
        weather.frost, spacing={"frost_weight": 0.003}, coupling=0.8,
        side_layers=lambda side: weather.frost_scale(side, side), implementation=2),
    _entry(
        "blur", "albumentations", "blur", {"ksize": (1.0, float(blur.BOX_KSIZE_MAX))},
        None, False, (1.0,), (float(blur.BOX_KSIZE_MAX),),
        """Albumentations Blur: a ksize x ksize box filter (cv2.blur, reflected borders), ksize
        rounded to the nearest odd integer; 1 is the clean image, Albumentations' default is 3
        to 7. At 51 dv is 0.98. ksize is in pixels of the image at hand; its sampling domain
        scales with the image side (the domain is for 224 px;
        sampling.scale_point).""",
        blur.box_blur, spacing={"ksize": 0.01}, pixel_parameters=("ksize",),
        pixel_thresholds={"ksize": 1.0}, implementation=2),
    _entry(
        "median_blur", "albumentations", "blur", {"ksize": (1.0, float(blur.MEDIAN_KSIZE_MAX))},
        None, False, (1.0,), (float(blur.MEDIAN_KSIZE_MAX),),
        """Albumentations MedianBlur: cv2.medianBlur on 8-bit pixels, borders replicated, ksize
        rounded to the nearest odd integer (1 is the clean image). The median keeps edges, so it
        needs a wider window than the box: dv 0.96 at 101, 0.98 at 201. ksize is in pixels of the
        image at hand; its sampling domain scales with the image side (the domain is for 224
        px; sampling.scale_point).""",
        blur.median_blur, spacing={"ksize": 0.0045}, spacing_power={"ksize": 0.4},
        pixel_parameters=("ksize",), pixel_thresholds={"ksize": 1.0}),
    _entry(
        "hue_saturation_value", "albumentations", "colour",
        {"hue_shift": (-90.0, 90.0), "sat_shift": (-255.0, 255.0), "val_shift": (-255.0, 255.0)},
        None, False, (0.0, 0.0, 0.0), (90.0, -255.0, -255.0),
        """Albumentations HueSaturationValue in its 8-bit units: hue_shift in OpenCV hue units
        (180 per turn, so +-90 covers every rotation), sat_shift and val_shift added to S and V
        on a 0-255 scale and clipped (grey pixels stay grey), each over its whole range. (0, 0,
        0) is the clean image; val_shift = -255 is black (dv 1), +255 sets V = 1 everywhere.""",
        colour.hue_saturation_value,
        spacing={"hue_shift": 0.01, "sat_shift": 0.003, "val_shift": 0.01}, coupling=0.7),
    _entry(
        "color_jitter", "albumentations", "colour",
        {"brightness": (0.0, 2.0), "contrast": (0.0, 2.0), "saturation": (0.0, 2.0),
         "hue": (-0.5, 0.5)},
        None, True, (1.0, 1.0, 1.0, 0.0), (0.0, 0.0, 0.0, 0.5),
        """Albumentations ColorJitter with given factors: brightness, contrast and saturation
        multiply (1 is the clean image; 0 gives black, flat grey, greyscale), hue rotates by a
        fraction of a turn. [0, 2] is the widest symmetric range Albumentations allows (limit 1:
        factors 1 - 1 to 1 + 1), [-0.5, 0.5] its whole hue range. The order of the four steps is
        random per image, as in Albumentations, drawn from the seed. Brightness or contrast 0
        gives dv 1.""",
        colour.color_jitter, spacing={"hue": 0.003}, coupling=0.5, implementation=2),
    _entry(
        "uniform_noise", "geirhos2018", "noise", {"width": (0.0, 2.6)},
        None, True, (0.0,), (2.6,),
        """x' = clip(x + U[-width, width]) per pixel and channel on [0, 1] images. (Geirhos et
        al. 2018 add it to greyscale images at 30 % contrast, widths 0 to 0.9; here colour
        images at full contrast, like the other noises.) The bound 2.6 = sqrt(3) * 1.5 has the
        standard deviation of the strongest Gaussian noise: pixel correlation 0.13, dv 0.94.""",
        noise.uniform_noise, spacing={"width": 0.001}, implementation=2),
]


# ImageNet-C, the rest of its 15 (Hendrycks & Dietterich 2019): zoom blur, snow, fog,
# elastic transform.
_ENTRIES += [
    _entry(
        "zoom_blur", "imagenet-c", "blur", {"zoom": (1.0, 3.0)},
        [(1.11,), (1.15,), (1.20,), (1.24,), (1.30,)],
        False, (1.0,), (3.0,),
        """ImageNet-C zoom blur: the mean of the image and its copies enlarged about the centre
        (clipped_zoom: bilinear, top-left crop) by factors from 1 to zoom. Up to 1.3, ImageNet-C's
        factors 1, 1 + s, ..., zoom with its steps s = 0.01 (to 1.15), 0.02 (1.20 to 1.24), 0.03
        (1.3), interpolated in between; the number of copies is ceil((zoom - 1) / s), so zoom is
        continuous up to steps of one copy. ImageNet-C's five severities are zoom = 1.11, 1.15,
        1.20, 1.24, 1.30 (its np.arange(1, 1.11, 0.01) ends at 1.11), dv 0.81 to 0.89: zoom blur
        is strong from the first severity. ImageNet-C's crops are whole pixels, so below its
        range the image would be a step function of zoom (no change below 224 / 223 at 224 px,
        then dv 0.3 at once): below 1.05 the copies are enlarged exactly about the centre (dv
        0.02 at 1.001, 0.28 at 1.01, 0.67 at 1.05), from 1.11 on as ImageNet-C, mixed linearly
        in between. Beyond 1.3 (not in ImageNet-C) the same mean over z uniform on [1, zoom] is
        a quadrature in 1 / z (evenly spaced copies along the radial streaks, 30 at zoom 3)
        instead of 68 evenly spaced factors. The centre of the image is never blurred, so dv
        levels off: 0.946 at zoom 2, 0.952 at 3. Setting that given points may set (draws
        never do): cifar_factors (0; 1 = CIFAR-10-C's factors: 1, 1.01, ... up to zoom, every
        copy ImageNet-C's clipped_zoom trimmed about its centre, no enlargements about the
        centre below 1.11; corruptions.cifar_c).""",
        imagenet_c_more.zoom_blur, spacing={"zoom": 0.0003},
        settings={"cifar_factors": (0.0, 1.0, 0.0)}),
    _entry(
        "snow", "imagenet-c", "weather",
        {"snow_mean": (0.0, 1.5), "threshold": (0.5, 0.9), "flake_zoom": (1.5, 5.0),
         "blur_sigma": (2.0, 12.0), "blend": (0.0, 1.0), "opacity": (0.0, 1.0)},
        [(0.1, 0.5, 3.0, 4.0, 0.8, 1.0), (0.2, 0.5, 2.0, 4.0, 0.7, 1.0),
         (0.55, 0.9, 4.0, 8.0, 0.7, 1.0), (0.55, 0.85, 4.5, 8.0, 0.65, 1.0),
         (0.55, 0.85, 2.5, 12.0, 0.55, 1.0)],
        True, (0.0, 0.9, 1.5, 2.0, 1.0, 0.0), (1.5, 0.5, 5.0, 12.0, 0.0, 1.0),
        """ImageNet-C snow: a layer N(snow_mean, 0.3) per pixel (from the seed) enlarged
        flake_zoom times (clipped_zoom), values under threshold set to 0, clipped to [0, 1],
        motion-blurred with ImageNet-C's own kernel (radius 12, standard deviation blur_sigma
        px, direction U(-135, -45) degrees from the seed; imagecorruptions' numpy blur, where the
        original used ImageMagick's), rounded to 8 bits. The image is whitened and greyed,
        x' = blend x + (1 - blend) max(x, 1.5 grey + 0.5), and the layer and its 180 degree
        rotation added: clip(x' + opacity (L + rot180 L)). opacity is new (ImageNet-C: 1) so
        that (opacity 0, blend 1) is the clean image; at (1.5, 0.5, ..., blend 0, opacity 1) the
        snow covers everything (a white image, dv 1). ImageNet-C's severities (its radius 10 at
        severity 1 gives the same layer to 1e-5): dv 0.72, 0.80, 0.82, 0.86, 0.84. Settings
        that given points may set (draws never do): layer_std (0.3), blur_radius (12 px),
        cifar_layer (0; 1 = CIFAR-10-C's order of steps: the zoomed layer trimmed about its
        centre, thresholded, truncated to 8 bits, then blurred); given points may zoom the
        flakes from 1 (CIFAR-10-C's severities: corruptions.cifar_c).""",
        imagenet_c_more.snow, spacing={"snow_mean": 0.003, "opacity": 0.01, "blend": 0.0003},
        spacing_power={"snow_mean": 1.4, "opacity": 1.4, "blend": 1.4},
        settings={"layer_std": (0.05, 1.0, imagenet_c_more.SNOW_STD),
                  "blur_radius": (1.0, 30.0, imagenet_c_more.SNOW_BLUR_RADIUS),
                  "cifar_layer": (0.0, 1.0, 0.0)},
        point_domain={"flake_zoom": (1.0, 5.0)}),
    _entry(
        "fog", "imagenet-c", "weather", {"fog_weight": (0.0, 1.0), "decay": (1.4, 2.0)},
        [(1.5 / 2.5, 2.0), (2.0 / 3.0, 2.0), (2.5 / 3.5, 1.7), (2.5 / 3.5, 1.5), (3.0 / 4.0, 1.4)],
        True, (0.0, 2.0), (1.0, 1.4),
        """ImageNet-C fog: a plasma fractal p in [0, 1] (diamond-square on the next power-of-two
        square, noise amplitude divided by decay per octave, drawn from the seed) added to
        every channel, ImageNet-C's clip((x + c p) m / (m + c)) with m the image's largest
        value, written with fog_weight w = c / (1 + c): clip(((1 - w) x + w p) m / ((1 - w) m
        + w)). w = 0 is the clean image, w = 1 the fog alone (m p), dv 0.97. ImageNet-C's c =
        1.5, 2, 2.5, 2.5, 3 (w = 0.6 to 0.75) with decay 2, 2, 1.7, 1.5, 1.4 (rougher fog for
        smaller decay, the whole range of decay here): dv 0.53, 0.59, 0.71, 0.79, 0.86. Given
        points may set decay up to 3 (smoother fog; CIFAR-10-C's 3 and 2.5 at its severities 1
        to 3: corruptions.cifar_c); draws keep 1.4 to 2.""",
        imagenet_c_more.fog, point_domain={"decay": (1.4, 3.0)}),
    _entry(
        "elastic_transform", "imagenet-c", "digital",
        {"alpha": (0.0, 500.0), "sigma": (1.0, 200.0), "affine": (0.0, 50.0)},
        [(488.0, 170.8, 24.4), (488.0, 19.52, 48.8), (12.2, 2.44, 4.88), (17.08, 2.44, 4.88),
         (29.28, 2.44, 4.88)],
        True, (0.0, 200.0, 0.0), (500.0, 1.0, 50.0),
        """ImageNet-C elastic transform (the published data set's make_imagenet_c.py): a random
        affine, three points at +-min(H, W) // 3 px around the centre moved by U(-affine, affine)
        px each (cv2.warpAffine, bilinear, reflected borders), then out(y, x) = in(y + dy, x +
        dx) (bilinear, reflected) with dx, dy = alpha * G_sigma * U(-1, 1) fields (Gaussian of
        sigma px, truncated at 3 sigma, reflected), all draws from the seed. Units are pixels of
        the image at hand (ImageNet-C's were set for 224 px: 244 * (2, 0.7, 0.1), ...). Its five
        severities are odd at 224 px: 1 and 2 are large smooth warps with 24 and 49 px of affine
        jitter (dv 0.96, 0.97), 3 to 5 a fine 2.4 px ripple with 4.9 px of jitter (dv 0.84 to
        0.88). imagecorruptions 1.1.2 (the peer) drops the affine and scales with the image:
        alpha = 0.005 H * (12.5, 16.25, 21.25, 25, 30), sigma = 0.01 H, affine 0, i.e. (14 to
        33.6, 2.24, 0) at 224 px, dv 0.70 to 0.84. alpha = affine = 0 is the clean image (sigma
        200, the smoothest field, is its clean side); at (500, 1, 50) the pixels are scattered
        by about 80 px and dv is 0.98. Given points may set sigma from 0 (an unsmoothed
        field; CIFAR-10-C's 0 and 0.96 px at its severities 1 and 5: corruptions.cifar_c);
        draws keep 1 to 200.""",
        imagenet_c_more.elastic_transform, spacing={"alpha": 0.01, "affine": 0.0003},
        spacing_power={"alpha": 0.7, "affine": 0.7}, point_domain={"sigma": (0.0, 200.0)}),
]

# ImageNet-C, the rest of its 15 and its extras: contrast, pixelate, JPEG compression;
# speckle noise, spatter, saturate.

_ENTRIES += [
    _entry(
        "contrast", "imagenet-c", "digital", {"contrast": (0.0, 1.0)},
        [(0.4,), (0.3,), (0.2,), (0.1,), (0.05,)],
        False, (1.0,), (0.0,),
        """ImageNet-C contrast: x' = clip((x - mean) * contrast + mean), mean per image and
        channel (as ImageNet-C, so 0 is a flat image of the mean colour, not grey). 1 is the
        clean image, 0 has nothing left (dv 1). ImageNet-C: 0.4 to 0.05, dv 0.30 to 0.78.""",
        digital.contrast, spacing={"contrast": 0.1}, spacing_power={"contrast": 3.0}),
    _entry(
        "pixelate", "imagenet-c", "digital", {"block": (1.0, 64.0)},
        [(1 / 0.6,), (2.0,), (2.5,), (1 / 0.3,), (4.0,)],
        False, (1.0,), (64.0,),
        """ImageNet-C pixelate: Pillow's BOX reduction to floor(H / block) x floor(W / block)
        pixels (at least 1; ImageNet-C's int(side * c) with c = 1 / block), then NEAREST back
        to H x W. block is about the side in pixels of the blocks; below H / (H - 1) nothing
        changes (1 is the clean image). ImageNet-C's c = 0.6 to 0.25 are block 1.67 to 4, dv
        0.22 to 0.51; 64 leaves 3 x 3 pixels of a 224 px image, dv 0.98. (Ours averages in
        float and rounds once; Pillow rounds after each axis: at most 1 grey level apart.)""",
        digital.pixelate, spacing={"block": 0.003}, spacing_power={"block": 0.7}),
    _entry(
        "jpeg_compression", "imagenet-c", "digital", {"quality": (1.0, 101.0)},
        [(25.0,), (18.0,), (15.0,), (10.0,), (7.0,)],
        False, (101.0,), (1.0,),
        """ImageNet-C JPEG: a Pillow (libjpeg) encode and decode at the JPEG quality, rounded
        half up to an integer (the end values get half-width intervals); 101 (from 100.5) is
        no encoding, the clean image; 100 already subsamples the chroma (dv 0.004).
        ImageNet-C: 25 to 7, dv 0.40 to 0.66. The codec cannot destroy more: at qualities 2
        and 1 most entries of the baseline quantisation tables are capped at 255 and dv stops
        at 0.81, so the domain cannot reach the 0.97 floor. JPEG runs on the CPU (digital module
        docstring), on the image rounded to 8 bits.""",
        digital.jpeg_compression, spacing={"quality": 0.1},
        spacing_power={"quality": 3.0}),
    _entry(
        "speckle_noise", "imagenet-c", "noise", {"sigma": (0.0, 6.0)},
        [(0.15,), (0.2,), (0.35,), (0.45,), (0.6,)],
        True, (0.0,), (6.0,),
        """ImageNet-C speckle noise: x' = clip(x + x * N(0, sigma^2)) per pixel and channel (the
        noise is proportional to the value; black stays black). ImageNet-C: sigma 0.15 to 0.6,
        dv 0.48 to 0.76. At 6 about half the values are clipped to 0 and half to 1 whatever
        their value: pixel correlation 0.19, dv 0.94 (black areas survive, so noise never
        reaches the 0.97 floor).""",
        digital.speckle_noise, spacing={"sigma": 0.003}, spacing_power={"sigma": 0.7}),
    _entry(
        "spatter", "imagenet-c", "weather", {"strength": (0.0, 9.0)},
        [(1.0,), (3.0,), (4.0,), (5.0,), (6.0,)],
        True, (0.0,), (9.0,),
        """ImageNet-C spatter along one strength: a liquid layer of blurred Gaussian noise (from
        the seed) thresholded into blobs, drawn as pale turquoise water (severities 1 to 3:
        added, textured by the blobs' edges) or brown mud (4, 5: covering the image).
        ImageNet-C's severities 1 to 5 sit at strength 1, 3, 4, 5, 6 (1 and 2 two units apart:
        the blobs spread fastest between them), dv 0.30, 0.71, 0.78, 0.80, 0.85. From 0 (clean)
        to 1 the water of severity 1 fades in (intensity times strength^2); between severities
        every number of ImageNet-C's settings is linear, except from water (3) to mud (4),
        which are cross-faded (a dip in dv half way); above severity 5 the mud threshold falls
        linearly from 0.65 to 0.10 at 9, where mud covers everything (dv 1; 0.99 from 8). The
        settings follow the image's side: the published table made for the nearer size in
        log(side), CIFAR-10-C's (finer blobs: blur 0.5 to 1 px) up to 84 px, ImageNet-C's from
        85 px (digital.spatter_severities). The layers are made on the CPU (OpenCV, as
        ImageNet-C; digital module docstring).""",
        digital.spatter, spacing={"strength": 0.03},
        side_layers=lambda side: [list(s) for s in digital.spatter_severities(side)]),
    _entry(
        "saturate", "imagenet-c", "digital", {"saturation": (-1.0, 1.0)},
        [(-0.7,), (-0.9,), (0.5,), (0.8,), (0.95,)],
        False, (0.0,), (1.0,),
        """ImageNet-C saturate: S' = clip(S * a + b) in HSV, hue and V kept. Below 0, a = 1 +
        saturation and b = 0 (at -1 greyscale, dv 0.44); above 0, a = 1 / (1 - saturation)
        and b linear through 0 (to 0.5), 0.1 (0.8), 0.2 (0.95) and 1 (at 1: every pixel fully
        saturated, grey ones red as in skimage's HSV; dv 0.73). ImageNet-C's (a, b) = (0.3,
        0), (0.1, 0), (2, 0), (5, 0.1), (20, 0.2) are -0.7, -0.9, 0.5, 0.8, 0.95, dv 0.38 to
        0.67. Saturation only reaches VIF's grey image through V and hue, so dv stays under
        0.9 (under 0.1 for grey images below saturation 0.95). Setting that given points may
        set (draws never do): offset_shift (0), added to b (CIFAR-10-C's (2, 0.1) and (2.5,
        0.2), off the tied path, at its severities 4 and 5: corruptions.cifar_c).""",
        digital.saturate, spacing={"saturation": 0.03},
        spacing_power={"saturation": 3.0}, settings={"offset_shift": (-1.0, 1.0, 0.0)}),
]


# NOC candidate set S (appendix A table): quantization, blur, thumbnail resize, pixelate,
# artifacts, vertical artifacts, rhombus, rain, circles, obstruction, salt and pepper.
_ENTRIES += [
    _entry(
        "noc_quantization", "noc", "digital", {"levels": (2.0, 256.0)},
        None, False, (256.0,), (2.0,),
        """NOC quantization: every channel to k equally spaced levels, x' = floor(x (k - 1) +
        1/2) / (k - 1); levels is rounded half up to the integer k. 256 levels is the 8-bit
        image itself (clean), 2 levels (each channel black or full) the fewest that still
        quantize: dv 0.81, the corruption cannot remove more (1 level would be a flat image, not
        a quantization). NOC's 4 to 9 levels (the paper's text): dv 0.74 to 0.49. The authors'
        code computes round(x n) / n, n + 1 levels, so the range they calibrated (ResNet-18
        robustness 0.95 to 0.5) and ImageNet-NOC's images are 5 to 10 levels here; levels = n
        + 1 reproduces them.""",
        noc_table.quantization, spacing={"levels": 0.8}, spacing_power={"levels": 2.0},
        source_range={"levels": (4.0, 9.0)}),
    _entry(
        "noc_salt_pepper", "noc", "noise", {"probability": (0.0, 1.0)},
        None, True, (0.0,), (1.0,),
        """NOC salt and pepper: each pixel is changed with this probability, to white or black
        (all three channels together) with equal odds; unlike ImageNet-C's impulse noise, which
        changes each channel value on its own (the authors' code also draws per value). The
        domain is all of [0, 1]: 1 is pure black-and-white noise, dv 0.98. NOC's 0.003 to 0.032:
        dv 0.31 to 0.65 (one changed pixel in 10,000 already gives dv 0.02).""",
        noc_table.salt_pepper, spacing={"probability": 0.0001},
        spacing_power={"probability": 1.4},
        source_range={"probability": (0.003, 0.032)}),
    _entry(
        "noc_blur", "noc", "blur", {"weight": (0.0, 1.0)},
        None, False, (0.0,), (1.0,),
        """NOC blur: (1 - weight) x + weight B(x), B five passes of the 3 x 3 box filter (ones /
        9, zero padding as in the authors' code, which darkens a 5 px frame). The interpolation
        factor spans [0, 1]; the corruption can do no more than B itself (a blur of standard
        deviation 1.8 px), dv 0.51 at weight 1, so dv above 0.51 is out of its reach. NOC's 0.4
        to 0.95: dv 0.26 to 0.49.""",
        noc_table.blur, spacing={"weight": 0.03}, spacing_power={"weight": 3.0},
        source_range={"weight": (0.4, 0.95)}),
    _entry(
        "noc_thumbnail_resize", "noc", "blur", {"factor": (1.0, 224.0)},
        None, False, (1.0,), (224.0,),
        """NOC thumbnail resize: bilinear (PIL's, anti-aliased) down by factor to round(H /
        factor) x round(W / factor) px, then bilinear back up, coordinates scaled by the factor
        itself (continuous in it; PIL's resize twice when H / factor is an integer). 1 is the
        clean image; 224 leaves a 1 px thumbnail of a 224 px image, a flat colour (dv 1.0).
        NOC's 1.1 to 3.25: dv 0.15 to 0.50; dv rises fast just above 1 (0.06 at 1.001, 0.12 at
        1.01: every pixel is resampled).""",
        noc_table.thumbnail_resize, spacing={"factor": 0.0003}, spacing_power={"factor": 0.5},
        source_range={"factor": (1.1, 3.25)}),
    _entry(
        "noc_pixelate", "noc", "digital", {"size": (1.0, 224.0)},
        None, False, (1.0,), (224.0,),
        """NOC pixelate: mean pooling with an s x s filter and stride s, each block filled with
        its mean, s = size rounded half up (px of a 224 px image, scaled by min(H, W) / 224);
        blocks that do not fit are cut at the far ends. 1 is the clean image, 224 one flat block
        (dv 1.0). NOC's 2 to 4: dv 0.23 to 0.51. The smallest pixelation, s = 2 (size 1.5), is
        already dv 0.23: no size gives dv between 0 and 0.23.""",
        noc_table.pixelate, spacing={"size": 0.001}, spacing_power={"size": 0.5},
        source_range={"size": (2.0, 4.0)}),
    _entry(
        "noc_artifacts", "noc", "occlusion", {"count": (0.0, 10000.0)},
        None, True, (0.0,), (10000.0,),
        """NOC artifacts: count small dotted lines on a 224 px image (noc_table: other sizes
        scale the picture), each three 5 x 3 px dashes 3 px apart (21 x 3 px; our reading of
        the paper's "small dotted lines": the authors' code draws dotted pixels around a solid
        centre dash), all of one grey value drawn per image, anchored uniformly and clipped by
        the border; count rounded half up. 0 is the clean image; 10,000 lines cover the image
        with the grey (dv 1.0). NOC's 15 to 170: dv 0.29 to 0.78.""",
        noc_table.artifacts, spacing={"count": 0.0001}, spacing_power={"count": 0.7},
        source_range={"count": (15.0, 170.0)}),
    _entry(
        "noc_vertical_artifacts", "noc", "occlusion", {"count": (0.0, 10000.0)},
        None, True, (0.0,), (10000.0,),
        """NOC vertical artifacts: noc_artifacts with every dotted line rotated by 90 degrees
        (3 x 21 px). 0 is the clean image, 10,000 a flat grey (dv 1.0). NOC's 15 to 180: dv
        0.29 to 0.79.""",
        noc_table.vertical_artifacts, spacing={"count": 0.0001},
        spacing_power={"count": 0.7},
        source_range={"count": (15.0, 180.0)}),
    _entry(
        "noc_rhombus", "noc", "occlusion", {"count": (0.0, 3000.0)},
        None, True, (0.0,), (3000.0,),
        """NOC rhombus: count rhombi |x| + |y| <= 7 px (113 px, 15 px across; the paper's "7x7"
        read as half-diagonals, as the authors' code) on a 224 px image, each filled with its own
        grey, later ones on top, anchored uniformly and clipped by the border; count rounded half
        up; other sizes scale the picture (noc_table). 0 is the clean image; from
        about 1,000 the image is a mosaic of random greys (dv 0.975, the floor), 3,000 cover it
        all. NOC's 9 to 76: dv 0.27 to 0.80.""",
        noc_table.rhombus, spacing={"count": 0.0003}, spacing_power={"count": 0.7},
        source_range={"count": (9.0, 76.0)}),
    _entry(
        "noc_rain", "noc", "occlusion", {"count": (0.0, 6000.0)},
        None, True, (0.0,), (6000.0,),
        """NOC rain: count discs x^2 + y^2 <= 7^2 px (149 px) on a 224 px image where p <- (p +
        1) / 2, once per disc (under c discs p becomes 1 - (1 - p) / 2^c), anchored uniformly
        and clipped by the border; count rounded half up; other sizes scale the picture
        (noc_table). 0 is the clean image, 6,000 a white image (dv 1.0). NOC's 12 to
        120: dv 0.40 to 0.87.""",
        noc_table.rain, spacing={"count": 0.0003}, spacing_power={"count": 0.7},
        source_range={"count": (12.0, 120.0)}),
    _entry(
        "noc_circles", "noc", "occlusion", {"count": (0.0, 2000.0)},
        None, True, (0.0,), (2000.0,),
        """NOC circles: count radius-7 discs (as noc_rain) each filled with its own grey, later
        ones on top. 0 is the clean image; from about 500 the image is a mosaic of random greys
        (dv 0.97, the floor), 2,000 cover it all. NOC's 7 to 50: dv 0.24 to 0.75.""",
        noc_table.circles, spacing={"count": 0.0003}, spacing_power={"count": 0.7},
        source_range={"count": (7.0, 50.0)}),
    _entry(
        "noc_obstruction", "noc", "occlusion", {"side": (0.0, 224.0)},
        None, True, (0.0,), (224.0,),
        """NOC obstruction: one side x side px square (side rounded half up, scaled by min(H, W)
        / 224), placed uniformly inside the image and filled with one grey. 0 is the clean
        image; 224 covers a 224 px image (a flat grey, dv 1.0). NOC's 47 to 125: dv 0.14 to
        0.57.""",
        noc_table.obstruction,
        source_range={"side": (47.0, 125.0)}),
]

# NOC candidate set S (appendix figure): border, translation, shear, elastic, rotation,
# backlight, brightness, contrast, colour distortion, greyscale, hue.

#: NOC's Figures 2 and 6 show these candidates only as images: their descriptions and severity
#: ranges are not in the paper's text, so they have no ``source_range``. Border, elastic,
#: backlight, colour distortion, contrast and translation follow the NOC authors' definitions
#: in words (issue 33); each ``docs`` names the moderate sub-range we consider NOC-like (NOC's
#: ranges run from ResNet-18 robustness 0.95 to 0.5). Quoted Δv are means [min, max] over 8
#: shared ImageNet images (224 px).
_ENTRIES += [
    _entry(
        "noc_border", "noc", "occlusion", {"width": (0.0, 112.0)},
        None, False, (0.0,), (112.0,),
        """A mid-grey (0.5) frame on all four sides, as the NOC authors define it (ours was
        black before issue 33), width px of a 224 px side (width * W / 224 px left and right,
        width * H / 224 px top and bottom); a pixel the frame covers in part is blended with
        the grey by the covered fraction of its area, so the frame grows continuously. 0 is the
        clean image, 112 covers the whole image (flat grey, dv 1). NOC's range is not in the
        text (Figure 6 was an image); 10 to 45 px is what we consider NOC-like (dv 0.17 to
        0.68).
        Measured dv: 2 px 0.06, 8 px 0.14, 30 px 0.47, 60 px 0.82, 100 px 0.99.""",
        noc_figure.border, spacing={"width": 0.03}, spacing_power={"width": 1.4}),
    _entry(
        "noc_translation", "noc", "geometric", {"dx": (-224.0, 224.0), "dy": (-224.0, 224.0)},
        None, False, (0.0, 0.0), (224.0, 224.0),
        """Shift of the content by dx px of a 224 px side to the right and dy px
        down (negative: left, up), two independent parameters as the NOC authors' x and y
        shifts (before issue 33: one distance in a seeded direction); bilinear (affine_grid /
        grid_sample, align_corners=False), the exposed area black (zeros, torchvision's default
        fill). (0, 0) is the clean image; |dx| = 224 or |dy| = 224 moves the image out of the
        frame (black, dv 1). VIF compares pixels in place, so a shift of a pixel or two already
        gives a large dv; the low dv come from sub-pixel (interpolated) shifts: dx 0.1 px dv
        0.12, 0.5 px 0.42, 1 px 0.58, 3 px 0.80, 10 px 0.94, 50 px 0.98; (10, 10) px 0.98.
        NOC's range is not in the text (Figure 6 was an image); 10 to 60 px on either axis is
        what we consider NOC-like (dv 0.94 to 0.98).""",
        noc_figure.translation, spacing={"dx": 0.00004, "dy": 0.00004},
        spacing_power={"dx": 0.7, "dy": 0.7}),
    _entry(
        "noc_shear", "noc", "geometric", {"angle": (0.0, 89.5)},
        None, True, (0.0,), (89.5,),
        """Horizontal shear about the image centre by angle degrees: the row Y px below the
        centre moves sideways by tan(angle) * Y px, the direction (sign) drawn from the seed;
        bilinear (affine_grid / grid_sample, align_corners=False), exposed areas black. 0 is the
        clean image; at 89.5 degrees (factor 115) only the few rows around the centre stay in
        the frame (dv 0.99; a shear never moves the centre row, so it cannot reach dv 1).
        Measured dv: 0.2 degrees 0.18, 1 degree 0.49, 5 degrees 0.80, 20 degrees 0.94, 45
        degrees 0.97. NOC's range is not in the text (Figure 6 was an image; ImageNet-NOC
        keeps shear); 10 to 35 degrees is what we consider NOC-like (dv 0.90 to 0.96).""",
        noc_figure.shear, spacing={"angle": 0.0003}, spacing_power={"angle": 0.7}),
    _entry(
        "noc_elastic", "noc", "geometric", {"crop": (0.0, 223.0)},
        None, True, (0.0,), (223.0,),
        """NOC's elastic as its authors define it: crop px of a 224 px side cut off one
        side of the image (left, right, top or bottom, drawn from the seed) and the rest
        stretched back to the image's size along that axis: the kept interval is mapped
        linearly onto the axis, read by linear interpolation between the kept pixels (a
        whole-pixel crop is torch's bilinear resize of the cropped image, align_corners=False),
        so the corruption is continuous in crop. 0 is the clean image; at 223 one pixel's width
        is left, stretched into stripes (dv 0.98). A stretch keeps local structure, so dv
        levels off at the 0.97 floor of unrelated images. (Before issue 33 this name was a
        smooth random displacement field, now noc_smooth_elastic.) Measured dv: 0.05 px 0.02,
        0.2 px 0.11, 1 px 0.39, 5 px 0.72, 20 px 0.92, 60 px 0.97, 223 px 0.98. NOC's range is
        not in the text (Figure 6 was an image); 5 to 60 px is what we consider NOC-like (dv
        0.72 to 0.97).""",
        noc_figure.elastic, spacing={"crop": 0.0001}, spacing_power={"crop": 0.7}),
    _entry(
        "noc_rotation", "noc", "geometric", {"angle": (0.0, 180.0)},
        None, True, (0.0,), (180.0,),
        """Rotation about the image centre by angle degrees, the sense drawn from the seed
        (positive: counter-clockwise, torchvision's rotate), bilinear (affine_grid /
        grid_sample, align_corners=False), the corners black; isotropic in pixels on
        non-square images. 0 is the clean image, 180 the image upside down, the largest
        rotation (a rotation keeps the content, so dv levels off at the 0.97 floor of unrelated
        images from about 20 degrees: it cannot reach 1). Measured dv: 0.05 degrees 0.08, 0.2
        degrees 0.30, 1 degree 0.65, 5 degrees 0.91, 20 degrees 0.97, 180 degrees 0.975. NOC's
        range is not in the text (Figure 6 was an image); 10 to 45 degrees is what we consider
        NOC-like (dv 0.95 to 0.98).""",
        noc_figure.rotation, spacing={"angle": 0.0001}, spacing_power={"angle": 0.7}),
    _entry(
        "noc_backlight", "noc", "colour", {"strength": (0.0, 1.0)},
        None, True, (0.0,), (1.0,),
        """NOC's backlight as its authors define it: the image split in two, one part
        brightened while the other is darkened. The split is a straight line, vertical or
        horizontal with equal odds, at a position uniform in the central half of the axis, and
        either part is the bright one with equal odds (our choices, all from the seed): x' =
        clip(x + strength) on every channel of the bright part, clip(x - strength) on the dark
        part, strength * (2a - 1) on the pixels the line crosses (a their bright fraction). 0 is
        the clean image; at 1 one part is white and the other black (dv 0.99). (Before issue 33
        this name was a radial light, now noc_radial_backlight.) Measured dv: 0.02 0.08, 0.05
        0.12, 0.1 0.20, 0.2 0.36, 0.4 0.64, 0.6 0.82, 0.8 0.94. NOC's range is not in the text
        (Figure 6 was an image); 0.1 to 0.4 is what we consider NOC-like (dv 0.2 to 0.65).""",
        noc_figure.backlight, spacing={"strength": 0.003},
        spacing_power={"strength": 2.0}),
    _entry(
        "noc_brightness", "noc", "colour", {"shift": (-1.0, 1.0)},
        None, False, (0.0,), (1.0,),
        """Additive brightness in RGB: x' = clip(x + shift) on every channel, darker for a
        negative shift (ImageNet-C's brightness adds to V in HSV instead, which keeps the
        saturated colours and cannot darken). 0 is the clean image; -1 is black and +1 white
        (dv 1 both). Measured dv: +-0.05 0.02, +0.2 0.24, -0.2 0.30, +0.5 0.68, -0.5 0.73,
        +-0.8 0.92. NOC's range is not in the text (Figure 6 was an image; ImageNet-NOC keeps
        brightness); |shift| 0.1 to 0.5 is what we consider NOC-like (dv 0.1 to 0.7).""",
        noc_figure.brightness, spacing={"shift": 0.1}),
    _entry(
        "noc_contrast", "noc", "colour", {"factor": (0.0, 1.0)},
        None, False, (1.0,), (0.0,),
        """x' = m + factor * (x - m), m the mean of all values of the image (every pixel
        and channel, as the NOC authors define it; before issue 33 the mean BT.601 luma,
        torchvision's adjust_contrast; ImageNet-C's contrast uses each channel's own mean), the
        same m on all channels. 1 is the clean image, 0 a flat grey (dv 1). Measured dv: 0.95
        0.03, 0.8 0.09, 0.5 0.24, 0.2 0.50, 0.05 0.78, 0.01 0.95. NOC's range is not in the
        text (Figure 6 was an image); 0.1 to 0.6 is what we consider NOC-like (dv 0.2 to
        0.65).""",
        noc_figure.contrast, spacing={"factor": 0.1}, spacing_power={"factor": 4.0}),
    _entry(
        "noc_colour_distortion", "noc", "colour", {"shift": (-1.0, 1.0)},
        None, True, (0.0,), (1.0,),
        """NOC's colour distortion as its authors define it: a constant added to one
        colour channel, x'_c = clip(x_c + shift), c drawn from the seed (R, G or B with equal
        odds), the other two channels kept; shift may be negative. 0 is the clean image; at
        +-1 that channel is all white or all black. One channel cannot take the structure
        away: VIF sees the luma, where the other two channels keep theirs, so dv stays under
        about 0.65 (0.27 on average [0.08, 0.63] at +-1; a pure colour change, like noc_hue)
        and the bins above are out of reach. (Before issue 33 this name was multiplicative
        gains on all three channels, now noc_channel_gains.) Measured dv: +0.05 0.03, +0.2
        0.07, -0.2 0.10, +0.5 0.30, -0.5 0.33. NOC's range is not in the text (Figure 6 was an
        image); |shift| 0.1 to 0.5 is what we consider NOC-like.""",
        noc_figure.colour_distortion, spacing={"shift": 0.003}),
    _entry(
        "noc_greyscale", "noc", "colour", {"factor": (0.0, 1.0)},
        None, False, (0.0,), (1.0,),
        """x' = (1 - factor) * x + factor * Y, Y the BT.601 luma (0.299 R + 0.587 G + 0.114
        B; torchvision's adjust_saturation(x, 1 - factor)). 0 is the clean image, 1 the grey
        image. VIF is computed on exactly this luma, which the blend keeps, so dv stays within
        8-bit rounding of 0 (0.02 at 0.5, exactly 0 at 1, at most 0.07 over 2,000 samples):
        the structure remains and dv does not reach 1, so the coverage target is unreachable
        (2 of 40 bins). NOC's range is
        not in the text (Figure 6 was an image); its text says only that greyscale, at its
        upper bound, still leaves ResNet-18 a robustness of 0.70, so we take the whole [0, 1]
        as NOC-like.""",
        noc_figure.greyscale),
    _entry(
        "noc_hue", "noc", "colour", {"angle": (0.0, 180.0)},
        None, True, (0.0,), (180.0,),
        """Hue rotation by angle degrees in HSV, the sense drawn from the seed (torchvision's
        adjust_hue with hue_factor = +-angle / 360), saturation and value kept; 0 to 180 with
        either sense is the whole turn. 0 is the clean image; 180 swaps each hue for its
        complement. Hue carries no luma structure: dv is that of the luma change, 0 for grey
        images, rarely above 0.75 (at most 0.83 over 2,000 samples; mean 0.44 at 180 degrees, 5
        degrees 0.12, 20 degrees 0.29, 60 degrees 0.37), so dv cannot reach 1 and the bins
        above about 0.75 stay empty. NOC's
        range is not in the text (Figure 6 was an image); its text says hue, at its upper
        bound, still leaves ResNet-18 a robustness of 0.63, so we consider 30 to 180 degrees
        NOC-like.""",
        noc_figure.hue, spacing={"angle": 0.01}, spacing_power={"angle": 3.0}),
]

# Variants of ours kept from before issue 33 (they add something NOC's candidates do not): a
# radial light, a smooth random displacement field, multiplicative channel gains. Not NOC's,
# and in neither NOC set (corruptions.sets).
_ENTRIES += [
    _entry(
        "noc_smooth_elastic", "noc", "geometric",
        {"amplitude": (0.0, 32.0), "smoothness": (2.0, 32.0)},
        None, True, (0.0, 32.0), (32.0, 2.0),
        """Not NOC's (noc_elastic before issue 33; NOC's elastic crops a side and stretches the
        rest back; in neither NOC set): a plain elastic deformation (not ImageNet-C's affine +
        elastic either): output pixel p reads
        the input at p + amplitude * f(p), bilinear (grid_sample, align_corners=False, black
        outside; torchvision's elastic with this displacement). f is white Gaussian noise from
        the seed (2 x H x W, on the CPU), smoothed by a Gaussian of standard deviation
        smoothness px and divided by its root mean square, so amplitude is the RMS
        displacement per axis whatever the smoothness. Lengths are px of a 224 px side.
        amplitude 0 is the clean image (whatever the smoothness); (32, 2) scrambles the image
        within about 32 px (dv 0.975; a warp keeps local pixel values, so dv stays at the
        0.97 floor of unrelated images). smoothness barely moves dv: at smoothness 8,
        amplitude 0.1 px dv 0.18, 0.5 px 0.53, 2 px 0.81, 8 px 0.95, 32 px 0.97. NOC's range is
        not in the text (Figure 6 was an image); amplitude 1 to 4 px at smoothness 4 to 16 is
        moderate (dv 0.7 to 0.9).""",
        noc_figure.smooth_elastic, spacing={"amplitude": 0.001, "smoothness": 0.03},
        spacing_power={"amplitude": 0.7, "smoothness": 0.7}),
    _entry(
        "noc_radial_backlight", "noc", "colour", {"strength": (0.0, 20.0)},
        None, True, (0.0,), (20.0,),
        """Not NOC's (noc_backlight before issue 33; NOC's backlight brightens one part of a
        split image and darkens the other; in neither NOC set): a bright light behind the
        subject: x' = clip(x + strength / (1 + r^2 / R^2)) on
        every channel (white light), r the distance from the light's centre, drawn from the
        seed uniformly in the central half of each axis, R = 56 px (lengths in px of a 224 px
        side; the light falls to half its peak at R, like the irradiance of a point source).
        Our definition (NOC's range is not in the text either). 0 is the clean image; at 20
        even the farthest corner gets more than 1: the image is white (dv 1). Measured dv: 0.2
        0.14, 0.5 0.32, 1 0.59, 2 0.82, 5 0.98, 10 1.0; 0.3 to 1.5 is moderate (dv 0.2 to
        0.7).""",
        noc_figure.radial_backlight, spacing={"strength": 0.01}, spacing_power={"strength": 0.5}),
    _entry(
        "noc_channel_gains", "noc", "colour", {"strength": (0.0, 8.0)},
        None, True, (0.0,), (8.0,),
        """Not NOC's (noc_colour_distortion before issue 33; NOC's adds a constant to one
        channel; in neither NOC set): per-channel gains x'_c = clip(x_c * 2^(strength * z_c)),
        z_R, z_G, z_B drawn from the seed uniformly in [-1, 1] (our definition; NOC's ranges
        are not in the text). 0 is the clean image; at 8 each channel is scaled by up to 256
        or 1/256, so the channels with z_c > 0 are thresholded to 0/1 and those with z_c < 0
        turn black.
        Independent gains cannot destroy the luma structure of every image (a channel with
        z_c near 0 stays), so dv at 8 is 0.81 on average [0.54, 0.99]. Measured dv: 0.2 0.06,
        0.5 0.16, 1 0.32, 2 0.51, 4 0.65. 0.5 to 2 is moderate (gains up to 4, dv 0.15 to
        0.5).""",
        noc_figure.channel_gains, spacing={"strength": 0.03},
        spacing_power={"strength": 1.4}),
]

#: Every corruption: the 14 of the VCR paper in its order, then ImageNet-C's and NOC's.
CORRUPTIONS: dict[str, Corruption] = {c.name: c for c in _ENTRIES}



def _domain_table() -> str:
    rows = ["| corruption | source | class | parameter | domain | clean at | visual spacing | "
            "visual coupling ρ | ImageNet-C 1–5 (NOC: range) |",
            "|---|---|---|---|---|---|---|---|---|"]
    for c in CORRUPTIONS.values():
        for param, (low, high) in c.parameters.items():
            levels = ("–" if c.imagenet_c_severities is None else ", ".join(
                f"{level[param]:.3g}" for level in c.imagenet_c_severities))
            if param in c.source_range:
                levels = "{:g}–{:g}".format(*c.source_range[param])
            spacing = "linear"
            if param in c.spacing:
                spacing = f"log floor {c.spacing[param]:g}"
                if c.spacing_power.get(param, 1.0) != 1.0:
                    spacing += f", power {c.spacing_power[param]:g}"
            coupling = f"{c.coupling:g}" if c.coupling else "–"
            rows.append(f"| {c.name} | {c.source} | {c.visual_class} | {param} | "
                        f"[{low:g}, {high:g}] | {c.identity[param]:g} | {spacing} | {coupling} | "
                        f"{levels} |")
    return "\n".join(rows)


#: Markdown table of every corruption's parameters, domains and ImageNet-C severities.
DOMAIN_TABLE = _domain_table()
