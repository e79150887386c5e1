"""Training: fine-tuning a registry model and training a CIFAR model from scratch, one cached
and resumable epoch at a time.

Both paths train through one epoch loop, :mod:`~vcrbench.training.epochs` (``run_epoch``: the
steps of an epoch, whatever the path), given an ``EpochRecipe`` that holds what differs: the
optimiser, the schedule and its unit (per epoch / per step), the loss and its reduction (mean
of per-image losses / batch sum), precision, memory format, dropout seed and the steps (the
data source, the keyed draws and the views of each batch). Both write checkpoints with
:mod:`~vcrbench.training.checkpoint`, in the one format that :mod:`vcrbench.models.checkpoints`
reads.

Fine-tuning (VCR-Bench Table 3, NOC's one model per candidate, REVa's methods on a base):
:mod:`~vcrbench.training.spec` holds an entry's settings and keys its random draws;
:mod:`~vcrbench.training.layers` decides what learns; :mod:`~vcrbench.training.augmentation`
makes the views of a batch and :mod:`~vcrbench.training.losses` turns their logits into a loss,
both passed to the fine-tuning epoch :mod:`~vcrbench.training.loop` (the training methods,
:mod:`~vcrbench.training.methods`: AugMix, REVa⁻, REVa, plug in without a second loop);
:mod:`~vcrbench.training.data` checks the training images and :mod:`~vcrbench.training.config`
the ``finetune`` section.

Training from scratch (``train:``, docs/cifar.md): :mod:`~vcrbench.training.scratch` holds the
recipe (AugMix's CIFAR recipe by default), its epoch and its states (read by
:mod:`vcrbench.models.trained`), :mod:`~vcrbench.training.train_config` the ``train`` section,
:mod:`~vcrbench.training.view_workers` makes AugMix views in worker processes,
:mod:`~vcrbench.training.cifar_c` measures a model on CIFAR-10-C's severities (``vcrbench
cifar-c``) and :mod:`~vcrbench.training.slices` / :mod:`~vcrbench.training.slice_run` train
slices of a grid of such models.

Both paths make a batch's views with :mod:`~vcrbench.training.views` (the view names, crops from
the zero-padded image and flips, the AugMix views of a batch and their operation pool, with
:mod:`~vcrbench.training.augmix` and :mod:`~vcrbench.training.augmix_batch` the AugMix
operations), take the Jensen–Shannon and Eq. 2 losses from :mod:`~vcrbench.training.losses`
and the PGD counterparts from :mod:`~vcrbench.training.adversarial`; their recipes (optimiser,
schedule, geometry, keys of the draws) differ. No module of the package imports another through
a circle (``tests/unit/test_layers.py``).

May import: :mod:`vcrbench.core`, :mod:`vcrbench.data`, :mod:`vcrbench.corruptions`,
:mod:`vcrbench.models`, :mod:`vcrbench.attacks` (PGD, for the counterparts); no paper
package.
"""
