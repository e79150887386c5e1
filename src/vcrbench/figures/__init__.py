"""Figures: every paper figure drawn from cached tables only (matplotlib, PNG or PDF).

:mod:`~vcrbench.figures.style` holds what every figure shares (colours, labels, legends, the
atomic save); :mod:`~vcrbench.figures.vcr`, :mod:`~vcrbench.figures.human`,
:mod:`~vcrbench.figures.overlap` and :mod:`~vcrbench.figures.reva` one module per paper;
:mod:`~vcrbench.figures.heatmap` the models × corruptions layout that bar figures take when
their bars would not fit. A figure reads tables, never images or models, so ``snakemake
figures`` rebuilds them all without touching a model.

May import: :mod:`vcrbench.core`, :mod:`vcrbench.curves` (binning); no paper package (their
tables arrive as ``pyarrow.Table``).
"""
