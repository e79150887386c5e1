"""Curves: from (Δv, success) pairs to a fitted VCR curve with its uncertainty and areas.

:mod:`~vcrbench.curves.binning` bins Δv and counts rates (M bins, L); :mod:`~vcrbench.curves.
splines` fits the monotone median smoothing spline; :mod:`~vcrbench.curves.bootstrap` adds
bands and intervals over what :mod:`~vcrbench.curves.resampling` resamples (images, subjects);
:mod:`~vcrbench.curves.comparison` tests whether two curves differ;
:mod:`~vcrbench.curves.areas` is the one place where areas are computed;
:mod:`~vcrbench.curves.tables` holds the rates / curves / replicates / metrics tables that
models and humans share; :mod:`~vcrbench.curves.reachability` says which Δv bins a corruption's
pilot reaches (adaptive sampling, the coverage table). Every paper reuses this machinery; it
knows nothing of images.

May import: :mod:`vcrbench.core`, :mod:`vcrbench.errors`.
"""
