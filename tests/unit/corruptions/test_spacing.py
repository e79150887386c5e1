"""Parameter spacing: linear = the paper's Algorithm 1 draws; visual = log-uniform distance from
the clean value with each side's probability kept; the registry's floors."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import kstest

from vcrbench.core.seeding import parameter_rng
from vcrbench.corruptions import registry
from vcrbench.corruptions.registry import CORRUPTIONS, get_corruption
from vcrbench.corruptions.sampling import (
    sample_parameters,
    sampling_definition,
    space_towards_clean,
    uniform_samples,
)
from vcrbench.errors import VcrbenchError

SEED = 11
DRAWS = 4000
IDS = list(range(DRAWS))

#: Domains written out from the paper's / registry documentation, in parameter order.
DOMAINS = {
    "gaussian_blur": [("sigma", 0.0, 40.0)],
    "color_jitter": [("brightness", 0.0, 2.0), ("contrast", 0.0, 2.0), ("saturation", 0.0, 2.0),
                     ("hue", -0.5, 0.5)],
    "hue_saturation_value": [("hue_shift", -90.0, 90.0), ("sat_shift", -255.0, 255.0),
                             ("val_shift", -255.0, 255.0)],
}


def _values(name: str, param: str, spacing: str = "visual", seed: int = SEED) -> np.ndarray:
    return np.array([p[param] for p in uniform_samples(name, seed, IDS, spacing)])


def _binomial_ok(k: int, n: int, p: float, sigmas: float = 4.0) -> bool:
    return abs(k / n - p) <= sigmas * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("name", list(DOMAINS))
def test_linear_spacing_is_algorithm_1(name):
    ids = [0, 1, 17, 999, 123456]
    samples = uniform_samples(name, SEED, ids, spacing="linear")
    for sample_id, point in zip(ids, samples, strict=True):
        rng = parameter_rng(SEED, name, sample_id)
        expected = {param: rng.uniform(low, high) for param, low, high in DOMAINS[name]}
        assert list(point) == list(expected)
        assert point == expected  # exactly the same floats


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_visual_spacing_stays_inside_the_domain(name):
    spec = get_corruption(name)
    samples = uniform_samples(name, SEED, range(300))
    for param, (low, high) in spec.parameters.items():
        values = np.array([p[param] for p in samples])
        assert np.all((values >= low) & (values <= high)), (param, values.min(), values.max())
        # each floored parameter still reaches close to the far end of its domain
        if param in spec.spacing:
            clean = spec.identity[param]
            far = max(np.abs(values - clean))
            assert far > 0.5 * max(high - clean, clean - low), (param, far)


@pytest.mark.parametrize(
    ("name", "param"),
    [("color_jitter", "hue"), ("hue_saturation_value", "hue_shift"),
     ("hue_saturation_value", "sat_shift"), ("hue_saturation_value", "val_shift")],
)
def test_visual_spacing_keeps_the_probability_of_each_side(name, param):
    spec = get_corruption(name)
    low, high = spec.parameters[param]
    clean = spec.identity[param]
    values = _values(name, param)
    above = int((values > clean).sum())
    assert not np.any(values == clean)
    assert _binomial_ok(above, DRAWS, (high - clean) / (high - low)), above / DRAWS
    # and the same samples fall on the same side as their linear draws
    linear = _values(name, param, "linear")
    assert np.array_equal(values > clean, linear > clean)


def test_an_asymmetric_domain_keeps_its_side_probabilities(monkeypatch):
    # a gaussian_blur variant whose domain extends below the clean value: 1/4 below, 3/4 above
    spec = dataclasses.replace(get_corruption("gaussian_blur"), parameters={"sigma": (-10, 30)},
                               strongest={"sigma": 30.0})
    monkeypatch.setitem(registry.CORRUPTIONS, "gaussian_blur", spec)
    values = _values("gaussian_blur", "sigma")
    floor = spec.spacing["sigma"]
    above = values > 0
    assert _binomial_ok(int(above.sum()), DRAWS, 0.75), above.mean()
    assert np.all((values >= -10) & (values <= 30))
    for side, length in ((above, 30.0), (~above, 10.0)):
        log_distance = np.log(np.abs(values[side]) / length)
        p = kstest(log_distance, "uniform", args=(math.log(floor), -math.log(floor))).pvalue
        assert p > 0.001, (length, p)


@pytest.mark.parametrize(
    ("name", "param"),
    [("gaussian_blur", "sigma"), ("uniform_noise", "width"), ("color_jitter", "hue"),
     ("hue_saturation_value", "sat_shift")],
)
def test_visual_spacing_is_log_uniform_in_the_distance_from_clean(name, param):
    spec = get_corruption(name)
    low, high = spec.parameters[param]
    clean = spec.identity[param]
    floor = spec.spacing[param]
    values = _values(name, param)
    side = np.where(values > clean, high - clean, clean - low)
    log_distance = np.log(np.abs(values - clean) / side)
    assert np.all(log_distance >= math.log(floor) - 1e-9) and np.all(log_distance <= 1e-12)
    uniform = ("uniform", (math.log(floor), -math.log(floor)))
    assert kstest(log_distance, uniform[0], args=uniform[1]).pvalue > 0.001
    # the linear draws are not: their distance is uniform instead
    linear = _values(name, param, "linear")
    linear_side = np.where(linear > clean, high - clean, clean - low)
    assert kstest(np.abs(linear - clean) / linear_side, "uniform").pvalue > 0.001
    linear_log = np.log(np.maximum(np.abs(linear - clean) / linear_side, floor))
    assert kstest(linear_log, uniform[0], args=uniform[1]).pvalue < 1e-6


@pytest.mark.parametrize(
    "name", [n for n, c in CORRUPTIONS.items() if set(c.parameters) - set(c.spacing)]
)
def test_unfloored_parameters_are_linear_in_both_spacings(name):
    spec = get_corruption(name)
    params = [p for p in spec.parameters if p not in spec.spacing]
    visual = uniform_samples(name, SEED, range(DRAWS), "visual")
    linear = uniform_samples(name, SEED, range(DRAWS), "linear")
    if spec.coupling == 0:
        for v, lin in zip(visual, linear, strict=True):
            assert [v[p] for p in params] == [lin[p] for p in params]
    for param in params:  # coupled or not, each stays uniform over its domain
        low, high = spec.parameters[param]
        values = np.array([v[param] for v in visual])
        assert kstest(values, "uniform", args=(low, high - low)).pvalue > 0.001, param
    floored = [p for p in spec.parameters if p in spec.spacing]
    assert all(any(v[p] != lin[p] for v, lin in zip(visual, linear, strict=True))
               for p in floored)


def _coupled_variant(monkeypatch, rho: float, powers: dict[str, float]):
    """color_jitter with hue floor 0.003, the given powers and coupling ``rho``."""
    spec = dataclasses.replace(get_corruption("color_jitter"), spacing={"hue": 0.003},
                               spacing_power=powers, coupling=rho)
    monkeypatch.setitem(registry.CORRUPTIONS, "color_jitter", spec)
    return spec


def _uniform_distances(spec, param: str, values: np.ndarray) -> np.ndarray:
    """Invert the visual spacing: the uniform t in [0, 1] behind each drawn value."""
    low, high = spec.parameters[param]
    clean = spec.identity[param]
    d = np.abs(values - clean) / np.where(values > clean, high - clean, clean - low)
    floor = spec.spacing.get(param)
    if floor is None:
        return d
    power = spec.spacing_power.get(param, 1.0)
    return 1.0 - (np.log(d) / math.log(floor)) ** (1.0 / power)


@pytest.mark.parametrize("rho", [0.3, 0.8])
def test_coupling_is_a_gaussian_copula_with_the_marginals_kept(monkeypatch, rho):
    spec = _coupled_variant(monkeypatch, rho, {"hue": 1.5})
    samples = uniform_samples("color_jitter", SEED, IDS)
    t = {p: _uniform_distances(spec, p, np.array([s[p] for s in samples]))
         for p in spec.parameters}
    scores = {}
    for param, values in t.items():
        assert kstest(values, "uniform").pvalue > 0.001, param  # each marginal unchanged
        scores[param] = np.array([NormalDist().inv_cdf(min(max(v, 1e-12), 1 - 1e-12))
                                  for v in values])
    # the normal scores of any two parameters have correlation rho (standard error ~ (1 - rho²)
    # / sqrt(n)), and each side of the clean value keeps its probability
    se = (1 - rho**2) / math.sqrt(DRAWS)
    for a, b in itertools.combinations(spec.parameters, 2):
        r = np.corrcoef(scores[a], scores[b])[0, 1]
        assert abs(r - rho) < 5 * se, (a, b, r)
    hue = np.array([s["hue"] for s in samples])
    assert _binomial_ok(int((hue > 0).sum()), DRAWS, 0.5)
    # the linear spacing ignores the coupling: still the paper's independent draws
    linear = uniform_samples("color_jitter", SEED, IDS, "linear")
    lin = np.array([[s[p] for p in spec.parameters] for s in linear])
    assert np.all(np.abs(np.corrcoef(lin.T) - np.eye(4)) < 5 / math.sqrt(DRAWS))


def test_without_coupling_the_parameters_are_independent(monkeypatch):
    spec = _coupled_variant(monkeypatch, 0.0, {})
    samples = uniform_samples("color_jitter", SEED, IDS)
    t = np.array([_uniform_distances(spec, p, np.array([s[p] for s in samples]))
                  for p in spec.parameters])
    assert np.all(np.abs(np.corrcoef(t) - np.eye(4)) < 5 / math.sqrt(DRAWS))


@pytest.mark.parametrize("power", [0.4, 2.5])
def test_spacing_power_tilts_the_log_distance(monkeypatch, power):
    _coupled_variant(monkeypatch, 0.0, {"hue": power})
    hue = np.array([s["hue"] for s in uniform_samples("color_jitter", SEED, IDS)])
    log_ratio = np.log(np.abs(hue) / 0.5) / math.log(0.003)  # (1 − t) ** power
    assert np.all((log_ratio >= -1e-12) & (log_ratio <= 1 + 1e-12))
    assert kstest(log_ratio ** (1 / power), "uniform").pvalue > 0.001
    # a power above 1 draws more of the far end than the log-uniform draw
    median_far = np.median(np.abs(hue))
    plain = 0.5 * 0.003 ** 0.5
    assert (median_far > plain) == (power > 1), (median_far, plain)


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_every_registered_spacing_inverts_to_uniform_draws(name):
    # whatever floor, power and coupling the registry gives, each parameter is a monotone map
    # of one uniform draw per side: inverting the documented map must give U(0, 1) again
    spec = get_corruption(name)
    samples = uniform_samples(name, SEED, range(2000))
    for param in spec.parameters:
        t = _uniform_distances(spec, param, np.array([s[param] for s in samples]))
        assert kstest(t, "uniform").pvalue > 0.001, param


def test_registered_couplings_and_powers_are_valid():
    for spec in CORRUPTIONS.values():
        assert 0 <= spec.coupling < 1
        assert set(spec.spacing_power) <= set(spec.spacing)
        assert all(g > 0 for g in spec.spacing_power.values())


@pytest.mark.parametrize(
    "change",
    [{"coupling": 1.0}, {"coupling": -0.1}, {"spacing_power": {"sigma": 0.0}},
     {"spacing_power": {"radius": 2.0}}, {"spacing_power": {"sigma": float("inf")}}],
)
def test_registry_rejects_bad_couplings_and_powers(change):
    spec = get_corruption("gaussian_blur")
    with pytest.raises(ValueError, match="coupling|spacing_power"):
        dataclasses.replace(spec, **change)


@pytest.mark.parametrize("spacing", ["visual", "linear"])
def test_samples_depend_only_on_seed_corruption_and_sample_id(spacing):
    name = "hue_saturation_value"
    a = uniform_samples(name, SEED, [3, 10, 42], spacing)
    b = uniform_samples(name, SEED, [42, 3], spacing)
    c = uniform_samples(name, SEED, [10], spacing)
    assert a[0] == b[1] and a[2] == b[0] and a[1] == c[0]
    assert a[1] == sample_parameters(name, parameter_rng(SEED, name, 10), spacing)
    assert uniform_samples(name, SEED + 1, [3], spacing)[0] != a[0]
    # same domain (0, 1), clean 0, different corruption: different draws
    assert (uniform_samples("impulse_noise", SEED, [3], spacing)[0]["amount"]
            != uniform_samples("brightness", SEED, [3], spacing)[0]["shift"])


def test_space_towards_clean_end_points():
    assert space_towards_clean(40.0, 0.0, 40.0, 0.0, 0.01) == 40.0
    assert space_towards_clean(0.0, 0.0, 40.0, 0.0, 0.01) == pytest.approx(0.4)
    assert space_towards_clean(-10.0, -10.0, 30.0, 0.0, 0.01) == -10.0
    assert space_towards_clean(20.0, 0.0, 40.0, 0.0, 0.01) == pytest.approx(40 * 0.01 ** 0.5)
    assert space_towards_clean(-5.0, -10.0, 30.0, 0.0, 0.01) == pytest.approx(-10 * 0.1)
    assert space_towards_clean(12.3, 0.0, 40.0, 0.0, None) == 12.3


def test_unknown_spacing_is_an_error():
    with pytest.raises(VcrbenchError, match="unknown parameter spacing 'log'"):
        uniform_samples("gaussian_blur", SEED, [0], spacing="log")
    with pytest.raises(VcrbenchError, match="unknown parameter spacing"):
        sample_parameters("gaussian_blur", parameter_rng(SEED, "gaussian_blur", 0), "Visual")


@pytest.mark.parametrize("floor", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_registry_rejects_floors_outside_the_open_unit_interval(floor):
    spec = get_corruption("gaussian_blur")
    with pytest.raises(ValueError, match="floors in \\(0, 1\\)"):
        dataclasses.replace(spec, spacing={"sigma": floor})


def test_registry_rejects_floors_of_unknown_parameters_and_accepts_good_ones():
    spec = get_corruption("gaussian_blur")
    with pytest.raises(ValueError):
        dataclasses.replace(spec, spacing={"radius": 0.1})
    assert dataclasses.replace(spec, spacing={"sigma": 0.5}).spacing == {"sigma": 0.5}
    for corruption in CORRUPTIONS.values():
        assert all(0 < f < 1 for f in corruption.spacing.values())
        assert set(corruption.spacing) <= set(corruption.parameters)


def test_sampling_definition_changes_exactly_with_the_draws(monkeypatch):
    before = {name: sampling_definition(name) for name in CORRUPTIONS}
    assert json.loads(json.dumps(before)) == before  # a plain JSON value (a rule parameter)
    assert before["glass_blur"]["coupling"] == CORRUPTIONS["glass_blur"].coupling
    spec = get_corruption("frost")
    imagenet_c_before = sampling_definition("frost", "imagenet-c")
    assert imagenet_c_before["imagenet_c"] == [dict(level) for level in
                                               spec.imagenet_c_severities]
    for change in ({"coupling": 0.3}, {"spacing_power": {"frost_weight": 1.5}},
                   {"spacing": {"frost_weight": 0.01}}):
        monkeypatch.setitem(registry.CORRUPTIONS, "frost", dataclasses.replace(spec, **change))
        after = {name: sampling_definition(name) for name in CORRUPTIONS}
        assert after["frost"] != before["frost"], change
        assert {n: d for n, d in after.items() if n != "frost"} == {
            n: d for n, d in before.items() if n != "frost"}
        # the ImageNet-C severities and the linear draws do not depend on the spacing
        assert sampling_definition("frost", "imagenet-c") == imagenet_c_before
        version = {"implementation": spec.implementation} if spec.implementation > 1 else {}
        assert sampling_definition("frost", spacing="linear") == {
            "parameters": {"image_weight": [0.0, 1.0], "frost_weight": [0.0, 1.0]}} | version
    monkeypatch.setitem(registry.CORRUPTIONS, "frost", dataclasses.replace(
        spec, imagenet_c_severities=(spec.imagenet_c_severities[0],) * 5))
    assert sampling_definition("frost", "imagenet-c") != imagenet_c_before
