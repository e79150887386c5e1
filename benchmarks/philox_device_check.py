"""The counter-based draws (``vcrbench.core.philox``) on a GPU against the same on the CPU, in
one short command (about a minute on one H200)::

    PYTHONPATH=src python3 benchmarks/philox_device_check.py

Prints, with the machine line: Random123's known answers computed on the device; for each draw,
whether the device's values equal the CPU's bit for bit (words, uniforms, integers and
permutations must; normals and Poisson draws may differ where ``log``/``cos``/``lgamma`` differ
in the last bits: the fraction and largest difference are printed); Triton's compiled
``tl.philox`` against ours on the device (a peer); and the device's draws/s at 224 px,
batch 16 and 256. Exits non-zero when a must-equal check fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import machine_line  # noqa: E402

from vcrbench.core import philox  # noqa: E402

KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def triton_words(seeds: torch.Tensor, blocks: int, stream: int) -> torch.Tensor | None:
    """Words ``0 .. 4 blocks`` of each seed by Triton's ``tl.philox`` (None without Triton)."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def kernel(out, seed, stream, blocks, BLOCK: tl.constexpr):
        j = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        zero = j.to(tl.uint32) * 0
        w = tl.philox(seed, j.to(tl.uint32), zero, zero + stream, zero)
        for lane in tl.static_range(4):
            tl.store(out + 4 * j + lane, w[lane].to(tl.int64) & 0xFFFFFFFF, mask=j < blocks)

    rows = []
    for seed in seeds.tolist():
        out = torch.empty(4 * blocks, dtype=torch.int64, device=seeds.device)
        kernel[(triton.cdiv(blocks, 256),)](out, seed, stream, blocks, BLOCK=256)
        rows.append(out)
    return torch.stack(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--batches", type=int, nargs="*", default=[16, 256],
                        help="batch sizes timed (none: no timing)")
    args = parser.parse_args()
    device = torch.device(args.device)
    print(machine_line(args.device))
    failed = []

    def must(name: str, ok: bool) -> None:
        print(f"{name}: {'ok' if ok else 'FAILED'}")
        if not ok:
            failed.append(name)

    for counter, key, expected in KAT:
        got = philox.philox4x32([torch.tensor(c, device=device) for c in counter],
                                [torch.tensor(k, device=device) for k in key])
        must(f"known answer {counter[0]:08x}", [int(w) for w in got] == list(expected))

    seeds = torch.randint(0, 2**63 - 1, (16,), generator=torch.Generator().manual_seed(0))
    on = seeds.to(device)
    shape = (3, 224, 224)
    rates = torch.rand((16, *shape), generator=torch.Generator().manual_seed(1),
                       dtype=torch.float64) * 60.0
    exact = {
        "words": lambda s: philox.words(s, 100_003, 7, 2),
        "uniform float32": lambda s: philox.uniform(s, shape, 7),
        "uniform float64 (0,1)": lambda s: philox.uniform(s, shape, 7, torch.float64, True),
        "integers": lambda s: philox.integers(s, 1_000_003, 5000, 7),
        "permutation": lambda s: philox.permutation(s, 5000, 7),
    }
    for name, draw in exact.items():
        must(f"{name} equal on cpu and {device.type}", torch.equal(draw(seeds), draw(on).cpu()))
    close = {
        "normal float32": lambda s: philox.normal(s, shape, 7),
        "normal float64": lambda s: philox.normal(s, shape, 7, torch.float64),
        "poisson rates 0-60": lambda s: philox.poisson(s, rates.to(s.device), 7),
        "poisson rate 1000": lambda s: philox.poisson(s, torch.full((16, 4000), 1e3,
                                                                    device=s.device), 7),
    }
    for name, draw in close.items():
        a, b = draw(seeds), draw(on).cpu()
        differ = a != b
        largest = float((a.double() - b.double()).abs().max())
        print(f"{name}: {int(differ.sum())} of {a.numel()} values differ between cpu and "
              f"{device.type}, largest difference {largest:.3g}")

    if device.type == "cuda":
        peer = triton_words(on[:8], 4096, 7)
        if peer is None:
            print("triton: not installed, peer check skipped")
        else:
            must("triton tl.philox equals ours", torch.equal(peer, philox.words(on[:8], 4 * 4096,
                                                                                7)))

    for batch in args.batches:
        s = torch.arange(batch, device=device) * 7919
        lam = torch.rand((batch, *shape), device=device, dtype=torch.float64) * 60.0
        for name, draw in (("uniform float32", lambda s=s: philox.uniform(s, shape, 1)),
                           ("normal float32", lambda s=s: philox.normal(s, shape, 1)),
                           ("poisson rates 0-60",
                            lambda s=s, lam=lam: philox.poisson(s, lam, 1))):
            draw()
            best = float("inf")
            for _ in range(5):
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                start = time.perf_counter()
                draw()
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                best = min(best, time.perf_counter() - start)
            count = batch * 3 * 224 * 224
            print(f"batch {batch} {name}: {count / best:.3g} draws/s, "
                  f"{1000 * best / batch:.4f} ms/sample on {device}")
    print("FAILED: " + ", ".join(failed) if failed else "all must-equal checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
