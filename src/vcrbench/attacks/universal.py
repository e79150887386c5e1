"""A universal adversarial perturbation (UAP): one δ for every image of a set.

Fitted by signed-gradient ascent of the mean cross-entropy of the true labels (the stochastic
gradient UAP of Shafahi et al. 2020, "Universal adversarial training", AAAI), not by the
DeepFool-based algorithm of Moosavi-Dezfooli et al. (2017) that REVa cites. δ starts at 0;
``epochs`` passes over the images in fixed minibatches of ``batch_size`` (in the caller's
order, the last one possibly smaller) each take, per minibatch B,

    δ ← clip(δ + step · sign(∂/∂δ mean_{i ∈ B} CE(f(clip(x_i + δ, 0, 1)), y_i)), −ε, ε),

and the adversarial images are ``clip(x + δ, 0, 1)``. No randomness: δ depends only on the
set, its order, the parameters and the model.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from vcrbench.attacks.forward import Forward


def as_float(images: torch.Tensor) -> torch.Tensor:
    """uint8 grey levels -> float [0, 1]; float images are returned as they are."""
    return images.float().div(255.0) if images.dtype == torch.uint8 else images


def fit_universal(forward: Forward, images: torch.Tensor, labels: torch.Tensor, *, eps: float,
                  step: float, epochs: int, batch_size: int,
                  device: str | torch.device | None = None) -> torch.Tensor:
    """δ, (3, H, W) float32 on ``device`` (default: the images'), for ``images`` (N, 3, H, W)
    (uint8, or float in [0, 1]) with true ``labels`` (N,); ε and ``step`` are fractions of
    the [0, 1] range. The images may stay on the CPU: each minibatch is moved to ``device``.
    """
    device = torch.device(device) if device is not None else images.device
    delta = torch.zeros(images.shape[1:], dtype=torch.float32, device=device)
    size = int(batch_size)
    for _ in range(int(epochs)):
        for start in range(0, images.shape[0], size):
            x = as_float(images[start:start + size].to(device))
            y = labels[start:start + size].to(device)
            d = delta.detach().requires_grad_(True)
            with torch.enable_grad():
                loss = F.cross_entropy(forward(torch.clamp(x + d, 0.0, 1.0)), y)
                (grad,) = torch.autograd.grad(loss, d)
            delta = torch.clamp(delta + step * grad.sign(), -eps, eps).detach()
    return delta


def apply_universal(images: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """``clip(x + δ, 0, 1)`` for images (B, 3, H, W) (uint8, or float in [0, 1])."""
    return torch.clamp(as_float(images.to(delta.device)) + delta, 0.0, 1.0)
