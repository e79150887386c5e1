"""Choose each corruption's ``visual`` spacing (registry ``spacing``, ``spacing_power``,
``coupling``) from measured Δv.

A parameter with log spacing floor ``f`` and power ``g`` draws its normalised distance from the
clean value as ``d = f ** ((1 − t) ** g)``, ``t ~ U(0, 1)`` (``g = 1``: log-uniform on
``[f, 1]``); without a floor, ``d = t`` (linear, the paper's). With coupling ρ the ``t`` of a
corruption's parameters are tied by an equicorrelated Gaussian copula. See
``vcrbench.corruptions.sampling``. One proposal sample per corruption is scored once, with ``d``
drawn independently from the mixture ``q = ½ U(0, 1) + ½ U(0, 1) ** 4`` for every parameter
(heavy near the clean value, so that most candidates have bounded importance weights ``p / q``).
For every combination of candidate floors (per parameter), one power (shared by the floored
parameters) and one coupling, the expected number of samples per Δv bin at the benchmark's N
follows from the importance-weighted proposal: ``p`` is the product of the marginal densities
times the copula density. The combination with the most bins expected to hold at least
``margin × L`` samples wins (ties: the fuller bins, then weaker coupling, power nearer 1, linear
parameters). Importance weights are noisy for strong couplings, so the leaders are checked by
sampling for real with ``benchmarks/bench_coverage.py`` (docs/corruptions.md) before they enter the
registry.

    python calibration/tune_spacing.py [--proposal 1200] [--n 2000] [--workers 2]
                                      [--corruptions a,b] [--cache /tmp/vcrbench-tune]

Prints, per corruption, the predicted coverage with linear spacing (the paper's), with the
registry's spacing, and with the best candidate, and that candidate.
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
#: Candidate spacing powers (one per corruption, on all its floored parameters) and couplings.
POWERS = (0.4, 0.5, 0.7, 1.0, 1.4, 2.0, 3.0)
COUPLINGS = (0.0, 0.3, 0.5, 0.7, 0.85)


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
    from vcrbench.core.seeding import noise_seed
    from vcrbench.data.datasets import build_index
    from vcrbench.evaluation.samples import image_order
    from vcrbench.evaluation.scoring import score_shard

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


def _distance_law(d: np.ndarray, floor: float | None, power: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """CDF and density of the normalised distance d from the clean value: linear (floor None),
    or ``d = floor ** ((1 − t) ** power)`` with t ~ U(0, 1) (see ``corruptions.sampling``)."""
    if floor is None:
        return np.clip(d, 0.0, 1.0), np.ones_like(d)
    inside = d >= floor
    r = np.clip(np.log(np.maximum(d, floor)) / np.log(floor), 0.0, 1.0)  # (1 − t) ** power
    cdf = np.where(inside, 1.0 - r ** (1.0 / power), 0.0)
    density = np.where(
        inside,
        np.maximum(r, 1e-300) ** (1.0 / power - 1.0)
        / (power * np.maximum(d, floor) * np.log(1.0 / floor)),
        0.0,
    )
    return cdf, density


def _copula_density(cdfs: list[np.ndarray], rho: float) -> np.ndarray | float:
    """Density of the equicorrelated Gaussian copula (correlation ``rho``) at the given CDFs."""
    k = len(cdfs)
    if rho == 0 or k == 1:
        return 1.0
    from scipy.special import ndtri

    z = np.stack([ndtri(np.clip(c, 1e-12, 1 - 1e-12)) for c in cdfs])
    inverse_diagonal = 1.0 / (1.0 - rho)
    inverse_common = rho / ((1.0 - rho) * (1.0 + (k - 1) * rho))
    quadratic = (inverse_diagonal - 1.0) * (z**2).sum(0) - inverse_common * z.sum(0) ** 2
    determinant = (1.0 - rho) ** (k - 1) * (1.0 + (k - 1) * rho)
    return determinant**-0.5 * np.exp(-0.5 * quadratic)


def _proposal_density(d: np.ndarray) -> np.ndarray:
    d = np.clip(d, 1e-300, 1.0)
    return 0.5 + 0.5 * d ** (1.0 / PROPOSAL_POWER - 1.0) / PROPOSAL_POWER


def expected_counts(dv: np.ndarray, distances: dict[str, np.ndarray],
                    floors: dict[str, float | None], powers: dict[str, float], rho: float,
                    n: int) -> np.ndarray:
    """Expected samples per Δv bin at N = n under the given spacing (importance-weighted)."""
    from vcrbench.curves.binning import bin_index

    weight, cdfs = np.ones(dv.size), []
    for name, d in distances.items():
        cdf, density = _distance_law(d, floors[name], powers.get(name, 1.0))
        weight *= density / _proposal_density(d)
        cdfs.append(cdf)
    weight = weight * _copula_density(cdfs, rho)
    expected = np.bincount(bin_index(dv, BINS), weights=weight, minlength=BINS)
    return expected * n / weight.sum()


def predicted_coverage(dv: np.ndarray, distances: dict[str, np.ndarray],
                       floors: dict[str, float | None], n: int, threshold: float,
                       powers: dict[str, float] | None = None, rho: float = 0.0) -> float:
    """Fraction of bins whose expected count at N = n reaches ``threshold``."""
    counts = expected_counts(dv, distances, floors, powers or {}, rho, n)
    return float(np.mean(counts >= threshold))


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
    print("| corruption | linear | registry | best | best log floors | power | coupling |")
    print("|---|---|---|---|---|---|---|")
    for c in names:
        spec = CORRUPTIONS[c]
        data = np.load(Path(args.cache) / f"{c}-{args.proposal}.npz")
        dv = data["dv"]
        params = list(spec.parameters)
        distances = {p: data[f"d_{p}"] for p in params}
        linear = predicted_coverage(dv, distances, dict.fromkeys(params), args.n, threshold)
        current = predicted_coverage(
            dv, distances, {p: spec.spacing.get(p) for p in params}, args.n, threshold,
            dict(spec.spacing_power), spec.coupling)
        best, best_key, best_choice = -1.0, None, None
        for combo in itertools.product(GRID, repeat=len(params)):
            floors = dict(zip(params, combo, strict=True))
            for power in POWERS if any(combo) else (1.0,):
                for rho in COUPLINGS if len(params) > 1 else (0.0,):
                    counts = expected_counts(dv, distances, floors, dict.fromkeys(params, power),
                                             rho, args.n)
                    cov = float(np.mean(counts >= threshold))
                    # ties: the fuller bins, then the simpler spacing
                    key = (round(cov, 4), round(float(np.minimum(counts / threshold, 1).mean()), 3),
                           -rho, -abs(np.log(power)), sum(f is None for f in combo))
                    if best_key is None or key > best_key:
                        best, best_key, best_choice = cov, key, (floors, power, rho)
        floors, power, rho = best_choice
        chosen = ", ".join(f"{p}={'linear' if f is None else f'{f:g}'}" for p, f in floors.items())
        print(f"| {c} | {linear:.3f} | {current:.3f} | {best:.3f} | {chosen} | {power:g} | "
              f"{rho:g} |")


if __name__ == "__main__":
    main()
