"""Counter-based random draws in torch: Philox4x32-10, the same integers on the CPU and on CUDA.

Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3",
SC'11; the Random123 library) maps a 128-bit counter and a 64-bit key to 128 random bits with
ten rounds of 32x32→64-bit multiplies and xors. Nothing is carried from one draw to the next:
the bits of element ``j`` of a sample are a function of (the sample's key, ``j``, the stream)
only, so a sample's draws do not depend on which samples share its batch, on the batch size, on
the order of the batch, or on the device. Here the words are torch int64 tensors holding uint32
values: products are split into 16-bit halves so that no int64 operation overflows, and the
integer words are identical on every device (tested against Random123's known-answer vectors).

Key and counter of one block of 4 words:

- key: the sample's 63-bit seed (the ``seed`` column of the samples table), low 32 bits then
  high 32 bits;
- counter: ``(j mod 2**32, j div 2**32, stream, sub)``, ``j`` the block index of the draw (block
  ``j`` gives words ``4j .. 4j+3``), ``stream`` a 32-bit purpose id, ``sub`` a 32-bit sub-counter
  (0 for plain draws; Poisson uses 1, 2, … for its rejection rounds). Each draw function owns its
  whole ``stream``: two draws of one sample must use different stream ids, or they share words.

Draws on top (all batched: ``seeds`` ``(B,)`` → ``(B, *shape)``, no loop over samples), and
the words each element takes (element ``i`` in C order of ``shape``):

- :func:`uniform`: float32 ``(w >> 8) / 2**24`` from word ``i``; float64 ``m / 2**53``, ``m``
  the top 27 bits of word ``2i`` then the top 26 of word ``2i+1``. ``open_interval=True`` gives
  ``(0, 1)``: ``(m + 1/2) / 2**23`` (float32) or ``/ 2**52`` (float64, 26 + 26 bits).
- :func:`normal`: Box–Muller on pairs: elements ``2k, 2k+1`` are ``r cos θ, r sin θ`` from words
  ``2k, 2k+1`` (float32: ``u1 = (2w + 1) / 2**33`` so ``|z| <= 6.77``, a tail of 1.3e-11 cut) or
  ``4k .. 4k+3`` (float64: 52-bit ``u1``, ``|z| <= 8.6``).
- :func:`integers`: ``floor(x * n / 2**64)`` of the 64-bit ``x`` of words ``2i, 2i+1``, exact
  integer arithmetic: every outcome has probability within ``2**-64`` of ``1/n`` (``n < 2**31``).
- :func:`permutation`: a stable argsort of 63-bit keys from words ``2i, 2i+1``; ties (probability
  below ``n**2 / 2**64``) keep index order.
- :func:`poisson`: rate ``< 10`` by inversion of a 32-bit uniform (word ``i``, sequential search
  over a float64 CDF, a fixed number of terms such that the tail beyond is below ``2**-40``);
  rate ``>= 10`` by PTRS (Hörmann 1993, transformed rejection with squeeze), round ``r`` of
  element ``i`` taking the two 52-bit uniforms of block ``(i, stream, 1 + r)``; an element still
  rejected after :data:`PTRS_ROUNDS` rounds takes a rounded normal approximation from block
  ``(i, stream, 1 + PTRS_ROUNDS)`` (a round rejects 25 % at rate 10, 12 % at 1000, so the
  fallback's probability is under ``0.25**32``, 5e-20 a draw).

Integer words, uniforms, integers and permutations are bit-identical on every device (integer
and power-of-two arithmetic only). Normals and Poisson draws use ``log``/``cos``/``sin``/
``lgamma``/``exp``, whose last bits may differ between CPU and CUDA (and CPU instruction sets):
normals may then differ in the last ulps, Poisson draws only when a uniform falls within rounding
of a CDF or acceptance boundary.

Not yet used by the corruptions (they draw with numpy per sample, :mod:`vcrbench.corruptions.
generators`): switching changes the bytes of every corrupted image.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

MASK32 = 0xFFFFFFFF
#: Philox4x32 round multipliers and key increments (Random123's PHILOX_M4x32_*, PHILOX_W32_*).
M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
ROUNDS = 10
#: Poisson: rates below this are drawn by inversion, at or above by PTRS.
PTRS_MIN_RATE = 10.0
#: Poisson: the rejection rounds of PTRS before the normal-approximation fallback.
PTRS_ROUNDS = 32
#: Poisson: the inversion sums the pmf until the tail beyond is below this.
INVERSION_TAIL = 2.0**-40
#: Poisson: the largest rate accepted (the draws are int64; PTRS in float64).
MAX_RATE = 2.0**52
#: Blocks computed at once on the CPU (all samples together): the temporaries stay in cache
#: (about twice as fast as one pass at 224 px, batch 16). On CUDA a draw is one pass.
CPU_CHUNK = 1 << 16

Word = torch.Tensor | int


def _mulhilo(a: int, x: Word) -> tuple[Word, Word]:
    """Low and high 32-bit words of ``a * x`` (``a`` a 32-bit constant, ``x`` uint32 values).

    ``x * a`` is summed from ``x * (a mod 2**16)`` and ``x * (a div 2**16)`` (each below
    ``2**48``), so no int64 operation overflows.
    """
    if isinstance(x, int):
        product = a * x
        return product & MASK32, product >> 32
    low = x * (a & 0xFFFF)
    high = x * (a >> 16)
    partial = high & 0xFFFF
    partial <<= 16
    partial += low
    torch.bitwise_and(partial, MASK32, out=low)
    partial >>= 32
    high >>= 16
    high += partial
    return low, high


def _xor3(fresh: Word, b: Word, c: Word) -> Word:
    """``fresh ^ b ^ c``, in place in ``fresh`` (a tensor no one else holds) when it already has
    the broadcast shape."""
    if isinstance(fresh, torch.Tensor) and all(
            not isinstance(t, torch.Tensor) or t.shape == fresh.shape or
            torch.broadcast_shapes(t.shape, fresh.shape) == fresh.shape for t in (b, c)):
        fresh ^= b
        fresh ^= c
        return fresh
    return fresh ^ b ^ c


def philox4x32(counter: Sequence[Word], key: Sequence[Word],
               rounds: int = ROUNDS) -> tuple[torch.Tensor, ...]:
    """The Philox4x32 bijection of ``counter`` (4 words) under ``key`` (2 words).

    Words are int64 tensors (or Python ints) holding values in ``[0, 2**32)``, broadcast
    together; returns the 4 output words as int64 tensors of the broadcast shape.
    """
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for r in range(rounds):
        if r:
            k0 = (k0 + W0) & MASK32
            k1 = (k1 + W1) & MASK32
        lo0, hi0 = _mulhilo(M0, c0)
        lo1, hi1 = _mulhilo(M1, c2)
        c0, c1, c2, c3 = _xor3(hi1, c1, k0), lo1, _xor3(hi0, c3, k1), lo0
    words = [torch.as_tensor(c) if isinstance(c, int) else c for c in (c0, c1, c2, c3)]
    return tuple(torch.broadcast_tensors(*words))


def keys(seeds: Sequence[int] | torch.Tensor,
         device: torch.device | str | None = None) -> torch.Tensor:
    """``(B,)`` int64 seeds on ``device`` (default: the seeds' own, else the CPU), checked to be
    in ``[0, 2**63)``."""
    if isinstance(seeds, torch.Tensor):
        if seeds.dtype != torch.int64:
            raise TypeError(f"philox seeds must be an int64 tensor, got {seeds.dtype}")
        out = seeds.to(device) if device is not None else seeds
    else:
        try:
            values = [int(s) for s in seeds]
        except TypeError as error:
            raise ValueError("philox seeds must be one-dimensional (B,): a sequence of "
                             f"integers, got {seeds!r}") from error
        if any(s < 0 or s >= 2**63 for s in values):
            raise ValueError("philox seeds must be integers in [0, 2**63) (a samples table's "
                             f"seed column), got {values}")
        out = torch.tensor(values, dtype=torch.int64, device=device)
    if out.dim() != 1:
        raise ValueError(f"philox seeds must be one-dimensional (B,), got shape "
                         f"{tuple(out.shape)}")
    if out.numel() and bool((out < 0).any()):
        raise ValueError("philox seeds must be in [0, 2**63), got a negative seed")
    return out


def _check_ids(stream: int, sub: int) -> None:
    for name, value in (("stream", stream), ("sub", sub)):
        if not 0 <= int(value) <= MASK32:
            raise ValueError(f"philox {name} must be an integer in [0, 2**32), got {value}")


def words(seeds: Sequence[int] | torch.Tensor, n: int, stream: int, sub: int = 0,
          device: torch.device | str | None = None, start: int = 0) -> torch.Tensor:
    """``(B, n)`` random 32-bit words (int64 values in ``[0, 2**32)``): word ``j`` of sample
    ``b`` is word ``(start + j) mod 4`` of block ``((start + j) div 4, stream, sub)`` under
    seed ``b`` (``start`` draws a slice of a longer run of words)."""
    key = keys(seeds, device)
    _check_ids(stream, sub)
    if n < 0 or start < 0:
        raise ValueError(f"philox word count and start must be non-negative, got {n}, {start}")
    first, blocks = start // 4, -(-(start + n) // 4) - start // 4
    k = key.unsqueeze(1)
    k = (k & MASK32, k >> 32)
    out = torch.empty((key.shape[0], blocks, 4), dtype=torch.int64, device=key.device)
    step = max(1, CPU_CHUNK // max(1, key.shape[0])) if key.device.type == "cpu" else blocks
    for at in range(0, blocks, step):
        index = torch.arange(first + at, first + min(at + step, blocks), dtype=torch.int64,
                             device=key.device)
        block = philox4x32((index & MASK32, index >> 32, int(stream), int(sub)), k)
        for lane, word in enumerate(block):
            out[:, at:at + step, lane] = word
    skip = start - 4 * first
    return out.reshape(key.shape[0], 4 * blocks)[:, skip:skip + n]


def _size(shape: int | Sequence[int]) -> tuple[tuple[int, ...], int]:
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"draw shape must be non-negative, got {shape}")
    return shape, math.prod(shape)


def _bits(high: torch.Tensor, low: torch.Tensor, bits: int) -> torch.Tensor:
    """``bits``-bit integers (52 or 53): the top ``bits - 26`` bits of the words ``high``, then
    the top 26 of ``low``."""
    return ((high >> (58 - bits)) << 26) | (low >> 6)


def _uniform_from_words(w: torch.Tensor, dtype: torch.dtype, open_interval: bool) -> torch.Tensor:
    if dtype == torch.float32:
        if open_interval:
            return ((w >> 9).to(torch.float32) + 0.5) * 2.0**-23
        return (w >> 8).to(torch.float32) * 2.0**-24
    if open_interval:
        return (_bits(w[:, 0::2], w[:, 1::2], 52).to(torch.float64) + 0.5) * 2.0**-52
    return _bits(w[:, 0::2], w[:, 1::2], 53).to(torch.float64) * 2.0**-53


def _check_float(dtype: torch.dtype) -> None:
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"philox draws are float32 or float64, got {dtype}")


def uniform(seeds: Sequence[int] | torch.Tensor, shape: int | Sequence[int], stream: int,
            dtype: torch.dtype = torch.float32, open_interval: bool = False,
            device: torch.device | str | None = None) -> torch.Tensor:
    """``(B, *shape)`` uniforms on ``[0, 1)`` (``(0, 1)`` with ``open_interval``), float32 on a
    24-bit grid (23 open), float64 on a 53-bit grid (52 open)."""
    _check_float(dtype)
    shape, n = _size(shape)
    per = 1 if dtype == torch.float32 else 2
    w = words(seeds, per * n, stream, device=device)
    return _uniform_from_words(w, dtype, open_interval).reshape(-1, *shape)


def normal(seeds: Sequence[int] | torch.Tensor, shape: int | Sequence[int], stream: int,
           dtype: torch.dtype = torch.float32,
           device: torch.device | str | None = None) -> torch.Tensor:
    """``(B, *shape)`` standard normals (Box–Muller), computed in ``dtype``."""
    _check_float(dtype)
    shape, n = _size(shape)
    pairs = -(-n // 2)
    if dtype == torch.float32:
        w = words(seeds, 2 * pairs, stream, device=device)
        u1 = ((w[:, 0::2] << 1) | 1).to(torch.float32) * 2.0**-33
        u2 = (w[:, 1::2] >> 8).to(torch.float32) * 2.0**-24
    else:
        w = words(seeds, 4 * pairs, stream, device=device)
        u1 = (_bits(w[:, 0::4], w[:, 1::4], 52).to(torch.float64) + 0.5) * 2.0**-52
        u2 = _bits(w[:, 2::4], w[:, 3::4], 53).to(torch.float64) * 2.0**-53
    radius = (u1.log() * -2.0).sqrt()
    angle = u2 * (2.0 * math.pi)
    z = torch.stack((radius * angle.cos(), radius * angle.sin()), dim=-1)
    return z.reshape(z.shape[0], 2 * pairs)[:, :n].reshape(-1, *shape)


def integers(seeds: Sequence[int] | torch.Tensor, high: int | torch.Tensor,
             shape: int | Sequence[int], stream: int,
             device: torch.device | str | None = None) -> torch.Tensor:
    """``(B, *shape)`` int64 integers uniform on ``[0, high)``; ``high`` an int or a ``(B,)``
    tensor (one bound per sample), each in ``[1, 2**31)``."""
    shape, n = _size(shape)
    w = words(seeds, 2 * n, stream, device=device)
    bound = torch.as_tensor(high, dtype=torch.int64, device=w.device)
    if bound.dim() > 1 or (bound.dim() == 1 and bound.shape[0] != w.shape[0]):
        raise ValueError(f"integers: high must be an int or one bound per sample "
                         f"({w.shape[0]},), got shape {tuple(bound.shape)}")
    if bound.numel() and bool(((bound < 1) | (bound >= 2**31)).any()):
        raise ValueError(f"integers: high must be in [1, 2**31), got {bound.tolist()}")
    bound = bound.reshape(-1, 1) if bound.dim() else bound
    # floor(x n / 2**64) for x = hi 2**32 + lo, exactly: hi n + floor(lo n / 2**32) < 2**63
    value = (w[:, 0::2] * bound + ((w[:, 1::2] * bound) >> 32)) >> 32
    return value.reshape(-1, *shape)


def permutation(seeds: Sequence[int] | torch.Tensor, n: int, stream: int,
                device: torch.device | str | None = None) -> torch.Tensor:
    """``(B, n)`` int64: a uniformly random permutation of ``0 .. n-1`` per sample."""
    if n < 0:
        raise ValueError(f"permutation length must be non-negative, got {n}")
    w = words(seeds, 2 * n, stream, device=device)
    sort_keys = ((w[:, 0::2] & 0x7FFFFFFF) << 32) | w[:, 1::2]
    return torch.argsort(sort_keys, dim=1, stable=True)


def inversion_terms(rate: float) -> int:
    """The number of pmf terms (``k = 0 .. K``) past which a Poisson(``rate``) tail is below
    :data:`INVERSION_TAIL`."""
    if rate <= 0.0:
        return 1
    log_rate = math.log(rate)
    k = 0
    while True:
        # the tail beyond k: terms decrease at least geometrically (ratio rate / (j + 1)) once
        # j + 1 > rate, bounded by the first term over (1 - ratio)
        j = k + 1
        if j > rate:
            first = math.exp(-rate + j * log_rate - math.lgamma(j + 1))
            if first / (1.0 - rate / (j + 1)) < INVERSION_TAIL:
                return k + 1
        k += 1


def _poisson_inversion(rate: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Poisson draws by sequential search: ``#{k : F(k) <= u}``, float64 CDF ``F``."""
    terms = inversion_terms(float(rate.max())) if rate.numel() else 1
    pmf = torch.exp(-rate)
    cdf = pmf.clone()
    count = (u >= cdf).to(torch.int64)
    for k in range(1, terms):
        pmf = pmf * rate * (1.0 / k)
        cdf = cdf + pmf
        count += u >= cdf
    return count


def _ptrs_round(rate: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """One round of PTRS (Hörmann 1993, algorithm PTRS): the candidate and whether it is
    accepted, for rates ``>= 10`` and uniforms ``u, v`` in ``(0, 1)``."""
    root = rate.sqrt()
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2.0)
    us_signed = u - 0.5
    us = 0.5 - us_signed.abs()
    k = torch.floor((2.0 * a / us + b) * us_signed + rate + 0.43)
    squeeze = (us >= 0.07) & (v <= v_r)
    possible = (k >= 0) & ~((us < 0.013) & (v > us))
    kk = k.clamp(min=0.0)
    log_accept = (v.log() + inv_alpha.log() - (a / (us * us) + b).log()
                  <= -rate + kk * rate.log() - torch.lgamma(kk + 1.0))
    return k, squeeze | (possible & log_accept)


def _poisson_ptrs(key: torch.Tensor, index: torch.Tensor, rate: torch.Tensor,
                  stream: int) -> torch.Tensor:
    """PTRS draws of elements ``index`` (flat, per sample) under seeds ``key``, one per entry."""
    out = torch.empty_like(rate)
    pending = torch.arange(rate.shape[0], device=rate.device)
    k0, k1 = key & MASK32, key >> 32
    c0, c1 = index & MASK32, index >> 32
    for r in range(PTRS_ROUNDS + 1):
        w = torch.stack(philox4x32((c0[pending], c1[pending], stream, 1 + r),
                                   (k0[pending], k1[pending])), dim=1)
        if r == PTRS_ROUNDS:
            u1 = (_bits(w[:, 0], w[:, 1], 52).to(torch.float64) + 0.5) * 2.0**-52
            u2 = _bits(w[:, 2], w[:, 3], 52).to(torch.float64) * 2.0**-52
            z = (u1.log() * -2.0).sqrt() * torch.cos(u2 * (2.0 * math.pi))
            lam = rate[pending]
            out[pending] = torch.floor(lam + lam.sqrt() * z + 0.5).clamp(min=0.0)
            break
        u = (_bits(w[:, 0], w[:, 1], 52).to(torch.float64) + 0.5) * 2.0**-52
        v = (_bits(w[:, 2], w[:, 3], 52).to(torch.float64) + 0.5) * 2.0**-52
        k, accepted = _ptrs_round(rate[pending], u, v)
        out[pending[accepted]] = k[accepted]
        pending = pending[~accepted]
        if pending.numel() == 0:
            break
    return out.to(torch.int64)


def poisson(seeds: Sequence[int] | torch.Tensor, rate: torch.Tensor, stream: int,
            device: torch.device | str | None = None) -> torch.Tensor:
    """``(B, *shape)`` int64 Poisson draws of the ``(B, *shape)`` float rates (one per
    element, in ``[0, 2**52]``); element ``i`` (C order within its sample) draws from its own
    counters only, so the method chosen for one element (by its rate) changes no other."""
    key = keys(seeds, device if device is not None else rate.device)
    if rate.dim() < 1 or rate.shape[0] != key.shape[0]:
        raise ValueError(f"poisson: rates must be (B, ...) with B = {key.shape[0]} seeds, got "
                         f"shape {tuple(rate.shape)}")
    lam = rate.to(key.device, torch.float64).reshape(key.shape[0], -1)
    if lam.numel() and not bool(((lam >= 0) & (lam <= MAX_RATE)).all()):
        raise ValueError(f"poisson: rates must be finite and in [0, 2**52], got values in "
                         f"[{float(lam.min())}, {float(lam.max())}] (NaN counts as bad)")
    out = torch.empty(lam.shape, dtype=torch.int64, device=lam.device)
    n = lam.shape[1]
    step = max(1, CPU_CHUNK // (4 * max(1, key.shape[0]))) if key.device.type == "cpu" else n
    for start in range(0, n, step):
        part = lam[:, start:start + step]
        out[:, start:start + step] = _poisson_part(key, part, start, stream)
    return out.reshape(rate.shape)


def _poisson_part(key: torch.Tensor, lam: torch.Tensor, start: int, stream: int) -> torch.Tensor:
    """:func:`poisson` of the elements ``start ..`` of each sample (``lam`` ``(B, m)``)."""
    large = lam >= PTRS_MIN_RATE
    u = words(key, lam.shape[1], stream, start=start).to(torch.float64) * 2.0**-32
    out = _poisson_inversion(torch.where(large, 0.0, lam), u)
    if bool(large.any()):
        row, col = large.nonzero(as_tuple=True)
        out[row, col] = _poisson_ptrs(key[row], col + start, lam[row, col], stream)
    return out
