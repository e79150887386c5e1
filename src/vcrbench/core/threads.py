"""Work spread over a job's threads where the work releases the GIL (numpy's generators,
hashlib on large buffers): :func:`thread_map`, whose results do not depend on the thread count."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import TypeVar

import torch

T = TypeVar("T")


@lru_cache(maxsize=4)
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="vcrbench")


def thread_map(function: Callable[..., T], *iterables: Iterable) -> list[T]:
    """``list(map(function, *iterables))`` on up to ``torch.get_num_threads()`` threads (the
    job's thread count, :func:`vcrbench.core.jobs.set_threads`), results in order.

    ``function`` must not depend on which thread runs it or on the order the calls run in
    (each call reads its own arguments and writes nowhere another call writes)."""
    columns = [list(items) for items in iterables]
    n = min(len(c) for c in columns) if columns else 0
    threads = min(torch.get_num_threads(), n)
    if threads <= 1:
        return list(map(function, *columns))
    # one task per thread, each a block of consecutive items: no per-item hand-over
    bounds = [n * k // threads for k in range(threads + 1)]

    def block(k: int) -> list[T]:
        return list(map(function, *(c[bounds[k]:bounds[k + 1]] for c in columns)))

    return [x for part in _pool(threads).map(block, range(threads)) for x in part]
