"""Training losses: the logits of every view of a batch -> one loss per image.

A loss is any callable ``(logits, target) -> (B,)`` with ``logits`` the view name -> ``(B,
1000)`` logits of :class:`vcrbench.training.views.Views` and ``target`` the ``(B,)``
ImageNet labels; the epoch loop minimises the mean over the batch.

- :func:`cross_entropy` (method ``standard``): CE of the ``input`` view.
- :class:`AugMixLoss` (method ``augmix``; AugMix, Hendrycks et al. 2020, Eq. 1):
  ``CE(p_clean, y) + λ · JS(p_clean, p_aug1, p_aug2)``.
- :class:`RevaLoss` (methods ``reva_minus``, ``reva``; REVa Eq. 2):
  ``CE(p_clean, y) + γ · CE(p_adv, y) + γ · λ · JS(p_clean, p_aug1, p_aug2)``.

Training from scratch minimises the same formulas summed over the batch (AugMix's CIFAR
script; the epoch loop divides by the batch size, :mod:`vcrbench.training.epochs`), with
label-smoothed cross-entropies: :class:`SummedLoss`.

``JS(p_1, …, p_k) = (1/k) Σ_i KL(p_i ‖ M)``, ``M`` the mean of the ``p_i`` clamped to
``[1e-7, 1]`` (as AugMix does before its logarithm), ``KL(p ‖ M) = Σ_c p_c (log p_c − log M_c)``
with ``0 · log 0 = 0`` (:func:`jensen_shannon`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

from vcrbench.training.views import ADVERSARIAL, AUGMIX_VIEWS, INPUT

#: AugMix's clamp of the mixture before its logarithm.
MIXTURE_FLOOR = 1e-7


class Loss(Protocol):
    def __call__(self, logits: dict[str, torch.Tensor], target: torch.Tensor) -> torch.Tensor: ...


def cross_entropy(logits: dict[str, torch.Tensor], target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the :data:`~vcrbench.training.views.INPUT` view, per image."""
    return torch.nn.functional.cross_entropy(logits[INPUT], target, reduction="none")


def jensen_shannon(probabilities: list[torch.Tensor]) -> torch.Tensor:
    """The generalised Jensen–Shannon divergence of k ``(B, C)`` distributions, per row
    ``(B,)`` (module docstring)."""
    log_mixture = torch.clamp(torch.stack(probabilities).mean(0), MIXTURE_FLOOR, 1.0).log()
    kl = [torch.special.xlogy(p, p).sum(1) - (p * log_mixture).sum(1) for p in probabilities]
    return torch.stack(kl).mean(0)


def consistency(logits: dict[str, torch.Tensor]) -> torch.Tensor:
    """JS of the softmax of the clean view and the two AugMix views, per image."""
    return jensen_shannon([logits[name].softmax(1) for name in (INPUT, *AUGMIX_VIEWS)])


@dataclass(frozen=True)
class AugMixLoss:
    """``CE(p_clean, y) + lam · JS(p_clean, p_aug1, p_aug2)``."""

    lam: float = 12.0

    def __call__(self, logits: dict[str, torch.Tensor], target: torch.Tensor) -> torch.Tensor:
        return cross_entropy(logits, target) + self.lam * consistency(logits)


@dataclass(frozen=True)
class RevaLoss:
    """REVa's Eq. 2: ``CE(p_clean, y) + gamma · CE(p_adv, y) + gamma · lam · JS(p_clean,
    p_aug1, p_aug2)``."""

    gamma: float = 0.5
    lam: float = 12.0

    def __call__(self, logits: dict[str, torch.Tensor], target: torch.Tensor) -> torch.Tensor:
        adversarial = torch.nn.functional.cross_entropy(logits[ADVERSARIAL], target,
                                                        reduction="none")
        return (cross_entropy(logits, target) + self.gamma * adversarial
                + self.gamma * self.lam * consistency(logits))


@dataclass(frozen=True)
class SummedLoss:
    """The batch's summed loss of training from scratch, a scalar: ``Σ CE_s(p_clean, y)``
    (method ``standard``), ``+ lam · Σ JS(p_clean, p_aug1, p_aug2)`` (``lam`` set: ``augmix``),
    REVa's Eq. 2 ``Σ CE_s(p_clean, y) + gamma · (Σ CE_s(p_adv, y) + lam · Σ JS)`` (``gamma``
    set too); ``CE_s`` the cross-entropy with ``label_smoothing``. The sums are torch's over
    the batch, in this order (the bits of AugMix's CIFAR script)."""

    label_smoothing: float = 0.0
    lam: float | None = None
    gamma: float | None = None

    def __call__(self, logits: dict[str, torch.Tensor], target: torch.Tensor) -> torch.Tensor:
        def summed_ce(view: str) -> torch.Tensor:
            return torch.nn.functional.cross_entropy(
                logits[view], target, label_smoothing=self.label_smoothing, reduction="sum")

        loss = summed_ce(INPUT)
        if self.lam is not None:
            extra = self.lam * consistency(logits).sum()
            if self.gamma is not None:
                extra = self.gamma * (summed_ce(ADVERSARIAL) + extra)
            loss = loss + extra
        return loss
