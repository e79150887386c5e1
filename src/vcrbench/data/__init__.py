"""Data: the clean images and the label spaces every stage shares.

:mod:`~vcrbench.data.datasets` builds the index of a dataset (builtin photographs, an image
folder, ImageNet val) and prepares every image the one way the pipeline sees it (RGB, short side
256, centre crop 224, uint8); :mod:`~vcrbench.data.imagenet` holds the ImageNet-1k classes and
:mod:`~vcrbench.data.imagenet16` the 16 entry-level categories of the human experiments and the
16-class decision; :mod:`~vcrbench.data.cifar` reads CIFAR at 32 px and
:mod:`~vcrbench.data.cifar_pack` packs CIFAR-10 to travel and caches it as arrays;
:mod:`~vcrbench.data.config` checks the dataset sections of a config.

May import: :mod:`vcrbench.core`, :mod:`vcrbench.errors`.
"""
