"""AugMix views (Hendrycks et al. 2020, Algorithm 1) from keyed draws, with REVa's targeted
corruptions as extra operations.

One view of an image ``x`` (uint8, ``(3, H, W)``):

    w ~ Dirichlet(α, …, α)   (width weights)      m ~ Beta(α, α)
    chain_i = op_{i,d_i} ∘ … ∘ op_{i,1} (x),  d_i ~ U{1, 2, 3} (or the fixed depth),
              each op drawn uniformly from the pool
    view = round(m · x + (1 − m) · Σ_i w_i · chain_i)       (in grey levels, to uint8)

so the weights of the clean image and the chains, ``m`` and ``(1 − m) w_i``, sum to 1
(:func:`mixing_weights`). The pool is AugMix's nine operations (:data:`AUGMIX_OPS`: those
that do not overlap ImageNet-C's corruptions), and for REVa also the targeted corruptions of
the registry at one ImageNet-C severity or one fraction of their domain
(:class:`CorruptionOp`). An operation's strength is AugMix's: a level ``l ~ U(0.1, severity)``
on a 0–10 scale, the operation's maximum times ``l / 10`` (an integer part for posterize,
solarize and translate), with a random sign for rotate, shear and translate; translations
reach a third of the image side (AugMix's ``IMAGE_SIZE / 3``, from the image, not a fixed 224).
Geometric operations interpolate bilinearly and fill with black, as AugMix's PIL operations
(:func:`_geometric` says how the fill is blended).

Every draw of a view comes from one generator keyed by ``(seed, entry, epoch, position,
view)`` (:meth:`vcrbench.training.spec.TrainingSpec.key`), in a fixed order
(:func:`draw_augmix`), so a view does not depend on the batch, the batch size or a restart.

torchvision's :class:`~torchvision.transforms.AugMix` mixes the same way (its Beta weight is
the first of a Dirichlet(α, α) pair), but it defaults to 13 operations (``all_ops``: also
brightness, colour, contrast and sharpness, which AugMix left out because they overlap
ImageNet-C), draws the operations, depths and levels once per call (one chain for a whole
batch), takes levels from ten bins, truncates the mix to uint8 and uses torch's global
generator. Only its operation functions (:mod:`torchvision.transforms.functional`) are reused
here; ``tests/unit/training/test_methods.py`` compares its mixing with ours.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from vcrbench.training.spec import AugMixSettings

#: AugMix's nine operations (Hendrycks et al. 2020, Appendix: "augmentations.py" list).
AUGMIX_OPS = ("autocontrast", "equalize", "posterize", "rotate", "solarize", "shear_x",
              "shear_y", "translate_x", "translate_y")
#: Operations that move pixels without changing their values (a constant image stays
#: constant when the fill is that constant).
GEOMETRIC_OPS = ("rotate", "shear_x", "shear_y", "translate_x", "translate_y")
MAX_LEVEL = 10.0


@dataclass(frozen=True)
class Step:
    """One operation of a chain: its name, AugMix level in [0.1, severity], sign (±1) and the
    pixel-noise seed of a stochastic corruption."""

    op: str
    level: float
    sign: int
    seed: int


@dataclass(frozen=True)
class AugMixDraw:
    """The draws of one view: ``mix`` (m, the clean image's weight), ``weights`` (width,) the
    chain weights, and the chains' steps."""

    mix: float
    weights: np.ndarray
    chains: tuple[tuple[Step, ...], ...]


def draw_augmix(rng: np.random.Generator, pool: Sequence[str], settings: AugMixSettings
                ) -> AugMixDraw:
    """All draws of one view, in a fixed order: chain weights, mix, then per chain its depth
    and per step (operation, level, sign, noise seed)."""
    alpha = settings.alpha
    weights = rng.dirichlet([alpha] * settings.width)
    mix = float(rng.beta(alpha, alpha))
    chains = []
    for _ in range(settings.width):
        depth = int(rng.integers(1, 4)) if settings.depth is None else settings.depth
        steps = []
        for _ in range(depth):
            op = pool[int(rng.integers(len(pool)))]
            level = float(rng.uniform(0.1, settings.severity))
            sign = 1 if rng.random() < 0.5 else -1
            steps.append(Step(op, level, sign, int(rng.integers(0, 2**63 - 1))))
        chains.append(tuple(steps))
    return AugMixDraw(mix, weights, tuple(chains))


def mixing_weights(draw: AugMixDraw) -> np.ndarray:
    """The weights of the clean image and of each chain in the view: ``(m, (1 − m) w_1, …)``,
    summing to 1."""
    return np.concatenate([[draw.mix], (1.0 - draw.mix) * draw.weights])


def _level(level: float, maximum: float) -> float:
    return level * maximum / MAX_LEVEL


def _geometric(image: torch.Tensor, fill: int, transform: Callable) -> torch.Tensor:
    """A bilinear geometric ``transform`` of a uint8 image whose uncovered area takes grey level
    ``fill``: ``image − fill`` is transformed with zero padding and ``fill`` added back, so
    a border pixel covered to a fraction ``a`` is ``a · x + (1 − a) · fill``. (torchvision's
    own ``fill`` for bilinear tensors multiplies the interpolated image by its coverage twice,
    ``a² · x + (1 − a) · fill``, which darkens the borders of a constant image.)"""
    shifted = image.to(torch.float32) - float(fill)
    out = transform(shifted) + float(fill)
    return out.round_().clamp_(0, 255).to(torch.uint8)


def _affine(image: torch.Tensor, fill: int, **kwargs) -> torch.Tensor:
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms import functional as TF

    args = {"angle": 0.0, "translate": [0, 0], "scale": 1.0, "shear": [0.0, 0.0]} | kwargs
    return _geometric(image, fill, lambda x: TF.affine(
        x, interpolation=InterpolationMode.BILINEAR, **args))


def apply_augmix_op(image: torch.Tensor, step: Step, fill: int = 0) -> torch.Tensor:
    """One of :data:`AUGMIX_OPS` on a uint8 ``(3, H, W)`` image (``fill``: grey level of the
    area a geometric operation uncovers)."""
    # torchvision here, not at the top: the workflow imports this module to build its DAG,
    # and torchvision's import costs seconds per Snakemake invocation
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms import functional as TF

    op, level, sign = step.op, step.level, step.sign
    height, width = image.shape[-2:]
    if op == "autocontrast":
        return TF.autocontrast(image)
    if op == "equalize":
        return TF.equalize(image)
    if op == "posterize":
        return TF.posterize(image, 4 - int(_level(level, 4)))
    if op == "solarize":
        return TF.solarize(image, 256 - int(_level(level, 256)))
    if op == "rotate":
        return _geometric(image, fill, lambda x: TF.rotate(
            x, sign * _level(level, 30), interpolation=InterpolationMode.BILINEAR))
    if op in ("shear_x", "shear_y"):
        degrees = math.degrees(math.atan(sign * _level(level, 0.3)))
        shear = [degrees, 0.0] if op == "shear_x" else [0.0, degrees]
        return _affine(image, fill, shear=shear, center=[0, 0])
    if op in ("translate_x", "translate_y"):
        side = width if op == "translate_x" else height
        pixels = sign * int(_level(level, side / 3))
        return _affine(image, fill, translate=[pixels, 0] if op == "translate_x" else [0, pixels])
    raise ValueError(f"unknown AugMix operation {op!r}")


@dataclass(frozen=True)
class CorruptionOp:
    """A registry corruption as an AugMix operation, at fixed parameters (one ImageNet-C
    severity or one fraction of the domain); only its pixel noise changes between uses."""

    name: str
    params: Mapping[str, float]

    @classmethod
    def at(cls, name: str, severity: int | None = None,
           domain_fraction: float | None = None, side: int = 224) -> CorruptionOp:
        """The corruption at ``identity + domain_fraction · (strongest − identity)`` per
        parameter when ``domain_fraction`` is given (a point of the 224 px domain, its pixel
        lengths moved to ``side`` as the evaluation's samples are,
        :func:`vcrbench.corruptions.sampling.scale_point`), else at ImageNet-C severity
        ``severity`` (1–5; at ``side`` 32 px CIFAR-10-C's,
        :func:`vcrbench.corruptions.imagenet_c_samples`)."""
        from vcrbench.corruptions import get_corruption, imagenet_c_samples
        from vcrbench.corruptions.sampling import REFERENCE_SIDE, scale_point
        from vcrbench.errors import VcrbenchError

        spec = get_corruption(name)
        if domain_fraction is not None:
            point = {p: spec.identity[p] + domain_fraction * (spec.strongest[p]
                                                             - spec.identity[p])
                     for p in spec.parameters}
            return cls(name, point if side == REFERENCE_SIDE else scale_point(spec, point, side))
        if severity is None:
            raise VcrbenchError(f"corruption {name}: give a severity or a domain fraction")
        if spec.imagenet_c_severities is None:
            raise VcrbenchError(f"corruption {name} has no ImageNet-C severities; give "
                                "reva.domain_fraction instead of reva.severity")
        return cls(name, imagenet_c_samples(name, side)[int(severity) - 1])

    def __call__(self, image: torch.Tensor, step: Step) -> torch.Tensor:
        return self.batch(image.unsqueeze(0), [step])[0]

    def batch(self, images: torch.Tensor, steps: Sequence[Step]) -> torch.Tensor:
        """The corruption on ``(n, 3, H, W)`` uint8 images, image ``i`` with ``steps[i]``'s
        noise seed: equal to calling the operation image by image (corruptions do not depend
        on the batch)."""
        from vcrbench.corruptions import apply_corruption

        x = images.to(torch.float32).div(255.0)
        params = {p: np.full(len(steps), v, np.float64) for p, v in self.params.items()}
        return apply_corruption(self.name, x, params, [step.seed for step in steps])


def apply_chain(image: torch.Tensor, steps: Sequence[Step],
                corruptions: Mapping[str, Callable[[torch.Tensor, Step], torch.Tensor]],
                fill: int = 0) -> torch.Tensor:
    """The operations of one chain in turn on a uint8 ``(3, H, W)`` image."""
    for step in steps:
        image = (corruptions[step.op](image, step) if step.op in corruptions
                 else apply_augmix_op(image, step, fill))
    return image


def augmix_view(image: torch.Tensor, draw: AugMixDraw,
                corruptions: Mapping[str, CorruptionOp] | None = None,
                fill: int = 0) -> torch.Tensor:
    """One AugMix view (module docstring) of a uint8 ``(3, H, W)`` image: uint8 ``(3, H, W)``,
    the float mix rounded to the nearest grey level."""
    corruptions = corruptions or {}
    weights = mixing_weights(draw)
    mixed = image.to(torch.float64) * weights[0]
    for weight, steps in zip(weights[1:], draw.chains, strict=True):
        mixed += apply_chain(image, steps, corruptions, fill).to(torch.float64) * weight
    return mixed.round_().clamp_(0, 255).to(torch.uint8)
