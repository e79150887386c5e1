"""vcrbench: visually-continuous corruption robustness of image classifiers, compared with humans.

Shared layers at the bottom, one package per paper on top (docs/architecture.md, "Layers"):

- :mod:`~vcrbench.errors`, :mod:`~vcrbench.core` (files, tables, keyed randomness, properties,
  shards, jobs);
- :mod:`~vcrbench.data`, :mod:`~vcrbench.corruptions`, :mod:`~vcrbench.vif`,
  :mod:`~vcrbench.curves` (binning, splines, bootstrap, areas), :mod:`~vcrbench.models`;
- :mod:`~vcrbench.evaluation` (samples → scored → predictions → outcomes),
  :mod:`~vcrbench.training` (fine-tuning), :mod:`~vcrbench.figures`;
- the papers: :mod:`~vcrbench.vcr` (VCR-Bench), :mod:`~vcrbench.human` (its human comparison),
  :mod:`~vcrbench.overlap` (NOC);
- :mod:`~vcrbench.config` and :mod:`~vcrbench.cli`, which compose them all.

A package imports only the layers below it (each ``__init__`` says which); paper packages never
import each other (tests/unit/test_layers.py checks every import, lazy ones too). Nothing in
the library imports snakemake.
"""

__version__ = "0.1.0"
