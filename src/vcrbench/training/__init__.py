"""Training: fine-tuning a registry model, one cached and resumable epoch at a time.

:mod:`~vcrbench.training.spec` holds an entry's settings and keys its random draws;
:mod:`~vcrbench.training.layers` decides what learns; :mod:`~vcrbench.training.augmentation`
makes the views of a batch and :mod:`~vcrbench.training.losses` turns their logits into a loss,
both passed to the epoch loop :mod:`~vcrbench.training.loop` (so a method such as AugMix with
an adversarial view and a Jensen–Shannon loss plugs in without a second loop);
:mod:`~vcrbench.training.checkpoint` writes checkpoints (read by :mod:`vcrbench.models.finetuned`);
:mod:`~vcrbench.training.data` checks the training images and :mod:`~vcrbench.training.config`
the ``finetune`` section. VCR-Bench (Table 3) and NOC (one model per candidate) train through
it, and so do the training methods (:mod:`~vcrbench.training.methods`: AugMix, REVa⁻, REVa,
with :mod:`~vcrbench.training.augmix` making the AugMix views, :mod:`~vcrbench.training.
adversarial` the PGD counterparts and :mod:`~vcrbench.training.losses` the Jensen–Shannon and
Eq. 2 losses). :mod:`~vcrbench.training.cifar_c` measures a model trained from scratch on
CIFAR-10-C's severities (``vcrbench cifar-c``).

May import: :mod:`vcrbench.core`, :mod:`vcrbench.data`, :mod:`vcrbench.corruptions`,
:mod:`vcrbench.models`, :mod:`vcrbench.attacks` (PGD, for the counterparts); no paper
package.
"""
