"""vcrbench: visually-continuous corruption robustness of image classifiers."""

__version__ = "0.1.0"
