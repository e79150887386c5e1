"""Weak-robust validation (the REVa paper): which perturbations a model is not robust to, read
on its least robust training images.

:mod:`~vcrbench.reva.analyser` runs Algorithm 1's model on N keyed neighbours of every pool
image; :mod:`~vcrbench.reva.resilience` reduces them to Eq. 1's misprediction scores and the
robustness score ρ per image; :mod:`~vcrbench.reva.selection` ranks the pool and takes the
weak-robust validation set; :mod:`~vcrbench.reva.adversarial` makes and scores the adversarial
version of a set; :mod:`~vcrbench.reva.relative_errors` holds the clean error, uCE, mCE, the
adversarial errors and the relative errors (Eq. 3–8) with image-level bootstrap intervals;
:mod:`~vcrbench.reva.categories` the perturbation categories and :mod:`~vcrbench.reva.groups`
the robust / non-robust groups; :mod:`~vcrbench.reva.weak_vs_all` R on the weak set against R
on all images, read as part 1's positive control by :mod:`~vcrbench.reva.control`;
:mod:`~vcrbench.reva.report` the report's tables and text (``reva_tables``) and
:mod:`~vcrbench.reva.inputs` the cached tables it reads; :mod:`~vcrbench.reva.comparison`
the comparison of training methods (Tables 2–5) with :mod:`~vcrbench.reva.signed_rank`, the
Wilcoxon signed-rank test; :mod:`~vcrbench.reva.config` the ``reva`` section's checks and plan
(docs/reva.md).

May import: :mod:`vcrbench.core`, :mod:`vcrbench.data`, :mod:`vcrbench.corruptions`,
:mod:`vcrbench.vif`, :mod:`vcrbench.curves`, :mod:`vcrbench.models`,
:mod:`vcrbench.evaluation`, :mod:`vcrbench.attacks`. No other paper package. Submodules are not
imported here, and the statistics modules (resilience, selection, categories, relative_errors,
groups, weak_vs_all, report, comparison, signed_rank) never load torch, so the statistics jobs
run without it.
"""
