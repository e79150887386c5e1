"""Choose each corruption's ``visual`` spacing (registry ``spacing``) from measured Δv.

A parameter with log spacing floor ``f`` draws its normalised distance from the clean value
log-uniformly, ``d = f ** (1 − U(0, 1))`` (density ``1 / (d ln(1/f))`` on ``[f, 1]``); without
one, ``d = U(0, 1)`` (linear, the paper's). See ``vcrbench.corruptions.sampling``. One proposal
sample per corruption is scored once, with ``d`` drawn from the mixture ``q = ½ U(0, 1) +
½ U(0, 1) ** 4`` for every parameter (heavy near the clean value, so that every candidate in the
grid has bounded importance weights ``p / q``). For every combination of candidates the
expected number of samples per Δv bin at the benchmark's N follows from the importance-weighted
proposal; the combination with the most bins expected to hold at least ``margin × L`` samples
wins (ties: linear parameters first, then the larger floors). The result is checked by sampling
for real in ``bench_coverage.py``.

    python benchmarks/tune_spacing.py [--proposal 1200] [--n 2000] [--workers 2]
                                      [--corruptions a,b] [--cache /tmp/vcrbench-tune]

Prints, per corruption, the chosen exponents and the predicted coverage, with linear spacing
(the paper's) and with the registry's current exponents for comparison.
"""

from __future__ import annotations

import argparse
import itertools
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "imagenet-sample"
BINS, MIN_COUNT = 40, 20
#: Candidate log floors per parameter; None is linear spacing.
GRID = (None, 0.1, 0.03, 0.01, 0.003, 0.001, 0.0003)
PROPOSAL_POWER = 4.0


def _proposal(corruption: str, m: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Proposal parameters (native units) and their normalised distances d from the clean value."""
    from vcrbench.corruptions import get_corruption

    spec = get_corruption(corruption)
    rng = np.random.default_rng([0x7E5, len(corruption), *corruption.encode()])
    params, distances = {}, {}
    for name, (low, high) in spec.parameters.items():
        clean = spec.identity[name]
        u = rng.uniform(low, high, m)
        upper = u > clean
        side = np.where(upper, high - clean, clean - low)
        d = np.divide(np.abs(u - clean), side, out=np.zeros(m), where=side > 0)
        d = np.where(rng.random(m) < 0.5, d, d**PROPOSAL_POWER)
        params[name] = np.clip(np.where(upper, clean + side * d, clean - side * d), low, high)
        distances[name] = d
    return params, distances


def _score(job: tuple[str, int, str]) -> str:
    corruption, m, cache = job
    out = Path(cache) / f"{corruption}-{m}.npz"
    if out.exists():
        return corruption
    import pyarrow as pa
    import torch

    torch.set_num_threads(1)
    from vcrbench.datasets import build_index
    from vcrbench.samples import image_order
    from vcrbench.scoring import score_shard
    from vcrbench.seeding import noise_seed

    index, _ = build_index("imagefolder", str(SAMPLE))
    ids = index.column("image_id").to_pylist()
    order = image_order(len(ids), 0x7E5, corruption)
    params, distances = _proposal(corruption, m)
    table = pa.table({
        "sample_id": pa.array(range(m), pa.int64()),
        "image_id": pa.array([ids[order[i % len(ids)]] for i in range(m)]),
        "corruption": pa.array([corruption] * m),
        "seed": pa.array([noise_seed(0x7E5, corruption, i) for i in range(m)], pa.int64()),
        "severity": pa.array([0] * m, pa.int8()),
        **{name: pa.array(values, pa.float64()) for name, values in params.items()},
    })
    dv = score_shard(table, index).column("dv").to_numpy()
    np.savez(out, dv=dv, **{f"d_{k}": v for k, v in distances.items()})
    return corruption


def _density(d: np.ndarray, floor: float | None) -> np.ndarray:
    """Density of the normalised distance d under linear (None) or log spacing with a floor."""
    if floor is None:
        return np.ones_like(d)
    inside = d >= floor
    return np.where(inside, 1.0 / (np.maximum(d, floor) * np.log(1.0 / floor)), 0.0)


def _proposal_density(d: np.ndarray) -> np.ndarray:
    d = np.clip(d, 1e-300, 1.0)
    return 0.5 + 0.5 * d ** (1.0 / PROPOSAL_POWER - 1.0) / PROPOSAL_POWER


def predicted_coverage(dv: np.ndarray, distances: dict[str, np.ndarray],
                       floors: dict[str, float | None], n: int, threshold: float) -> float:
    """Fraction of bins whose expected count at N = n reaches ``threshold``."""
    from vcrbench.binning import bin_index

    weight = np.ones(dv.size)
    for name, d in distances.items():
        weight *= _density(d, floors[name]) / _proposal_density(d)
    expected = np.bincount(bin_index(dv, BINS), weights=weight, minlength=BINS)
    expected *= n / weight.sum()
    return float(np.mean(expected >= threshold))


def main() -> None:
    from vcrbench.corruptions import CORRUPTIONS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proposal", type=int, default=1200)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--margin", type=float, default=1.3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--corruptions", default=",".join(CORRUPTIONS))
    parser.add_argument("--cache", default="/tmp/vcrbench-tune")
    args = parser.parse_args()
    if not SAMPLE.is_dir():
        raise SystemExit(f"{SAMPLE} is absent")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    names = args.corruptions.split(",")
    with ProcessPoolExecutor(args.workers) as pool:
        list(pool.map(_score, [(c, args.proposal, args.cache) for c in names]))

    threshold = args.margin * MIN_COUNT
    print(f"predicted coverage at N = {args.n}, {BINS} bins, expected count ≥ {threshold:g}\n")
    print("| corruption | linear | registry | best | best log floors |")
    print("|---|---|---|---|---|")
    for c in names:
        data = np.load(Path(args.cache) / f"{c}-{args.proposal}.npz")
        dv = data["dv"]
        params = list(CORRUPTIONS[c].parameters)
        distances = {p: data[f"d_{p}"] for p in params}
        linear = predicted_coverage(dv, distances, dict.fromkeys(params), args.n, threshold)
        registry = {p: CORRUPTIONS[c].spacing.get(p) for p in params}
        current = predicted_coverage(dv, distances, registry, args.n, threshold)
        best, best_key, best_ks = -1.0, None, None
        for combo in itertools.product(GRID, repeat=len(params)):
            floors = dict(zip(params, combo, strict=True))
            cov = predicted_coverage(dv, distances, floors, args.n, threshold)
            key = (round(cov, 4), sum(f is None for f in combo),
                   sum(np.log(f) for f in combo if f is not None))
            if best_key is None or key > best_key:
                best, best_key, best_ks = cov, key, floors
        chosen = ", ".join(f"{p}={'linear' if f is None else f'{f:g}'}"
                           for p, f in best_ks.items())
        print(f"| {c} | {linear:.3f} | {current:.3f} | {best:.3f} | {chosen} |")


if __name__ == "__main__":
    main()
