"""Philox4x32-10 in torch (``vcrbench.core.philox``): Random123's known-answer vectors, a slow
pure-Python Philox (itself checked against numpy's Philox4x64 and Triton's Philox4x32), the
word layout of every draw, the laws of the draws (fixed seeds, so each test gives the same
verdict every run), batch independence and bad input."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from scipy import stats

from vcrbench.core import philox

MASK = 0xFFFFFFFF


def reference(counter, key, width=32, rounds=10):
    """Philox4xW-R from its definition (Salmon et al. 2011): Python integers, one block."""
    mask = (1 << width) - 1
    if width == 32:
        mult, bump = (0xD2511F53, 0xCD9E8D57), (0x9E3779B9, 0xBB67AE85)
    else:
        mult = (0xD2E7470EE14C6C93, 0xCA5A826395121157)
        bump = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)
    c, k = list(counter), list(key)
    for _ in range(rounds):
        p0, p1 = mult[0] * c[0], mult[1] * c[2]
        c = [(p1 >> width) ^ c[1] ^ k[0], p1 & mask, (p0 >> width) ^ c[3] ^ k[1], p0 & mask]
        k = [(k[0] + bump[0]) & mask, (k[1] + bump[1]) & mask]
    return c


def reference_words(seed, n, stream, sub=0):
    """Words ``0 .. n-1`` of one sample as :func:`philox.words` defines them."""
    out = []
    for j in range(-(-n // 4)):
        out += reference((j & MASK, j >> 32, stream, sub), (seed & MASK, seed >> 32))
    return out[:n]


#: Random123 kat_vectors, philox4x32 10: counter, key, output.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK,) * 4, (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]
SEEDS = [0, 1, 12345, 2**32 - 1, 2**32, 2**62 + 977, 2**63 - 1, 0x1234_5678_9ABC_DEF0]


def random_blocks(n, seed=0):
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 2**32, size=(n, 6), dtype=np.uint64).astype(object)
    blocks[:4] = [[0] * 6, [MASK] * 6, [MASK, 0, MASK, 0, MASK, 0], [1, 2, 3, 4, 5, 6]]
    return [[int(v) for v in row] for row in blocks]


@pytest.mark.parametrize(("counter", "key", "expected"), KAT)
def test_known_answer_vectors(counter, key, expected):
    assert reference(counter, key) == list(expected)
    words = philox.philox4x32([torch.tensor(c) for c in counter], [torch.tensor(k) for k in key])
    assert [int(w) for w in words] == list(expected)
    # Python-int counter words (constant folded in the first round) give the same
    assert [int(w) for w in philox.philox4x32(list(counter), [torch.tensor(k) for k in key])] \
        == list(expected)


def test_reference_is_numpys_philox4x64():
    """The reference's round and key schedule, at 64-bit width, is numpy's Philox (which
    increments its counter before each block: the block of counter c is numpy's at c - 1)."""
    assert reference((0,) * 4, (0, 0), width=64) == [
        0x16554D9ECA36314C, 0xDB20FE9D672D0FDC, 0xD7E772CEE186176B, 0x7E68B68AEC7BA23B]
    rng = np.random.default_rng(5)
    for _ in range(20):
        counter = [int(v) for v in rng.integers(1, 2**64 - 1, size=4, dtype=np.uint64)]
        key = [int(v) for v in rng.integers(0, 2**64 - 1, size=2, dtype=np.uint64)]
        previous = np.array([counter[0] - 1, *counter[1:]], dtype=np.uint64)
        bits = np.random.Philox(counter=previous, key=np.array(key, dtype=np.uint64))
        assert [int(v) for v in bits.random_raw(4)] == reference(counter, key, width=64)


def test_torch_philox_matches_the_reference_on_random_blocks():
    blocks = random_blocks(300)
    cols = torch.tensor(blocks, dtype=torch.int64).T
    out = torch.stack(philox.philox4x32(cols[:4], cols[4:]), dim=1)
    assert out.tolist() == [reference(b[:4], b[4:]) for b in blocks]


def test_mulhilo_is_the_exact_product_split():
    """``_mulhilo`` takes the 64-bit product from one int64 multiply, which wraps modulo 2**64
    past 2**63: its words equal exact integer arithmetic on random and extreme inputs."""
    rng = np.random.default_rng(3)
    values = [0, 1, 2, MASK, MASK - 1, 2**31, 2**31 - 1, 2**16, 0xFFFF0000]
    values += [int(v) for v in rng.integers(0, 2**32, size=20_000, dtype=np.uint64)]
    x = torch.tensor(values, dtype=torch.int64)
    for a in (philox.M0, philox.M1, MASK, 1, 0, 0x80000001):
        low, high = philox._mulhilo(a, x)
        exact = [a * v for v in values]
        assert low.tolist() == [p & MASK for p in exact]
        assert high.tolist() == [p >> 32 for p in exact]
    assert x.mul(MASK)[values.index(MASK)].item() == (MASK * MASK) - 2**64  # it does wrap


def test_lanes_broadcast_keys_counters_and_subs():
    """``_lanes`` (the draws' Philox) on per-element keys, counters and sub-counters, broadcast
    as PTRS's stages use them: the reference's words."""
    rng = np.random.default_rng(4)
    seeds = [int(s) for s in rng.integers(0, 2**63 - 1, size=5, dtype=np.int64)] + [2**63 - 1]
    index = [0, 7, 2**32 - 1, 2**32, 123456789, 2**40 + 3]
    key = torch.tensor(seeds).view(-1, 1)
    col = torch.tensor(index).view(-1, 1)
    sub = torch.tensor([1, 2, MASK]).view(1, -1)
    x, y = philox._lanes(key & MASK, key >> 32, col, 9, sub)
    assert x.shape == y.shape == (2, 6, 3)
    for e, (s, j) in enumerate(zip(seeds, index, strict=True)):
        for c, u in enumerate((1, 2, MASK)):
            expected = reference((j & MASK, j >> 32, 9, u), (s & MASK, s >> 32))
            got = [x[0, e, c], y[0, e, c], x[1, e, c], y[1, e, c]]
            assert [int(w) for w in got] == expected


def test_triton_philox_is_a_peer():
    """Triton's Philox4x32-10 (``tl.philox``, its CPU interpreter) gives the same blocks."""
    pytest.importorskip("triton")
    blocks = random_blocks(16, seed=3)
    script = textwrap.dedent(f"""
        import os
        os.environ["TRITON_INTERPRET"] = "1"
        import torch, triton, triton.language as tl

        @triton.jit
        def kernel(out, seed, c0, c1, c2, c3, N: tl.constexpr):
            i = tl.arange(0, N)
            w = tl.philox(seed, tl.load(c0 + i), tl.load(c1 + i), tl.load(c2 + i),
                          tl.load(c3 + i))
            for lane in tl.static_range(4):
                tl.store(out + 4 * i + lane, w[lane])

        blocks = {blocks!r}
        for b in blocks:
            seed = b[4] | (b[5] << 32)
            cols = [torch.tensor([b[j]], dtype=torch.int64).to(torch.uint32) for j in range(4)]
            out = torch.zeros(4, dtype=torch.uint32)
            kernel[(1,)](out, seed, *cols, N=1)
            print(*out.to(torch.int64).tolist())
    """)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=120)
    if result.returncode and "interpret" in result.stderr.lower():
        pytest.skip(f"Triton's interpreter does not run here: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr
    got = [[int(v) for v in line.split()] for line in result.stdout.strip().splitlines()]
    assert got == [reference(b[:4], b[4:]) for b in blocks]


def test_words_layout():
    n = 23
    for stream, sub in ((0, 0), (7, 0), (MASK, 3)):
        got = philox.words(SEEDS, n, stream, sub)
        assert got.shape == (len(SEEDS), n) and got.dtype == torch.int64
        assert got.tolist() == [reference_words(s, n, stream, sub) for s in SEEDS]


def test_uniform_layout_and_range():
    w = philox.words(SEEDS, 40, 2)
    f32 = philox.uniform(SEEDS, (5, 4), 2)
    assert f32.shape == (len(SEEDS), 5, 4) and f32.dtype == torch.float32
    assert torch.equal(f32.reshape(len(SEEDS), -1).double(), (w[:, :20] >> 8).double() / 2**24)
    f64 = philox.uniform(SEEDS, 20, 2, dtype=torch.float64)
    expected = ((w[:, 0::2] >> 5) * 2**26 + (w[:, 1::2] >> 6)).double() / 2**53
    assert torch.equal(f64, expected)
    # the grid's ends: words 0 and 2**32 - 1 map inside [0, 1) and (0, 1)
    ends = torch.tensor([[0, 0], [MASK, MASK]])
    for dtype in (torch.float32, torch.float64):
        closed = philox._uniform_from_words(ends, dtype, False)
        opened = philox._uniform_from_words(ends, dtype, True)
        assert float(closed.min()) == 0.0 and float(closed.max()) < 1.0
        assert float(opened.min()) > 0.0 and float(opened.max()) < 1.0


def test_normal_is_box_muller_of_the_words():
    w = philox.words(SEEDS, 10, 4).double()
    z = philox.normal(SEEDS, 9, 4)
    u1, u2 = (2 * w[:, 0::2] + 1) / 2**33, torch.floor(w[:, 1::2] / 256) / 2**24
    radius = torch.sqrt(-2 * torch.log(u1))
    expected = torch.stack((radius * torch.cos(2 * math.pi * u2),
                            radius * torch.sin(2 * math.pi * u2)), dim=-1).reshape(-1, 10)
    torch.testing.assert_close(z.double(), expected[:, :9], rtol=2e-6, atol=2e-6)
    z64 = philox.normal(SEEDS, 3, 4, dtype=torch.float64)
    w = philox.words(SEEDS, 8, 4)
    u1 = ((w[:, 0::4] >> 6) * 2**26 + (w[:, 1::4] >> 6)).double() / 2**52 + 2.0**-53
    u2 = ((w[:, 2::4] >> 5) * 2**26 + (w[:, 3::4] >> 6)).double() / 2**53
    radius = torch.sqrt(-2 * torch.log(u1))
    expected = torch.stack((radius * torch.cos(2 * math.pi * u2),
                            radius * torch.sin(2 * math.pi * u2)), dim=-1).reshape(-1, 4)
    torch.testing.assert_close(z64, expected[:, :3], rtol=1e-13, atol=1e-13)


def test_integers_are_exact_multiply_shift():
    highs = [1, 2, 3, 7, 1000, 2**31 - 1, 6, 10**9]
    got = philox.integers(SEEDS, torch.tensor(highs), 6, 5)
    for b, (seed, high) in enumerate(zip(SEEDS, highs, strict=True)):
        w = reference_words(seed, 12, 5)
        expected = [((w[2 * i] << 32 | w[2 * i + 1]) * high) >> 64 for i in range(6)]
        assert got[b].tolist() == expected
    assert philox.integers(SEEDS, 1, 4, 0).eq(0).all()


def test_permutation_is_the_order_of_its_keys():
    got = philox.permutation(SEEDS, 9, 6)
    for b, seed in enumerate(SEEDS):
        w = reference_words(seed, 18, 6)
        sort_keys = [(w[2 * i] & 0x7FFFFFFF) << 32 | w[2 * i + 1] for i in range(9)]
        assert got[b].tolist() == sorted(range(9), key=lambda i: sort_keys[i])


# --- laws -------------------------------------------------------------------------------------

LAW_SEEDS = [1_000_003 * i + 17 for i in range(20)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("open_interval", [False, True])
def test_uniform_law(dtype, open_interval):
    u = philox.uniform(LAW_SEEDS, 5000, 11, dtype=dtype, open_interval=open_interval)
    assert stats.kstest(u.double().numpy().ravel(), "uniform").pvalue > 1e-3
    # consecutive values, streams and neighbouring seeds are uncorrelated
    flat = u.double().numpy()
    assert abs(np.corrcoef(flat[:, :-1].ravel(), flat[:, 1:].ravel())[0, 1]) < 0.01
    other = philox.uniform(LAW_SEEDS, 5000, 12, dtype=dtype).double().numpy()
    assert abs(np.corrcoef(flat.ravel(), other.ravel())[0, 1]) < 0.01
    assert abs(np.corrcoef(flat[:-1].ravel(), flat[1:].ravel())[0, 1]) < 0.01


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_normal_law(dtype):
    z = philox.normal(LAW_SEEDS, (3, 1667), 13, dtype=dtype).double().numpy().ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert abs(z.mean()) < 5 / math.sqrt(z.size) and abs(z.var() - 1) < 5 * math.sqrt(2 / z.size)
    pairs = z.reshape(-1, 2)  # the cos and sin of one Box–Muller pair are uncorrelated
    assert abs(np.corrcoef(pairs[:, 0], pairs[:, 1])[0, 1]) < 0.01


def chi_square_pvalue(counts, expected):
    counts, expected = np.asarray(counts, float), np.asarray(expected, float)
    return stats.chisquare(counts, expected * counts.sum() / expected.sum()).pvalue


@pytest.mark.parametrize("high", [2, 7, 1000])
def test_integers_law(high):
    draws = philox.integers(LAW_SEEDS, high, 10_000, 14).numpy().ravel()
    assert draws.min() >= 0 and draws.max() < high
    assert chi_square_pvalue(np.bincount(draws, minlength=high), np.ones(high)) > 1e-3


def test_integers_law_with_a_bound_per_sample():
    highs = torch.tensor([3, 5] * 10)
    draws = philox.integers(LAW_SEEDS, highs, 6000, 15).numpy()
    for high in (3, 5):
        values = draws[highs.numpy() == high].ravel()
        assert values.max() < high
        assert chi_square_pvalue(np.bincount(values, minlength=high), np.ones(high)) > 1e-3


def test_permutation_law():
    seeds = list(range(24_000))
    perms = philox.permutation(seeds, 4, 16).numpy()
    assert (np.sort(perms, axis=1) == np.arange(4)).all()
    codes = perms @ np.array([64, 16, 4, 1])
    counts = np.unique(codes, return_counts=True)[1]
    assert counts.size == 24 and chi_square_pvalue(counts, np.ones(24)) > 1e-3
    positions = philox.permutation(seeds[:5000], 10, 17).numpy()
    table = np.stack([np.bincount(positions[:, p], minlength=10) for p in range(10)])
    assert chi_square_pvalue(table.ravel(), np.ones(100)) > 1e-3


@pytest.mark.parametrize("rate", [0.5, 3.0, 9.99, 10.0, 30.0, 1000.0])
def test_poisson_law(rate):
    draws = philox.poisson(LAW_SEEDS[:10], torch.full((10, 10_000), rate), 18).numpy().ravel()
    n = draws.size
    assert abs(draws.mean() - rate) < 5 * math.sqrt(rate / n)
    assert abs(draws.var() - rate) < 5 * math.sqrt((rate + 2 * rate**2) / n)
    # chi-square against the pmf, the tails pooled so that every bin expects at least 5
    low, high = int(stats.poisson.ppf(1e-4, rate)), int(stats.poisson.ppf(1 - 1e-4, rate))
    ks = np.arange(low, high + 1)
    expected = stats.poisson.pmf(ks, rate)
    expected[0], expected[-1] = stats.poisson.cdf(low, rate), stats.poisson.sf(high - 1, rate)
    counts = np.bincount(np.clip(draws, low, high) - low, minlength=ks.size)
    assert chi_square_pvalue(counts, expected) > 1e-3


def test_poisson_large_rates_and_zero():
    draws = philox.poisson(LAW_SEEDS[:4], torch.tensor([[0.0] * 5, [1e8] * 5, [2.0**40] * 5,
                                                        [1e6] * 5]), 19)
    assert draws[0].eq(0).all()
    for row, rate in ((1, 1e8), (2, 2.0**40), (3, 1e6)):
        assert (draws[row].double() - rate).abs().max() < 6 * math.sqrt(rate)


def test_ptrs_rejection_rate_and_fallback(monkeypatch):
    """A PTRS round rejects at most 25 % (the docstring's bound for the fallback), and the
    fallback (forced here) keeps the mean and variance."""
    g = torch.Generator().manual_seed(0)
    u, v = (torch.rand(200_000, generator=g, dtype=torch.float64) for _ in range(2))
    for rate in (10.0, 30.0, 1000.0):
        _, accepted = philox._ptrs_round(torch.full_like(u, rate), u, v)
        assert 1.0 - accepted.double().mean().item() < 0.25
    monkeypatch.setattr(philox, "PTRS_ROUNDS", 0)
    draws = philox.poisson(LAW_SEEDS[:10], torch.full((10, 2000), 400.0), 20).double()
    assert abs(draws.mean().item() - 400) < 5 * math.sqrt(400 / draws.numel())
    assert abs(draws.var().item() - 400) < 5 * math.sqrt(2 * 400**2 / draws.numel())


def test_inversion_terms_cover_the_tail():
    for rate in (0.0, 0.5, 3.0, 9.99):
        terms = philox.inversion_terms(rate)
        assert stats.poisson.sf(terms - 1, rate) < philox.INVERSION_TAIL
        if terms > 1:
            assert stats.poisson.sf(terms - 2, rate) < 1e-6  # and not far past it


# --- batch independence ------------------------------------------------------------------------

def draws_of(seeds):
    rates = torch.linspace(0.0, 40.0, 60, dtype=torch.float64).repeat(len(seeds), 1)
    return {
        "words": philox.words(seeds, 37, 3),
        "uniform": philox.uniform(seeds, (2, 9), 3, dtype=torch.float64),
        "normal": philox.normal(seeds, 17, 3),
        "integers": philox.integers(seeds, 1000, 11, 3),
        "permutation": philox.permutation(seeds, 13, 3),
        "poisson": philox.poisson(seeds, rates, 3),
    }


def test_a_sample_draws_the_same_alone_or_in_any_batch():
    rng = np.random.default_rng(1)
    pool = [int(s) for s in rng.integers(0, 2**63 - 1, size=256, dtype=np.int64)]
    alone = [draws_of([s]) for s in pool[:3]]
    for size in (16, 256):
        batch = pool[:size]
        order = rng.permutation(size)
        shuffled = draws_of([batch[i] for i in order])
        where = {int(i): p for p, i in enumerate(order)}
        for i in range(3):
            for name, value in shuffled.items():
                assert torch.equal(value[where[i]], alone[i][name][0]), (name, size)


def test_poisson_method_of_one_element_changes_no_other():
    rates = torch.linspace(0.0, 40.0, 200, dtype=torch.float64).reshape(2, 100)
    base = philox.poisson([5, 6], rates, 8)
    changed = rates.clone()
    changed[:, ::2] = torch.where(changed[:, ::2] < 10, 500.0, 1.0)  # swap the method
    other = philox.poisson([5, 6], changed, 8)
    assert torch.equal(base[:, 1::2], other[:, 1::2])


def test_different_streams_and_subs_give_different_words():
    a, b, c = (philox.words([42], 64, s, sub)[0] for s, sub in ((0, 0), (1, 0), (0, 1)))
    assert not torch.equal(a, b) and not torch.equal(a, c) and not torch.equal(b, c)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_gives_the_cpu_integers():
    seeds = torch.tensor(SEEDS)
    for device in ("cpu", "cuda"):
        philox.words(seeds.to(device), 1, 0)
    for draw in (lambda d: philox.words(seeds.to(d), 1001, 9, 2),
                 lambda d: philox.uniform(seeds.to(d), 999, 9, dtype=torch.float64),
                 lambda d: philox.uniform(seeds.to(d), 999, 9),
                 lambda d: philox.integers(seeds.to(d), 77, 500, 9),
                 lambda d: philox.permutation(seeds.to(d), 300, 9)):
        assert torch.equal(draw("cpu"), draw("cuda").cpu())
    torch.testing.assert_close(philox.normal(seeds.cuda(), 999, 9).cpu(),
                               philox.normal(seeds, 999, 9), rtol=1e-5, atol=1e-5)


# --- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("call", "message"), [
    (lambda: philox.words([-1], 4, 0), r"\[0, 2\*\*63\)"),
    (lambda: philox.words([2**63], 4, 0), r"\[0, 2\*\*63\)"),
    (lambda: philox.words(torch.tensor([1.0]), 4, 0), "int64"),
    (lambda: philox.words([[1]], 4, 0), "one-dimensional"),
    (lambda: philox.words([1], 4, 2**32), "stream"),
    (lambda: philox.words([1], 4, 0, sub=-1), "sub"),
    (lambda: philox.uniform([1], 4, 0, dtype=torch.float16), "float32 or float64"),
    (lambda: philox.integers([1], 0, 4, 0), r"\[1, 2\*\*31\)"),
    (lambda: philox.integers([1, 2], torch.tensor([3, 4, 5]), 4, 0), "one bound per sample"),
    (lambda: philox.poisson([1], torch.tensor([[-1.0]]), 0), "rates must be finite"),
    (lambda: philox.poisson([1], torch.tensor([[float("nan")]]), 0), "NaN"),
    (lambda: philox.poisson([1, 2], torch.ones(3, 4), 0), "B = 2"),
])
def test_bad_input_is_refused_with_a_reason(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_words_from_a_start_are_a_slice_of_the_run(monkeypatch):
    run = philox.words(SEEDS, 50, 3)
    for start, n in ((1, 3), (13, 21), (4, 8), (49, 1), (50, 0)):
        assert torch.equal(philox.words(SEEDS, n, 3, start=start), run[:, start:start + n])
    # CPU chunks (here of 1 block) change no word and no Poisson draw
    rates = torch.linspace(0.0, 40.0, 99, dtype=torch.float64).repeat(len(SEEDS), 1)
    whole = philox.poisson(SEEDS, rates, 3)
    uniform = {d: philox.uniform(SEEDS, 21, 3, d) for d in (torch.float32, torch.float64)}
    normal = {d: philox.normal(SEEDS, 21, 3, d) for d in (torch.float32, torch.float64)}
    monkeypatch.setattr(philox, "CPU_CHUNK", 1)
    monkeypatch.setattr(philox, "CPU_POISSON_CHUNK", 7)
    monkeypatch.setattr(philox, "CPU_PTRS_CHUNK", 5)
    assert torch.equal(philox.words(SEEDS, 50, 3), run)
    assert torch.equal(philox.poisson(SEEDS, rates, 3), whole)
    for dtype in (torch.float32, torch.float64):
        assert torch.equal(philox.uniform(SEEDS, 21, 3, dtype), uniform[dtype])
        assert torch.equal(philox.normal(SEEDS, 21, 3, dtype), normal[dtype])


def test_poisson_operations_depend_on_the_shape_only():
    """The same operator count for a small batch of small rates and a larger batch of rates
    on both sides of the PTRS threshold (no loop whose length follows the draws or the batch)."""
    from torch.profiler import ProfilerActivity, profile

    def events(batch, rates):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            philox.poisson(list(range(batch)), rates, 5, check=False)
        return len(prof.events())

    small = torch.full((12, 300), 0.3, dtype=torch.float64)
    mixed = torch.linspace(0.0, 2000.0, 300, dtype=torch.float64).repeat(12, 1)
    assert events(2, small[:2]) == events(12, small)
    # gathers of no element allocate differently (empty_strided for empty): a few events
    assert abs(events(12, mixed) - events(12, small)) <= 0.01 * events(12, small)


@pytest.mark.parametrize("rate", [10.0, 30.0, 1000.0])
def test_ptrs_law_with_two_million_draws(rate):
    """PTRS alone, fed torch's uniforms (fast, so 2e6 draws): a chi-square with the power to
    see a wrong hat or squeeze constant (the 100,000 Philox draws above need not)."""
    g = torch.Generator().manual_seed(int(rate))
    n = 2_000_000
    draws = torch.full((n,), -1.0, dtype=torch.float64)
    pending = torch.arange(n)
    while pending.numel():
        u, v = (torch.rand(pending.numel(), generator=g, dtype=torch.float64) for _ in "uv")
        k, accepted = philox._ptrs_round(torch.full_like(u, rate), u.clamp(min=1e-300), v)
        draws[pending[accepted]] = k[accepted]
        pending = pending[~accepted]
    draws = draws.numpy().astype(np.int64)
    low, high = int(stats.poisson.ppf(1e-5, rate)), int(stats.poisson.ppf(1 - 1e-5, rate))
    ks = np.arange(low, high + 1)
    expected = stats.poisson.pmf(ks, rate)
    expected[0], expected[-1] = stats.poisson.cdf(low, rate), stats.poisson.sf(high - 1, rate)
    counts = np.bincount(np.clip(draws, low, high) - low, minlength=ks.size)
    assert chi_square_pvalue(counts, expected) > 1e-3


@pytest.mark.parametrize("rate", [10.0, 47.5, 1000.0, 1e7])
def test_ptrs_is_numpys_ptrs_on_the_same_uniforms(rate):
    """numpy's Poisson for rates >= 10 is PTRS too, taking (U + 1/2, V) from ``random()``
    until it accepts: fed the same doubles, every accepted pair of ours is numpy's next draw."""
    draws = np.random.default_rng(7).poisson(rate, size=20_000)
    doubles = torch.from_numpy(np.random.default_rng(7).random(2 * 40_000))
    u, v = doubles[0::2], doubles[1::2]
    k, accepted = philox._ptrs_round(torch.full_like(u, rate), u, v)
    assert torch.equal(k[accepted][:draws.size].to(torch.int64), torch.from_numpy(draws))


def test_inversion_is_the_quantile_of_scipys_cdf():
    """Small rates: the draw of uniform u is the number of CDF values <= u (scipy's CDF)."""
    rates = torch.tensor([0.0, 1e-3, 0.5, 3.0, 9.99], dtype=torch.float64)
    u = philox.words([9], 50_000, 0)[0].double() / 2**32
    got = philox._poisson_inversion(rates[:, None].expand(-1, u.numel()), u.expand(5, -1))
    for row, rate in enumerate(rates.tolist()):
        cdf = stats.poisson.cdf(np.arange(60), rate)
        expected = np.searchsorted(cdf, u.numpy(), side="right")
        assert (got[row].numpy() != expected).sum() == 0
