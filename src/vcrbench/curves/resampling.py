"""What a bootstrap replicate resamples: units (images, subjects) or, failing enough units, samples.

Samples that share an image (or trials that share a subject) are not independent, so a bootstrap
that redraws samples understates the spread of R across image pools. Here a replicate redraws
*units* and every sample of a drawn unit comes along (a cluster bootstrap; Davison & Hinkley
1997, §3.8). Two designs:

* :class:`ClusterResampling` — each unit ``u`` gets a weight ``w_bu`` per replicate ``b`` and a
  sample weighs as its unit. The weights are Poisson(1) counts (the *Poisson bootstrap*, Hanley &
  MacGibbon 2006: asymptotically the multinomial bootstrap), drawn from a key of
  ``(seed, namespace, unit name, b)`` only (:func:`poisson_weights`). So image ``x`` has the same
  weight in replicate ``b`` for every model, corruption and property of a run: curves of the same
  images are *paired* replicate by replicate (model vs model, before vs after fine-tuning, the
  overlap matrix) without any bookkeeping, whatever subset of the images a table holds.
  Two factors (subjects × images of a human experiment) combine as the product of their weights
  (the "pigeonhole" bootstrap for crossed designs, Owen 2007, which is slightly conservative).
* :class:`SampleResampling` — the old nonparametric bootstrap over the N samples, exact as a
  multinomial draw over the distinct sample rows; used only when there are too few units
  (``bootstrap.min_units``), and then labelled as conditional on those units.

A replicate in which every unit of a curve draws weight 0 has no data; it is *invalid* (its
curve is NaN) and left out of bands and intervals (:mod:`vcrbench.curves.bootstrap`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from vcrbench.core.seeding import name_words
from vcrbench.errors import VcrbenchError

#: Fewest units (images, subjects) a cluster bootstrap is run on (``bootstrap.min_units``).
DEFAULT_MIN_UNITS = 10
#: Poisson(1) cumulative probabilities P(W <= k), k = 0..19 (P(W >= 20) < 1e-18).
_POISSON1_CDF = np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(20)])
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mix, elementwise."""
    x = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def unit_keys(seed: int, namespace: str, names: list[str]) -> np.ndarray:
    """``(U,)`` uint64 keys of named units: SHA-256 words of ``(seed, namespace, name)``."""
    seed = int(seed)
    if seed < 0:
        raise VcrbenchError(f"the bootstrap seed must be non-negative, got {seed}")
    keys = np.empty(len(names), np.uint64)
    for i, name in enumerate(names):
        words = name_words(f"{seed}\x00{namespace}\x00{name}")
        keys[i] = words[0] | (words[1] << 32)
    return keys


def poisson_weights(seed: int, namespace: str, names: list[str], n_boot: int) -> np.ndarray:
    """``(B, U)`` Poisson(1) weights of named units, one row per replicate.

    Weight ``(b, u)`` depends on ``(seed, namespace, names[u], b)`` only: the same unit gets the
    same weight in every table of a run, in any order or subset.
    """
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 1:
        raise VcrbenchError(f"the number of replicates must be a positive integer, got {n_boot!r}")
    keys = unit_keys(seed, namespace, names)
    counter = (np.arange(1, int(n_boot) + 1, dtype=np.uint64) * _GOLDEN)[:, None]
    with np.errstate(over="ignore"):
        bits = _mix64(_mix64(keys[None, :] + counter) ^ keys[None, :])
    uniform = (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return np.searchsorted(_POISSON1_CDF, uniform, side="right").astype(np.float64)


class Resampling(Protocol):
    """How a curve's bootstrap replicates reweight its N samples."""

    n_boot: int
    #: What is resampled, for the tables (``"images (207)"``, ``"samples (conditional on …)"``).
    description: str

    def totals(self, values: np.ndarray) -> np.ndarray:
        """``(B, K)`` replicate totals of per-sample ``values`` ``(N, K)``."""


@dataclass(frozen=True)
class ClusterResampling:
    """A cluster bootstrap: sample ``i`` weighs ``weights[b, units[i]]`` in replicate ``b``.

    Attributes:
        units: ``(N,)`` int64 unit of each sample, in ``[0, U)``.
        weights: ``(B, U)`` non-negative replicate weights of the units.
        description: what is resampled.
    """

    units: np.ndarray
    weights: np.ndarray
    description: str

    @property
    def n_boot(self) -> int:
        return int(self.weights.shape[0])

    def totals(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2 or values.shape[0] != self.units.shape[0]:
            raise VcrbenchError(
                f"values must have shape ({self.units.shape[0]}, K), got {values.shape}"
            )
        n_units = self.weights.shape[1]
        members = sp.csr_array(
            (np.ones(self.units.size), (self.units, np.arange(self.units.size))),
            shape=(n_units, self.units.size),
        )
        return self.weights @ (members @ values)


@dataclass(frozen=True)
class SampleResampling:
    """The nonparametric bootstrap over the N samples (draw N with replacement), exact: one
    multinomial draw per replicate over the distinct rows of ``values``, with probabilities
    their multiplicities / N. ``seed`` keys it (``default_rng(SeedSequence(seed))``)."""

    n_boot: int
    seed: int
    description: str

    def totals(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2 or values.shape[0] == 0:
            raise VcrbenchError(f"values must have shape (N, K) with N >= 1, got {values.shape}")
        rows, counts = np.unique(values, axis=0, return_counts=True)
        rng = np.random.default_rng(np.random.SeedSequence(int(self.seed)))
        n = int(counts.sum())
        draws = rng.multinomial(n, counts / n, size=int(self.n_boot)).astype(np.float64)
        return draws @ rows


def unit_weights(seed: int, factor: str, names: list[str], n_boot: int, namespace: str = ""
                 ) -> np.ndarray:
    """``(B, U)`` weights of named units of one factor, exactly as :func:`cluster_resampling`
    draws them (e.g. ``unit_weights(seed, "images", image_ids, B)``: the image weights of every
    model curve of a run, for statistics that must be paired with those curves)."""
    return poisson_weights(seed, f"{namespace}/{factor}", list(names), n_boot)


def _factor(seed: int, namespace: str, labels: np.ndarray, n_boot: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """Unit index of each sample and the ``(B, U)`` weights of the distinct labels."""
    names, inverse = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    return inverse.astype(np.int64), poisson_weights(seed, namespace, names.tolist(), n_boot)


def cluster_resampling(
    factors: dict[str, np.ndarray],
    *,
    n_boot: int,
    seed: int,
    min_units: int = DEFAULT_MIN_UNITS,
    fallback_seed: int = 0,
    sample_name: str = "samples",
    namespace: str = "",
) -> Resampling:
    """The resampling of N samples grouped by one or two factors (e.g. ``{"images": ids}``, or
    ``{"subjects": s, "images": i}`` for crossed human trials).

    A factor with at least ``min_units`` distinct values is resampled (Poisson weights keyed by
    ``(seed, namespace/factor name, value)``); two resampled factors combine as the product of their
    weights. A factor with fewer units is held fixed and the description says the interval is
    conditional on it. With no factor resampled, the samples themselves are
    (:class:`SampleResampling`, keyed by ``fallback_seed``).

    Args:
        factors: factor name -> ``(N,)`` unit label of each sample (strings).
        n_boot: B.
        seed: run seed (keys the unit weights).
        min_units: fewest distinct units for a factor to be resampled.
        fallback_seed: seed of the sample bootstrap, when it is used.
        sample_name: what one sample is called in the description ("samples", "trials").
        namespace: keeps the units of different data apart (``"human"``: a human experiment's
            images are not the run's images even where their names agree).
    """
    if isinstance(min_units, bool) or int(min_units) != min_units or min_units < 2:
        raise VcrbenchError(f"bootstrap.min_units must be an integer >= 2, got {min_units!r}")
    sizes = {name: int(np.unique(np.asarray(labels, dtype=str)).size)
             for name, labels in factors.items()}
    n = {np.asarray(labels).shape[0] for labels in factors.values()}
    if len(n) > 1:
        raise VcrbenchError(f"every factor needs one label per sample; got lengths {sorted(n)}")
    drawn = [name for name in factors if sizes[name] >= min_units]
    fixed = [f"{sizes[name]} {name}" for name in factors if name not in drawn]
    condition = f"; conditional on {' and '.join(fixed)}" if fixed else ""
    if not drawn:
        return SampleResampling(int(n_boot), int(fallback_seed),
                                f"{sample_name} (fewer than {min_units} units{condition})")
    units, weights = _factor(seed, f"{namespace}/{drawn[0]}", factors[drawn[0]], n_boot)
    described = [f"{drawn[0]} ({sizes[drawn[0]]})"]
    for name in drawn[1:]:
        second, second_weights = _factor(seed, f"{namespace}/{name}", factors[name], n_boot)
        cells, units = np.unique(np.stack([units, second]), axis=1, return_inverse=True)
        units = units.ravel().astype(np.int64)
        weights = weights[:, cells[0]] * second_weights[:, cells[1]]
        described.append(f"{name} ({sizes[name]})")
    return ClusterResampling(units, weights, " × ".join(described) + condition)
