"""Which Δv bins a corruption can reach at a run's image size, for the adaptive spacing
(:mod:`vcrbench.corruptions.adaptive`), the coverage table (:mod:`vcrbench.vcr.coverage`) and
the summary's note.

"Reachable" means: some parameter value of the corruption gets there on these images at this
size. The Δv values a corruption's pilot measures over its whole domain (its clean and strongest
points included) are sorted and joined into intervals wherever two consecutive values are at
most :data:`GAP` apart; a bin meeting an interval is reachable (:func:`reachable_bins`), the
others are not (e.g. box and median blur between the clean image and their smallest whole-pixel
kernel at 32 px). A bin where a sample of the run lands is reached too, whatever the pilot saw
(:func:`reached_bins`: a pilot of a few hundred samples can miss a narrow band that the spread of
Δv across images fills). :data:`GAP` is wide (six bins at M = 40) so that a gap is a property of
the corruption, not a hole in a small pilot. :func:`unreachable_ranges` writes the other bins as
Δv ranges, :data:`UNREACHABLE_NOTE` says what they mean. Bins are the curves' own
(:func:`vcrbench.curves.binning.bin_index`).
"""

from __future__ import annotations

import numpy as np

from vcrbench.curves.binning import bin_index

#: Δv gap (in Δv units) above which two pilot values are not joined into one reachable range.
GAP = 0.15
#: What "unreachable" means, in the coverage table and the summary's note.
UNREACHABLE_NOTE = (
    "Unreachable Δv: bins that no parameter value of the corruption reaches on these images at"
    " this size (the pilot's Δv over the whole domain, its clean and strongest points included;"
    " a property of the corruption, not of the design)")


def bin_of(dv: np.ndarray | float, bins: int) -> np.ndarray:
    """The Δv bin (0 to bins − 1) of each value, as the curves bin them
    (:func:`vcrbench.curves.binning.bin_index`)."""
    return bin_index(np.atleast_1d(np.asarray(dv, np.float64)), bins)


def reachable_bins(dv: np.ndarray, bins: int, gap: float = GAP) -> np.ndarray:
    """Boolean (bins,): bins that meet a reachable Δv range (module docstring)."""
    values = np.sort(np.asarray(dv, np.float64))
    out = np.zeros(bins, bool)
    if len(values) == 0:
        return out
    breaks = np.flatnonzero(np.diff(values) > gap)
    starts = np.concatenate([[values[0]], values[breaks + 1]])
    ends = np.concatenate([values[breaks], [values[-1]]])
    for lo, hi in zip(starts, ends, strict=True):
        out[int(bin_of(lo, bins)[0]):int(bin_of(hi, bins)[0]) + 1] = True
    return out


def reached_bins(pilot_dv: np.ndarray, run_dv: np.ndarray | None, bins: int) -> np.ndarray:
    """Boolean (bins,): bins the pilot reaches (:func:`reachable_bins`) or where a sample of the
    run lands (``run_dv``, None: the pilot alone)."""
    reach = reachable_bins(pilot_dv, bins)
    if run_dv is not None and len(run_dv):
        reach |= np.bincount(bin_of(run_dv, bins), minlength=bins) > 0
    return reach


def unreachable_ranges(unreachable: np.ndarray) -> list[str]:
    """Runs of consecutive unreachable bins as Δv ranges, e.g. ``["0.025–0.600"]``."""
    bins, out, b = len(unreachable), [], 0
    while b < bins:
        if unreachable[b]:
            end = b
            while end + 1 < bins and unreachable[end + 1]:
                end += 1
            out.append(f"{b / bins:.3f}–{(end + 1) / bins:.3f}")
            b = end
        b += 1
    return out
