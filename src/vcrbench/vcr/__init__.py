"""VCR-Bench (visually-continuous corruption robustness): Algorithm 1 and its reports.

:mod:`~vcrbench.vcr.estimation` turns a model's per-sample outcomes into per-bin rates, fitted
curves and R_a / R_p; :mod:`~vcrbench.vcr.imagenet_c` reduces the ImageNet-C severity sample
(mean accuracy over severities, its Δv coverage); :mod:`~vcrbench.vcr.summary` joins every
metric into the summary table; :mod:`~vcrbench.vcr.coverage` is the paper's Table 2 and
:mod:`~vcrbench.vcr.retraining` its Table 3 (before and after fine-tuning), read as the
retraining experiment's positive control by :mod:`~vcrbench.vcr.controls`.

May import: :mod:`vcrbench.core`, :mod:`vcrbench.curves`, :mod:`vcrbench.evaluation`; no other
paper package (HMRI / MRSI reach the summary as tables of :mod:`vcrbench.human`).
"""
