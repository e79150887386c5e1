"""Weak-robust validation (the REVa paper): which perturbations a model is not robust to, read
on its least robust training images.

:mod:`~vcrbench.reva.analyser` runs Algorithm 1's model on N keyed neighbours of every pool
image, :mod:`~vcrbench.reva.resilience` reduces them to Eq. 1's misprediction and robustness
scores, :mod:`~vcrbench.reva.selection` ranks the pool and takes the weak-robust validation
set, :mod:`~vcrbench.reva.adversarial` makes and scores the adversarial version of a set,
:mod:`~vcrbench.reva.relative_errors` holds uCE, mCE, adversarial and relative errors (Eq. 3–8)
with image-level bootstrap intervals, :mod:`~vcrbench.reva.categories` and
:mod:`~vcrbench.reva.groups` the robust / non-robust groups, :mod:`~vcrbench.reva.weak_vs_all`
R on the weak set against all images, :mod:`~vcrbench.reva.report` and
:mod:`~vcrbench.reva.inputs` the report and the tables it reads, and
:mod:`~vcrbench.reva.config` the ``reva`` section's checks and plan (docs/reva.md).

May import: :mod:`vcrbench.core`, :mod:`vcrbench.data`, :mod:`vcrbench.corruptions`,
:mod:`vcrbench.vif`, :mod:`vcrbench.curves`, :mod:`vcrbench.models`,
:mod:`vcrbench.evaluation`, :mod:`vcrbench.attacks`. No other paper package; nothing here
loads torch at import, so the statistics jobs that read the tables run without it.
"""
