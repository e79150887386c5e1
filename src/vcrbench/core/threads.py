"""Work spread over a job's threads where the work releases the GIL (numpy's generators,
hashlib on large buffers): :func:`thread_map`, whose results do not depend on the thread count."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import TypeVar

import torch

T = TypeVar("T")
#: Per-item work below this many bytes (or values) runs in one thread: at 32 px a checksum takes
#: about 7 µs and a noise draw 40 to 80 µs, which two threads made no faster
#: (``benchmarks/bench_noise_draws.py --side 32``).
SMALL_ITEM = 1 << 16


@lru_cache(maxsize=4)
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="vcrbench")


def thread_map(function: Callable[..., T], *iterables: Iterable, serial: bool = False
               ) -> list[T]:
    """``list(map(function, *iterables))`` on up to ``torch.get_num_threads()`` threads (the
    job's thread count, :func:`vcrbench.core.jobs.set_threads`), results in order; ``serial``:
    in this thread (for items too small to pay for the hand-over).

    ``function`` must not depend on which thread runs it or on the order the calls run in
    (each call reads its own arguments and writes nowhere another call writes)."""
    columns = [list(items) for items in iterables]
    n = min(len(c) for c in columns) if columns else 0
    threads = 1 if serial else min(torch.get_num_threads(), n)
    if threads <= 1:
        return list(map(function, *columns))
    # one task per thread, each a block of consecutive items: no per-item hand-over
    bounds = [n * k // threads for k in range(threads + 1)]

    def block(k: int) -> list[T]:
        return list(map(function, *(c[bounds[k]:bounds[k + 1]] for c in columns)))

    return [x for part in _pool(threads).map(block, range(threads)) for x in part]
