"""Humans (VCR-Bench §4): human curves from real trials and how models compare with them.

:mod:`~vcrbench.human.trials` reads trial data (model-vs-human raw CSVs, a generic per-trial
table); :mod:`~vcrbench.human.stimuli` measures the Δv of an experiment's conditions on the
run's images and :mod:`~vcrbench.human.conditions` hands it to the trials;
:mod:`~vcrbench.human.curves` fits the human curves with the models' estimator;
:mod:`~vcrbench.human.transfer` says which human curve each corruption is compared with;
:mod:`~vcrbench.human.indices` computes HMRI and MRSI; :mod:`~vcrbench.human.similarity` and
:mod:`~vcrbench.human.discrimination` find visually similar corruptions;
:mod:`~vcrbench.human.config` checks the ``human`` config sections.

May import: :mod:`vcrbench.core`, :mod:`vcrbench.data`, :mod:`vcrbench.corruptions`,
:mod:`vcrbench.vif`, :mod:`vcrbench.curves`, :mod:`vcrbench.evaluation`; no other paper package.
"""
