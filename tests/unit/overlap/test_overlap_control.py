"""``vcrbench control overlap`` (:mod:`vcrbench.overlap.control`): the report of hand-written
overlap tables, its contrasts against the percentile interval of replicate differences, and
the counts among a set of candidates with and without the own-gains table."""

from __future__ import annotations

from itertools import permutations
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.core.tables import write_table
from vcrbench.errors import VcrbenchError
from vcrbench.overlap.control import overlap_control

CANDIDATES = ["noise", "shot", "bright", "fog"]
#: The point overlap of each unordered pair (symmetric), the same for both scores.
POINT = {("noise", "shot"): 0.9, ("noise", "bright"): 0.1, ("noise", "fog"): None,
         ("shot", "bright"): 0.2, ("shot", "fog"): 0.05, ("bright", "fog"): 0.6}
B = 100


def _o(a: str, b: str) -> float | None:
    return 1.0 if a == b else POINT.get((a, b), POINT.get((b, a)))


def _write(folder: Path, rng: np.random.Generator, gains: bool) -> dict:
    """matrix, matrix_replicates, benchmarks (and gains) of a run; returns the replicates."""
    matrix, replicates, draws = [], [], {}
    for score in ("noc", "vcr"):
        for a, b in [*permutations(CANDIDATES, 2), *((c, c) for c in CANDIDATES)]:
            o = _o(a, b)
            values = None if o is None else o + rng.normal(0, 0.05, B)
            draws[(score, a, b)] = values
            matrix.append({"score": score, "c1": a, "c2": b, "O": o,
                           "O_lo": None if o is None else float(np.percentile(values, 2.5)),
                           "O_hi": None if o is None else float(np.percentile(values, 97.5))})
            replicates += [{"score": score, "replicate": r, "c1": a, "c2": b,
                            "O": None if values is None else float(values[r])} for r in range(B)]
    write_table(pa.Table.from_pylist(matrix), folder / "overlap" / "matrix.parquet")
    write_table(pa.Table.from_pylist(replicates), folder / "overlap" / "matrix_replicates.parquet")
    write_table(pa.Table.from_pylist([
        {"score": s, "threshold": t, "corruptions": members}
        for s in ("noc", "vcr") for t, members in ((0.25, ["noise", "bright"]),
                                                    (0.5, ["noise", "bright", "fog"]))]),
        folder / "overlap" / "benchmarks.parquet")
    if gains:
        write_table(pa.Table.from_pylist([
            {"score": s, "corruption": c, "supported": c != "fog"}
            for s in ("noc", "vcr") for c in CANDIDATES]), folder / "overlap" / "gains.parquet")
    return draws


def test_contrasts_and_counts_by_hand(tmp_path):
    draws = _write(tmp_path, np.random.default_rng(0), gains=True)
    text = overlap_control(tmp_path, "noise", ["shot"], ["bright", "fog"],
                           among=["noise", "shot", "bright", "fog"])
    lines = text.splitlines()
    assert lines[0] == "# NOC overlap control: noise against shot (near) and bright, fog (far)"
    assert "Overlap scores defined: 5 of 6 pairs." in text  # noise–fog is undefined
    difference = draws[("noc", "noise", "shot")] - draws[("noc", "noise", "bright")]
    lo, hi = np.percentile(difference, [2.5, 97.5])
    assert (f"| O(shot) − O(bright) | +0.800 [{lo:+.3f}, {hi:+.3f}] ({B} replicates) |"
            in lines)
    # the undefined point score: no difference, and no replicate where either is undefined
    assert "| O(shot) − O(fog) | undefined (0 replicates) |" in lines
    assert "| noise – fog | undefined |" in lines
    assert "| 0.25 | noise, bright |" in lines
    # among the four: fog's own gain is unsupported, so 3 of 6 pairs count; of those
    # noise–bright (0.1) and shot–bright (0.2) lie at or below 0.25, and noise–shot does not
    assert "Own gain not shown above 0 (overlaps unsupported): fog; 3 of 6 pairs" in text
    point_below = sum(_o(a, b) <= 0.25 for a, b in (("noise", "shot"), ("noise", "bright"),
                                                     ("shot", "bright")))
    assert point_below == 2
    assert any(line.startswith("- threshold 0.25: O ≤ 0.25 for 2 of 3;") for line in lines)


def test_without_gains_every_pair_is_unsupported_and_unknown_names_are_refused(tmp_path):
    _write(tmp_path, np.random.default_rng(1), gains=False)
    text = overlap_control(tmp_path, "noise", ["shot"], ["bright"], among=["noise", "shot"])
    assert "Own gains unknown (the run has no overlap/gains.parquet)" in text
    assert "| noise – shot | +0.900" in text and "| no |" in text
    with pytest.raises(VcrbenchError, match=r"\['snow'\] are not candidates"):
        overlap_control(tmp_path, "noise", ["snow"], ["bright"])
    with pytest.raises(VcrbenchError, match="finished run with an overlap section"):
        overlap_control(tmp_path / "missing")
