"""Seeded random initialisation: a model built without pretrained weights gets the same weights
in every job, every process and every run.

Building a network draws its initial weights from torch's global generator, which differs from
one process to the next; a run whose clean and corrupted predictions came from two differently
initialised networks would compare two models. Every model form that builds a network without
loading every weight (``torchvision:<arch>?weights=none``, ``timm:<name>?pretrained=false``,
``file:`` models whose file initialises at random) is therefore built inside
:func:`seeded_construction`: torch's CPU generator (and Python's and numpy's global ones, which
some architectures use) is seeded from the model's name, and restored afterwards, so nothing
outside the construction changes. The seed is the first 63 bits of the SHA-256 of
``"<kind>:<target>#<seed>"`` (``seed`` the model string's ``seed`` option, 0 by default): the
same string gives the same weights on the same torch version and CPU; two architectures, or one
with ``?seed=1``, get different ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
from collections.abc import Iterator

import numpy as np
import torch


def init_seed(kind: str, target: str, seed: int | str = 0) -> int:
    """The 63-bit seed of a model's random initialisation (see the module docstring)."""
    digest = hashlib.sha256(f"{kind}:{target}#{int(seed)}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


@contextlib.contextmanager
def seeded_construction(seed: int) -> Iterator[None]:
    """Seed torch's CPU generator, Python's ``random`` and numpy's global generator with ``seed``
    for the duration, then put all three back as they were (CUDA generators are not touched:
    modules are built on the CPU)."""
    python_state = random.getstate()
    numpy_state = np.random.get_state()
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(seed)  # the CPU's only: CUDA's are left alone
        random.seed(seed)
        np.random.seed(seed % 2**32)
        try:
            yield
        finally:
            random.setstate(python_state)
            np.random.set_state(numpy_state)
