"""Training methods (``finetune[].method``): the views and the loss each one plugs into the
epoch loop.

| method | views | loss |
|---|---|---|
| ``standard`` | ``input`` (the entry's corruption on a fraction of the batch, if any) | CE |
| ``augmix`` | ``input`` (clean), two AugMix views of AugMix's nine operations | CE + λ·JS |
| ``reva_minus`` | as ``augmix``, plus the PGD counterpart | REVa's Eq. 2 |
| ``reva`` | as ``reva_minus``, the AugMix pool with the targeted corruptions | REVa's Eq. 2 |

REVa's targeted corruptions come from its part 1 (the non-robust group of the standard model,
``reva/groups.parquet``) or from a list; :func:`targeted_from_groups` reads that table (a plain
table: this package does not import :mod:`vcrbench.reva`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.errors import VcrbenchError
from vcrbench.training.augmentation import AugMixAugmentation, CorruptionAugmentation
from vcrbench.training.augmix import AUGMIX_OPS
from vcrbench.training.losses import AugMixLoss, Loss, RevaLoss, cross_entropy
from vcrbench.training.spec import ADVERSARIAL_METHODS, TrainingSpec
from vcrbench.training.views import Augmentation, operation_pool


def augmix_pool(spec: TrainingSpec, side: int = 224) -> tuple[tuple[str, ...], dict]:
    """The operation pool of an AugMix method and its corruption operations, on images of
    ``side`` px (the targeted corruptions' constants at that side:
    :func:`~vcrbench.training.views.operation_pool`)."""
    if spec.method != "reva":
        return AUGMIX_OPS, {}
    reva = spec.reva
    return operation_pool(reva.targeted, reva.augmix_ops, side, reva.severity,
                          reva.domain_fraction, what=f"finetune {spec.name}")


def method_parts(spec: TrainingSpec, adversarial: np.ndarray | None = None, side: int = 224
                 ) -> tuple[Augmentation, Loss]:
    """The augmentation and loss of the entry's method (module docstring) for training images
    of ``side`` px; ``adversarial``: the PGD counterparts aligned with the training index
    (REVa methods only)."""
    if spec.method == "standard":
        return CorruptionAugmentation(spec), cross_entropy
    needs = spec.method in ADVERSARIAL_METHODS
    if needs != (adversarial is not None):
        raise VcrbenchError(f"finetune {spec.name}: method {spec.method} "
                            f"{'needs' if needs else 'takes no'} PGD counterparts")
    pool, corruptions = augmix_pool(spec, side)
    augmentation = AugMixAugmentation(spec, pool, corruptions, adversarial)
    if spec.method == "augmix":
        return augmentation, AugMixLoss(spec.augmix.lam)
    return augmentation, RevaLoss(spec.reva.gamma, spec.augmix.lam)


def targeted_from_groups(groups: pa.Table, model: str, measure: str = "severity") -> list[str]:
    """The corruptions REVa's part 1 found non-robust for ``model``: rows of
    ``reva/groups.parquet`` with that model, ``kind == "corruption"``, the ``measure``, the
    chosen rule and ``non_robust`` true, in table order. Raises when the model has no such rows
    (e.g. it was not validated)."""
    rows = [r for r in groups.to_pylist()
            if r["model"] == model and r["kind"] == "corruption" and r["measure"] == measure
            and r["chosen"]]
    if not rows:
        raise VcrbenchError(
            f"reva.targeted auto: REVa's groups table has no {measure} rows for {model} (models "
            f"there: {sorted({r['model'] for r in groups.to_pylist()})}); validate that model "
            "(reva.model) or give reva.targeted as a list")
    return list(dict.fromkeys(r["perturbation"] for r in rows if r["non_robust"]))
