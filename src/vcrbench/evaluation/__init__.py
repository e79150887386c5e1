"""Evaluation: the chain from a dataset index to per-sample outcomes that every paper reuses.

:mod:`~vcrbench.evaluation.samples` draws each sample (image, corruption parameters, noise
seed); :mod:`~vcrbench.evaluation.scoring` corrupts it and measures Δv with VIF;
:mod:`~vcrbench.evaluation.predictions` runs a model on clean and corrupted images;
:mod:`~vcrbench.evaluation.outcomes` joins them into correct / consistent per sample.

May import: :mod:`vcrbench.core`, :mod:`vcrbench.data`, :mod:`vcrbench.corruptions`,
:mod:`vcrbench.vif`, :mod:`vcrbench.models`.
"""
