"""Adversarial attacks: untargeted L∞ perturbations of the pipeline's stored images.

:mod:`~vcrbench.attacks.gradient` holds the gradient attacks (FGSM, BIM, PGD, R-FGSM, MI-FGSM,
with torchattacks' update rules and defaults), :mod:`~vcrbench.attacks.universal` the universal
adversarial perturbation (one δ for a whole image set), :mod:`~vcrbench.attacks.forward` the
differentiable path from a [0, 1] image to a loaded model's logits, and
:mod:`~vcrbench.attacks.registry` the attack names, their parameters and defaults, and
:func:`attack_images`, which runs one attack on uint8 images and returns uint8 images whose
change stays within ε after rounding. REVa uses them on its weak-robust validation set; any
paper may.

May import: :mod:`vcrbench.core`, :mod:`vcrbench.models`.
"""

from vcrbench.attacks.forward import forward_of
from vcrbench.attacks.registry import ATTACKS, Attack, attack_images, check_attack_params

__all__ = ["ATTACKS", "Attack", "attack_images", "check_attack_params", "forward_of"]
