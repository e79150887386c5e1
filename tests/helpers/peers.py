"""The peer packages the corruption tests compare with, made importable on current libraries."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import types
import warnings
from collections.abc import Iterator

import numpy as np
import pytest


def imagecorruptions_module() -> types.ModuleType:
    """``imagecorruptions.corruptions`` (1.1.2), or skip the test where it is not installed.

    It imports ``pkg_resources`` (gone from current setuptools; a stand-in gives its one
    function) and calls skimage's ``gaussian`` with the removed ``multichannel`` argument
    (translated to ``channel_axis``). Its fog also needs numpy 1's ``np.float_``: tests of fog
    add that alias themselves.
    """
    if importlib.util.find_spec("imagecorruptions") is None:
        pytest.skip("imagecorruptions is not installed")
    stub = types.ModuleType("pkg_resources")
    stub.resource_filename = lambda pkg, name: os.path.join(  # type: ignore[attr-defined]
        os.path.dirname(sys.modules[pkg].__file__), name)
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "pkg_resources" not in sys.modules and importlib.util.find_spec("pkg_resources") is None:
            mp.setitem(sys.modules, "pkg_resources", stub)
        import imagecorruptions.corruptions as module
    from skimage.filters import gaussian

    def gaussian_compat(image, sigma, multichannel=None, **kwargs):
        return gaussian(image, sigma=sigma, channel_axis=-1 if multichannel else None, **kwargs)

    module.gaussian = gaussian_compat
    return module


@contextlib.contextmanager
def seeded_numpy(seed: int) -> Iterator[None]:
    """Run a peer that draws from numpy's global generator under a fixed seed, then restore
    the generator's state."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Absolute difference of two arrays, in float64."""
    return np.abs(a.astype(np.float64) - b.astype(np.float64))
