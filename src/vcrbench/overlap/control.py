"""The NOC overlap positive control, read off a finished run's overlap tables (``vcrbench
control overlap``; config/control-noc-overlap-cifar10.yaml).

Fine-tuning on Gaussian noise is known to transfer to the other pixel noises and not to
low-frequency changes, so its overlap score with shot and impulse noise must come out above its
overlap with brightness and fog. :func:`overlap_control` gives, for both robustness scores
(``noc`` and ``vcr``): the overlap of ``corruption`` with each ``near`` and ``far`` corruption
with its 95 % interval, every near − far difference with its paired interval (replicate ``b``
of both scores resampled the same images: :func:`vcrbench.overlap.report.overlap_contrast`), how
many overlap scores of the matrix are defined, and the benchmarks Algorithm 1 selects. With
``among`` (e.g. ImageNet-NOC's eight candidates), the overlaps among that set: every pair's O
with its interval, and how many pairs lie below each Algorithm 1 threshold, counting apart the
pairs of a candidate whose own gain (``overlap/gains.parquet``) the data cannot tell from 0.
Nothing is recomputed.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

from vcrbench.core.tables import read_table
from vcrbench.errors import VcrbenchError
from vcrbench.overlap.report import overlap_contrast


def _value(x: float | None) -> str:
    return "undefined" if x is None else f"{x:+.3f}"


def _interval(lo: float | None, hi: float | None) -> str:
    return "" if lo is None else f" [{lo:+.3f}, {hi:+.3f}]"


def overlap_control(run: Path, corruption: str = "gaussian_noise",
                    near: Sequence[str] = ("shot_noise", "impulse_noise"),
                    far: Sequence[str] = ("brightness", "fog"),
                    among: Sequence[str] = ()) -> str:
    """The Markdown report of the module docstring for the results folder ``run``."""
    near, far, among = list(near), list(far), list(among)
    folder = Path(run) / "overlap"
    if not (folder / "matrix.parquet").is_file():
        raise VcrbenchError(f"{folder / 'matrix.parquet'} does not exist: give the folder of a "
                            "finished run with an overlap section (results/<run>)")
    matrix, replicates = (read_table(folder / f"{t}.parquet")
                          for t in ("matrix", "matrix_replicates"))
    benchmarks = read_table(folder / "benchmarks.parquet").to_pylist()
    gains_file = folder / "gains.parquet"  # runs made before the gains table have none
    gains = ({(r["score"], r["corruption"]): r for r in read_table(gains_file).to_pylist()}
             if gains_file.is_file() else {})
    cells = {(r["score"], r["c1"], r["c2"]): r for r in matrix.to_pylist()}
    candidates = list(dict.fromkeys(r["c1"] for r in matrix.to_pylist()))
    unknown = [c for c in [*among, corruption, *near, *far] if c not in candidates]
    if unknown:
        raise VcrbenchError(f"{unknown} are not candidates of {run}: choose among "
                            f"{', '.join(candidates)}")
    lines = [f"# NOC overlap control: {corruption} against {', '.join(near)} (near) and "
             f"{', '.join(far)} (far)", "", f"Run: `{run}`; candidates: "
             f"{', '.join(candidates)}. Intervals: 95 %, image bootstrap paired across models "
             "and scores.", ""]
    for score in ("noc", "vcr"):
        pairs = list(combinations(candidates, 2))
        defined = sum(cells[(score, a, b)]["O"] is not None for a, b in pairs)
        lines += [f"## score `{score}`", "",
                  f"Overlap scores defined: {defined} of {len(pairs)} pairs.", "",
                  "| pair | O |", "|---|---|"]
        for other in near + far:
            cell = cells[(score, corruption, other)]
            lines.append(f"| {corruption} – {other} | {_value(cell['O'])}"
                         f"{_interval(cell['O_lo'], cell['O_hi'])} |")
        lines += ["", "| contrast | difference |", "|---|---|"]
        for a in near:
            for b in far:
                got = overlap_contrast(matrix, replicates, score, (corruption, a),
                                       (corruption, b))
                lines.append(f"| O({a}) − O({b}) | {_value(got['difference'])}"
                             f"{_interval(got['lo'], got['hi'])} ({got['replicates']} "
                             "replicates) |")
        lines += ["", "| threshold | Algorithm 1's benchmark |", "|---:|---|"]
        lines += [f"| {r['threshold']} | {', '.join(r['corruptions'])} |" for r in benchmarks
                  if r["score"] == score]
        lines.append("")
        if among:
            lines += _among(score, among, cells, gains,
                            sorted({r["threshold"] for r in benchmarks}))
    return "\n".join(lines)


def _among(score: str, among: list[str], cells: dict, gains: dict, thresholds: list[float]
           ) -> list[str]:
    """The overlaps among ``among`` for one score, pairs with an unsupported own gain apart."""
    # without gains.parquet (a run made before it) or an interval, a gain counts as unsupported
    unsupported = [c for c in among if gains.get((score, c), {}).get("supported") is not True]
    pairs = list(combinations(among, 2))
    lines = [f"### Overlaps among {len(among)} candidates (`{score}`)", "",
             "| pair | O | own gains supported |", "|---|---|---|"]
    for a, b in pairs:
        cell = cells[(score, a, b)]
        lines.append(f"| {a} – {b} | {_value(cell['O'])}{_interval(cell['O_lo'], cell['O_hi'])}"
                     f" | {'no' if a in unsupported or b in unsupported else 'yes'} |")
    supported = [(a, b) for a, b in pairs if a not in unsupported and b not in unsupported]
    lines += ["", ("Own gains unknown (the run has no overlap/gains.parquet): every pair "
                   "counted as unsupported. " if not gains else "")
              + f"Own gain not shown above 0 (overlaps unsupported): "
              f"{', '.join(unsupported) or 'none'}; {len(supported)} of {len(pairs)} pairs "
              "between candidates with supported gains."]
    for t in thresholds:
        below = [p for p in supported if cells[(score, *p)]["O"] is not None
                 and cells[(score, *p)]["O"] <= t]
        upper = [p for p in supported if cells[(score, *p)]["O_hi"] is not None
                 and cells[(score, *p)]["O_hi"] <= t]
        lines.append(f"- threshold {t:g}: O ≤ {t:g} for {len(below)} of {len(supported)}; "
                     f"the whole interval ≤ {t:g} for {len(upper)}.")
    return [*lines, ""]
