"""Gradient attacks on a batch, untargeted, L∞, on float images in [0, 1].

The update rules are torchattacks 3.5.1's (Kim, 2020), with its defaults (ε = 8/255,
α = 2/255, 10 steps, MI-FGSM decay 1.0); ``g`` is the gradient of the cross-entropy of the true
label with respect to the input, ``Π`` the projection onto ``[x − ε, x + ε] ∩ [0, 1]``:

- FGSM (Goodfellow et al. 2015): ``x' = clip(x + ε sign(g))``.
- BIM (Kurakin et al. 2017): ``x_{t+1} = Π(x_t + α sign(g_t))`` from ``x_0 = x``.
- PGD (Madry et al. 2018): BIM from a random start ``x_0 = clip(x + U[−ε, ε])``.
- R-FGSM (Tramèr et al. 2018, torchattacks' iterative form): BIM from
  ``x_0 = clip(x + α sign(n))``, ``n ~ N(0, 1)``.
- MI-FGSM (Dong et al. 2018): ``m_t = g_t / mean|g_t| + μ m_{t−1}`` (the mean over one
  image's pixels and channels), ``x_{t+1} = Π(x_t + α sign(m_t))``.

R-FGSM is torchattacks', not the paper's single step: Tramèr et al. take one step of ε − α
after the random one; torchattacks takes ``steps`` projected steps of α.

Deviations from torchattacks: the loss is summed over the batch, not averaged (the sign of each
image's gradient is the same, and a sum keeps every image's update independent of its batch);
an image whose MI-FGSM gradient is all zero keeps a zero update instead of turning into NaN.
Random starts are given by the caller (keyed per image, :mod:`vcrbench.attacks.registry`),
never drawn here. Every function takes and returns (B, 3, H, W) float tensors in [0, 1] and
(B,) int64 labels; ε and α are fractions of the [0, 1] range.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from vcrbench.attacks.forward import Forward


def input_gradient(forward: Forward, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """∂/∂x of the summed cross-entropy of ``labels``; no gradient is left on the model."""
    x = x.detach().requires_grad_(True)
    with torch.enable_grad():
        loss = F.cross_entropy(forward(x), labels, reduction="sum")
        (grad,) = torch.autograd.grad(loss, x)
    return grad


def project(x_adv: torch.Tensor, x: torch.Tensor, eps: float) -> torch.Tensor:
    """Π: back into the ε-ball around ``x`` and into [0, 1]."""
    return torch.clamp(x + torch.clamp(x_adv - x, -eps, eps), 0.0, 1.0)


def fgsm(forward: Forward, x, labels, *, eps: float) -> torch.Tensor:
    """One signed step of size ε."""
    return torch.clamp(x + eps * input_gradient(forward, x, labels).sign(), 0.0, 1.0).detach()


def iterate(forward: Forward, x, labels, start, *, eps: float, alpha: float, steps: int,
            decay: float | None = None) -> torch.Tensor:
    """``steps`` signed steps of size α from ``start``, each projected (BIM, PGD, R-FGSM);
    with ``decay``, on the momentum of the normalised gradients (MI-FGSM)."""
    x_adv = start.detach()
    momentum = torch.zeros_like(x)
    for _ in range(int(steps)):
        grad = input_gradient(forward, x_adv, labels)
        if decay is not None:
            scale = grad.abs().mean(dim=(1, 2, 3), keepdim=True)
            grad = grad / torch.where(scale > 0, scale, 1.0) + decay * momentum
            momentum = grad
        x_adv = project(x_adv + alpha * grad.sign(), x, eps).detach()
    return x_adv


def bim(forward, x, labels, *, eps: float, alpha: float, steps: int) -> torch.Tensor:
    """``steps`` projected steps of size α from ``x``."""
    return iterate(forward, x, labels, x, eps=eps, alpha=alpha, steps=steps)


def pgd(forward, x, labels, *, eps: float, alpha: float, steps: int,
        uniform: torch.Tensor | None) -> torch.Tensor:
    """``uniform``: U[−1, 1) draws of x's shape, scaled by ε (None: no random start)."""
    start = x if uniform is None else torch.clamp(x + eps * uniform, 0.0, 1.0)
    return iterate(forward, x, labels, start, eps=eps, alpha=alpha, steps=steps)


def rfgsm(forward, x, labels, *, eps: float, alpha: float, steps: int,
          normal: torch.Tensor) -> torch.Tensor:
    """``normal``: N(0, 1) draws of x's shape (only their signs matter)."""
    start = torch.clamp(x + alpha * normal.sign(), 0.0, 1.0)
    return iterate(forward, x, labels, start, eps=eps, alpha=alpha, steps=steps)


def mifgsm(forward, x, labels, *, eps: float, alpha: float, steps: int,
           decay: float) -> torch.Tensor:
    """BIM on the momentum (decay μ) of the L1-normalised gradients."""
    return iterate(forward, x, labels, x, eps=eps, alpha=alpha, steps=steps, decay=decay)
