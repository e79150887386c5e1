"""Counter-based random draws in torch: Philox4x32-10, the same integers on the CPU and on CUDA.

Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3",
SC'11; the Random123 library) maps a 128-bit counter and a 64-bit key to 128 random bits with
ten rounds of 32x32→64-bit multiplies and xors. Nothing is carried from one draw to the next:
the bits of element ``j`` of a sample are a function of (the sample's key, ``j``, the stream)
only, so a sample's draws do not depend on which samples share its batch, on the batch size, on
the order of the batch, or on the device. Here the words are torch int64 tensors holding uint32
values: a round's 32 x 32 → 64-bit product is one int64 multiply, which wraps modulo 2**64 on
the CPU and on CUDA (the hardware's 64-bit multiply; tested against exact integer arithmetic),
and the integer words are identical on every device (tested against Random123's known-answer
vectors). The draws run both multiplies of a round in one operation over all samples and
blocks (:func:`_lanes`), on the CPU in chunks of :data:`CPU_CHUNK` blocks per sample (the
number of operations depends on the draw's size, never on the batch).

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
  over a float64 CDF, :data:`INVERSION_TERMS` terms for every rate below 10, so that the tail
  beyond is below ``2**-40``); rate ``>= 10`` by PTRS (Hörmann 1993, transformed rejection with
  squeeze), round ``r`` of element ``i`` taking the two 52-bit uniforms of block
  ``(i, stream, 1 + r)`` (``u`` from its words 0, 1, ``v`` from 2, 3); an element still rejected
  after :data:`PTRS_ROUNDS` rounds takes a rounded normal approximation from block
  ``(i, stream, 1 + PTRS_ROUNDS)`` (a round rejects 25 % at rate 10, 12 % at 1000, so the
  fallback's probability is under ``0.25**32``, 5e-20 a draw). The number of operations is
  fixed by the shape: the inversion drops finished elements on a fixed schedule
  (:data:`INVERSION_GATHER`) and PTRS runs its rounds in fixed stages (:data:`PTRS_STAGES`) on
  the elements still pending (gathered with ``nonzero``: a few host synchronisations on a GPU).

Integer words, uniforms, integers and permutations are bit-identical on every device (integer
and power-of-two arithmetic only). Normals and Poisson draws use ``log``/``cos``/``sin``/
``lgamma``/``exp``, whose last bits may differ between CPU and CUDA (and CPU instruction sets):
normals may then differ in the last ulps, Poisson draws only when a uniform falls within rounding
of a CDF or acceptance boundary.

Used by the pixel noises (:mod:`vcrbench.corruptions.noise`) and frost
(:mod:`vcrbench.corruptions.weather`); other corruptions still draw per sample
(:mod:`vcrbench.corruptions.generators`).
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
#: Poisson: the PTRS rounds run in stages, ``[0, 1), [1, 3), [3, 6), [6, PTRS_ROUNDS]``, all
#: rounds of a stage at once for the elements still pending before it (a fixed schedule, so the
#: number of operations does not depend on the draws; a round rejects at most 25 %, so the later
#: stages touch few elements: at most 1.6 % of them reach the fourth stage).
PTRS_STAGES = (1, 3, 6)
#: Poisson: the inversion sums the pmf until the tail beyond is below this.
INVERSION_TAIL = 2.0**-40
#: Poisson: inversion terms after which the elements whose draw is final (``u < F(k)``) are
#: dropped (a fixed schedule; the rest keep summing).
INVERSION_GATHER = (3, 6, 12, 24)
#: Poisson: the largest rate accepted (the draws are int64; PTRS in float64).
MAX_RATE = 2.0**52
#: Blocks of each sample computed at once on the CPU (all samples together): the temporaries
#: stay near the cache, and the number of chunks depends on the draw's size only, never on the
#: batch. On CUDA a draw is one pass.
CPU_CHUNK = 1024
#: Poisson: elements of each sample per CPU chunk of the inversion.
CPU_POISSON_CHUNK = 4096
#: Poisson: elements of each sample per CPU piece of the PTRS draws (the pieces, of the
#: gathered elements of rate >= 10, are as many as the sample's elements make).
CPU_PTRS_CHUNK = 16384

Word = torch.Tensor | int


def _mulhilo(a: int, x: Word) -> tuple[Word, Word]:
    """Low and high 32-bit words of ``a * x`` (``a`` a 32-bit constant, ``x`` uint32 values).

    One int64 multiply: the product is below ``2**64`` and torch's int64 multiply keeps its
    low 64 bits (two's complement wrap-around: the hardware's 64-bit multiply on the CPU, scalar
    and vector, and ``mul.lo.s64`` on CUDA), so ``p & MASK32`` is the low word and
    ``(p >> 32) & MASK32`` the high one (the arithmetic shift's sign bits masked off). Tested
    against exact integer arithmetic, extremes included.
    """
    if isinstance(x, int):
        product = a * x
        return product & MASK32, product >> 32
    product = x * a
    high = product >> 32
    high &= MASK32
    product &= MASK32
    return product, high


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


def _lanes(k0: torch.Tensor, k1: torch.Tensor, index: torch.Tensor, stream: int,
           sub: int | torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Philox4x32-10 of the blocks ``(index, stream, sub)`` under the keys ``(k0, k1)``, all
    broadcast together to a shape ``S``: ``(x, y)``, ``(2, *S)`` int64, ``x = (w0, w2)`` and
    ``y = (w1, w3)`` the blocks' words (``k0, k1`` ``(B, 1)`` and ``index`` ``(m,)`` give the
    blocks ``0 .. m-1`` of every sample).

    The same rounds as :func:`philox4x32` with both multiplies of a round in one operation: the
    state is ``x`` (the multiplied words ``c0, c2``) and ``y`` (``c1, c3``), stacked along a first
    axis of 2 whose order alternates between rounds (a round's outputs ``(hi0 ^ c3 ^ k1,
    hi1 ^ c1 ^ k0)`` come out in the order opposite to its inputs), so no round copies to reorder.
    The first round's products do not depend on the key and run on ``index`` alone.
    """
    device = index.device
    sub = torch.as_tensor(sub, dtype=torch.int64, device=device)
    shape = torch.broadcast_shapes(k0.shape, index.shape, sub.shape)
    # the round keys are left unmasked (below 2**36): each round masks its new words after
    # xoring them in, which keeps the low 32 bits, the key's
    round_k0 = [k0 + r * W0 if r else k0 for r in range(ROUNDS)]
    round_k1 = [k1 + r * W1 if r else k1 for r in range(ROUNDS)]
    lo0, hi0 = _mulhilo(M0, index & MASK32)
    lo1, hi1 = _mulhilo(M1, int(stream))
    # round 1: x = (c2, c0) (reversed order), y = (c1, c3) in order
    x = torch.empty((2, *shape), dtype=torch.int64, device=device)
    x[0] = (hi0 ^ sub) ^ round_k1[0]
    x[1] = ((index >> 32) ^ hi1) ^ round_k0[0]
    y = torch.stack((torch.full_like(lo0, lo1), lo0))
    y = y.view(2, *[1] * (len(shape) - lo0.dim()), *lo0.shape)
    multipliers = tuple(torch.tensor(m, dtype=torch.int64, device=device).view(2, *[1] * len(shape))
                        for m in ((M0, M1), (M1, M0)))
    keys_in_order, keys_reversed = (round_k0, round_k1), (round_k1, round_k0)
    # From round 2 on, y is the previous round's product, unmasked and in the opposite lane
    # order (its low words are (c1, c3) reversed): xored lane by lane, the high bits masked
    # off with the rest of the new words.
    product, spare, previous = (torch.empty_like(x) for _ in range(3))
    reversed_ = True
    for rnd in range(1, ROUNDS):
        torch.mul(x, multipliers[reversed_], out=product)
        torch.bitwise_right_shift(product, 32, out=spare)
        first_key, second_key = keys_in_order if reversed_ else keys_reversed
        if rnd == 1:
            spare ^= y
        else:
            spare[0] ^= previous[1]
            spare[1] ^= previous[0]
        spare[0] ^= first_key[rnd]
        spare[1] ^= second_key[rnd]
        spare &= MASK32
        x, spare = spare, x
        if rnd == ROUNDS - 1:
            product &= MASK32  # x is in order now, and so is (lo1, lo0) = (c1, c3)
            return x, product
        product, previous = previous, product
        reversed_ = not reversed_
    raise AssertionError("unreachable")


def _chunks(blocks: int, device: torch.device) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges of blocks per sample: :data:`CPU_CHUNK` each on the CPU (a
    number that depends on ``blocks`` only), one on other devices."""
    step = max(1, CPU_CHUNK) if device.type == "cpu" else max(1, blocks)
    return [(at, min(at + step, blocks)) for at in range(0, blocks, step)]


def _each_chunk(key: torch.Tensor, first: int, blocks: int, stream: int, sub: int):
    """``(at, stop, x, y)`` for the chunks of blocks ``first .. first + blocks - 1`` of every
    sample (``x, y`` as :func:`_lanes` gives them, of blocks ``first + at .. first + stop - 1``)."""
    k0, k1 = (key & MASK32).view(-1, 1), (key >> 32).view(-1, 1)
    for at, stop in _chunks(blocks, key.device):
        index = torch.arange(first + at, first + stop, dtype=torch.int64, device=key.device)
        x, y = _lanes(k0, k1, index, stream, sub)
        yield at, stop, x, y


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
    if isinstance(seeds, torch.Tensor) and out.numel() and bool((out < 0).any()):
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
    out = torch.empty((key.shape[0], blocks, 2, 2), dtype=torch.int64, device=key.device)
    lanes = out.permute(3, 2, 0, 1)  # [w0 w2 | w1 w3], (2, 2, B, blocks)
    for at, stop, x, y in _each_chunk(key, first, blocks, stream, sub):
        lanes[0, :, :, at:stop] = x
        lanes[1, :, :, at:stop] = y
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
    key = keys(seeds, device)
    _check_ids(stream, 0)
    if dtype == torch.float32:
        blocks = -(-n // 4)
        out = torch.empty((key.shape[0], blocks, 2, 2), dtype=dtype, device=key.device)
        lanes = out.permute(3, 2, 0, 1)
        shift = 9 if open_interval else 8
        for at, stop, x, y in _each_chunk(key, 0, blocks, stream, 0):
            lanes[0, :, :, at:stop] = x.__irshift__(shift)
            lanes[1, :, :, at:stop] = y.__irshift__(shift)
        if open_interval:
            out += 0.5
            out *= 2.0**-23
        else:
            out *= 2.0**-24
    else:
        # element 2j from words (w0, w1) of block j, element 2j + 1 from (w2, w3)
        bits = 52 if open_interval else 53
        blocks = -(-n // 2)
        out = torch.empty((key.shape[0], blocks, 2), dtype=dtype, device=key.device)
        lanes = out.permute(2, 0, 1)
        for at, stop, x, y in _each_chunk(key, 0, blocks, stream, 0):
            lanes[:, :, at:stop] = _bits(x, y, bits)
        if open_interval:
            out += 0.5
        out *= 2.0**-bits
    return out.reshape(key.shape[0], -1)[:, :n].reshape(-1, *shape)


#: float32 Box–Muller angle per unit of ``w >> 8``: ``fl32(2 pi) * 2**-24``, exactly the product
#: of the float32 uniform ``(w >> 8) / 2**24`` and ``fl32(2 pi)`` (a power-of-two scaling).
_ANGLE32 = float(torch.tensor(2.0 * math.pi, dtype=torch.float32)) * 2.0**-24


def normal(seeds: Sequence[int] | torch.Tensor, shape: int | Sequence[int], stream: int,
           dtype: torch.dtype = torch.float32,
           device: torch.device | str | None = None) -> torch.Tensor:
    """``(B, *shape)`` standard normals (Box–Muller), computed in ``dtype``."""
    _check_float(dtype)
    shape, n = _size(shape)
    key = keys(seeds, device)
    _check_ids(stream, 0)
    if dtype == torch.float32:
        # pairs (w0, w1) and (w2, w3) of block j: elements 4j, 4j + 1 and 4j + 2, 4j + 3
        blocks = -(-n // 4)
        out = torch.empty((key.shape[0], blocks, 2, 2), dtype=dtype, device=key.device)
        lanes = out.permute(3, 2, 0, 1)  # [cos | sin], (pair, B, block)
        for at, stop, x, y in _each_chunk(key, 0, blocks, stream, 0):
            x <<= 1
            x |= 1
            radius = x.to(dtype)
            radius *= 2.0**-33
            radius.log_().mul_(-2.0).sqrt_()
            angle = y.__irshift__(8).to(dtype)
            angle *= _ANGLE32
            torch.mul(radius, angle.cos(), out=lanes[0, :, :, at:stop])
            torch.mul(radius, angle.sin_(), out=lanes[1, :, :, at:stop])
    else:
        # element pair j: u1 from words (w0, w1), u2 from (w2, w3) of block j
        blocks = -(-n // 2)
        out = torch.empty((key.shape[0], blocks, 2), dtype=dtype, device=key.device)
        lanes = out.permute(2, 0, 1)
        for at, stop, x, y in _each_chunk(key, 0, blocks, stream, 0):
            u1 = (_bits(x[0], y[0], 52).to(dtype) + 0.5) * 2.0**-52
            u2 = _bits(x[1], y[1], 53).to(dtype) * 2.0**-53
            radius = (u1.log() * -2.0).sqrt()
            angle = u2 * (2.0 * math.pi)
            torch.mul(radius, angle.cos(), out=lanes[0, :, at:stop])
            torch.mul(radius, angle.sin(), out=lanes[1, :, at:stop])
    return out.reshape(key.shape[0], -1)[:, :n].reshape(-1, *shape)


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


#: Poisson: the CDF terms of the inversion, enough for every rate below :data:`PTRS_MIN_RATE`
#: (a fixed number, whatever the rates of the batch).
INVERSION_TERMS = inversion_terms(math.nextafter(PTRS_MIN_RATE, 0.0))


def _poisson_inversion(rate: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Poisson draws of rates below :data:`PTRS_MIN_RATE` by sequential search: ``#{k : F(k)
    <= u}`` over :data:`INVERSION_TERMS` float64 CDF values ``F(k) = sum_j<=k p_j rate**j
    e**-rate / j!`` (``rate**k e**-rate`` carried from term to term, ``1 / k!`` a constant).

    Elements whose draw is final (``u < F(k)``) are dropped after the terms
    :data:`INVERSION_GATHER`, a fixed schedule: a batch of small rates does little work, and the
    number of operations does not depend on the rates.
    """
    shape = rate.shape
    rate, u = rate.reshape(-1), u.reshape(-1)
    out = torch.empty(rate.shape, dtype=torch.uint8, device=rate.device)  # counts <= 40
    power = torch.exp(-rate)
    cdf = power.clone()
    below = u >= cdf
    count = below.to(torch.uint8)  # at most INVERSION_TERMS: uint8 counts, int64 draws
    index = None
    inverse_factorial = 1.0
    for k in range(1, INVERSION_TERMS):
        power *= rate
        inverse_factorial /= k
        cdf.add_(power, alpha=inverse_factorial)
        torch.ge(u, cdf, out=below)
        count += below
        if k in INVERSION_GATHER:
            if index is None:
                out.copy_(count)
            else:
                out.index_copy_(0, index, count)
            # the kept elements have u >= F(k) >= F(j) for every j <= k: their count is k + 1
            keep = below.nonzero().squeeze(1)
            index = keep if index is None else index.index_select(0, keep)
            rate, u, power, cdf = (t.index_select(0, keep) for t in (rate, u, power, cdf))
            count = torch.full_like(keep, k + 1, dtype=torch.uint8)
            below = torch.empty_like(u, dtype=torch.bool)
    if index is None:
        out.copy_(count)
    else:
        out.index_copy_(0, index, count)
    return out.reshape(shape).to(torch.int64)


def _ptrs_constants(rate: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """PTRS's per-rate constants ``(rate, log rate, b, a, log(1 / alpha), v_r)``."""
    root = rate.sqrt()
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2.0)
    return rate, rate.log(), b, a, inv_alpha.log(), v_r


def _ptrs_accept(constants: tuple[torch.Tensor, ...], u: torch.Tensor,
                 v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One PTRS round from :func:`_ptrs_constants`: the candidate and whether it is accepted.

    On the CPU the costly acceptance test (two logs and a log-gamma) runs only on the
    candidates that need it (possible and not accepted by the squeeze: about 15 % at rates
    above 100), gathered; elsewhere on every candidate (no host synchronisation). The same
    arithmetic on each element either way."""
    rate, log_rate, b, a, log_inv_alpha, v_r = constants
    us_signed = u - 0.5
    us = 0.5 - us_signed.abs()
    k = torch.floor((2.0 * a / us + b) * us_signed + rate + 0.43)
    squeeze = (us >= 0.07) & (v <= v_r)
    possible = (k >= 0) & ~((us < 0.013) & (v > us))
    if u.device.type != "cpu":
        kk = k.clamp(min=0.0)
        log_accept = (v.log() + log_inv_alpha - (a / (us * us) + b).log()
                      <= -rate + kk * log_rate - torch.lgamma(kk + 1.0))
        return k, squeeze | (possible & log_accept)
    shape = k.shape
    test = (possible & ~squeeze).view(-1).nonzero().squeeze(1)
    # the constants are of the full shape or, in the stages of rounds, one row of it
    column = test % max(1, shape[-1]) if rate.shape != shape else test
    v, us, kk = (t.expand(shape).reshape(-1).index_select(0, test) for t in (v, us, k))
    rate, log_rate, b, a, log_inv_alpha = (
        t.reshape(-1).index_select(0, column) for t in (rate, log_rate, b, a, log_inv_alpha))
    log_accept = (v.log() + log_inv_alpha - (a / (us * us) + b).log()
                  <= -rate + kk * log_rate - torch.lgamma(kk + 1.0))
    return k, squeeze.view(-1).index_copy_(0, test, log_accept).view(shape)


def _ptrs_round(rate: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """One round of PTRS (Hörmann 1993, algorithm PTRS): the candidate and whether it is
    accepted, for rates ``>= 10`` and uniforms ``u, v`` in ``(0, 1)``."""
    return _ptrs_accept(_ptrs_constants(rate), u, v)


def _poisson_ptrs(key: torch.Tensor, index: torch.Tensor, rate: torch.Tensor,
                  stream: int) -> torch.Tensor:
    """PTRS draws of elements ``index`` (flat, per sample) under seeds ``key``, one per entry.

    Round ``r`` of an entry takes the block ``(index, stream, 1 + r)``; its draw is the
    candidate of its first accepting round (the fallback at round :data:`PTRS_ROUNDS`). The
    rounds run in the stages :data:`PTRS_STAGES`, all rounds of a stage at once for the entries
    still pending (gathered), so the number of operations is fixed."""
    out = torch.zeros_like(rate)
    where = torch.arange(rate.shape[0], device=rate.device)
    state = (key & MASK32, key >> 32, index, *_ptrs_constants(rate))
    pending = torch.ones(rate.shape, dtype=torch.bool, device=rate.device)
    bounds = (0, *[s for s in PTRS_STAGES if 0 < s <= PTRS_ROUNDS], PTRS_ROUNDS + 1)
    for first, stop in zip(bounds[:-1], bounds[1:], strict=True):
        if first:
            keep = pending.nonzero().squeeze(1)
            where = where.index_select(0, keep)
            state = tuple(t.index_select(0, keep) for t in state)
        # rounds along the first axis, entries along the last (contiguous) one
        k0, k1, col, *constants = (t.unsqueeze(0) for t in state)
        sub = torch.arange(1 + first, 1 + stop, dtype=torch.int64, device=rate.device)
        x, y = _lanes(k0, k1, col, stream, sub.unsqueeze(1))  # (2, rounds, entries)
        u = (_bits(x[0], y[0], 52).to(torch.float64) + 0.5) * 2.0**-52
        v = (_bits(x[1], y[1], 52).to(torch.float64) + 0.5) * 2.0**-52
        draw, accepted = _ptrs_accept(tuple(constants), u, v)
        if stop == PTRS_ROUNDS + 1:
            # the fallback: a rounded normal from the same block's words
            u2 = _bits(x[1, -1], y[1, -1], 52).to(torch.float64) * 2.0**-52
            z = (u[-1].log() * -2.0).sqrt() * torch.cos(u2 * (2.0 * math.pi))
            lam = state[3]
            draw[-1] = torch.floor(lam + lam.sqrt() * z + 0.5).clamp(min=0.0)
            accepted[-1] = True
        taken, pending = draw[-1], ~accepted[-1]
        for j in range(stop - first - 2, -1, -1):  # the first accepting round's candidate
            taken = torch.where(accepted[j], draw[j], taken)
            pending &= ~accepted[j]
        out.index_copy_(0, where, torch.where(pending, out.index_select(0, where), taken))
    return out.to(torch.int64)


def poisson(seeds: Sequence[int] | torch.Tensor, rate: torch.Tensor, stream: int,
            device: torch.device | str | None = None, check: bool = True) -> torch.Tensor:
    """``(B, *shape)`` int64 Poisson draws of the ``(B, *shape)`` float rates (one per
    element, in ``[0, 2**52]``); element ``i`` (C order within its sample) draws from its own
    counters only, so the method chosen for one element (by its rate) changes no other.

    ``check=False`` skips the range check (a host synchronisation on a GPU) for rates the caller
    knows to be in range. The number of operations depends on the shape only: every element
    runs the inversion (rates >= 10 as rate 0), and the elements of rate >= 10 are gathered for
    PTRS (in a number of pieces that depends on the shape, on the CPU)."""
    key = keys(seeds, device if device is not None else rate.device)
    if rate.dim() < 1 or rate.shape[0] != key.shape[0]:
        raise ValueError(f"poisson: rates must be (B, ...) with B = {key.shape[0]} seeds, got "
                         f"shape {tuple(rate.shape)}")
    lam = rate.to(key.device, torch.float64).reshape(key.shape[0], -1)
    if check and lam.numel() and not bool(((lam >= 0) & (lam <= MAX_RATE)).all()):
        raise ValueError(f"poisson: rates must be finite and in [0, 2**52], got values in "
                         f"[{float(lam.min())}, {float(lam.max())}] (NaN counts as bad)")
    out = torch.empty(lam.shape, dtype=torch.int64, device=lam.device)
    n = lam.shape[1]
    cpu = key.device.type == "cpu"
    step = max(1, CPU_POISSON_CHUNK) if cpu else max(1, n)
    for start in range(0, n, step):
        stop = min(start + step, n)
        u = words(key, stop - start, stream, start=start).to(torch.float64)
        u *= 2.0**-32
        part = lam[:, start:stop]
        out[:, start:stop] = _poisson_inversion(part.masked_fill(part >= PTRS_MIN_RATE, 0.0), u)
    large = (lam >= PTRS_MIN_RATE).nonzero()  # (row, column) pairs, in C order
    pieces = -(-n // max(1, CPU_PTRS_CHUNK)) if cpu else 1
    flat_out, flat_lam = out.view(-1), lam.reshape(-1)
    for part in torch.tensor_split(large, max(1, pieces)):
        row, col = part[:, 0].contiguous(), part[:, 1].contiguous()
        flat = row * n + col
        flat_out.index_copy_(0, flat, _poisson_ptrs(key.index_select(0, row), col,
                                                   flat_lam.index_select(0, flat), stream))
    return out.reshape(rate.shape)
