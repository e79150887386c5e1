"""Corruption overlap and non-overlapping benchmarks (the NOC paper, ImageNet-NOC).

:mod:`~vcrbench.overlap.scores` holds the robustness and overlapping scores (Eq. 2),
:mod:`~vcrbench.overlap.selection` Algorithm 1 (the largest set of candidates whose pairwise
overlap stays within a threshold), :mod:`~vcrbench.overlap.corruption_error` CE / mCE and the
balance of a benchmark, :mod:`~vcrbench.overlap.report` the report built from a run's cached
tables (with paired image-bootstrap intervals), :mod:`~vcrbench.overlap.control` the positive
control read off those tables, and :mod:`~vcrbench.overlap.config` the ``overlap`` section: the
roles, their generated fine-tuning entries and the checks.

May import: :mod:`vcrbench.core`, :mod:`vcrbench.curves`, :mod:`vcrbench.models` (names only);
no other paper package (its models are trained by :mod:`vcrbench.training` through the
fine-tuning entries it generates).
"""
