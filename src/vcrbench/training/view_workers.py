"""AugMix views of the training batches made ahead of the training step, in worker processes.

The two AugMix views of a batch (:class:`~vcrbench.training.views.AugMixViews`) are
a few hundred small tensor operations and, for REVa, numpy corruptions. Made on a GPU they leave
the training step bound by kernel launches and host work: on one H200, an AugMix epoch of
AllConvNet took 50 to 84 s against 6 s for a standard one (four trainings sharing the
GPU), and a REVa epoch 219 s (docs/cifar.md).
:class:`ViewWorkers` makes them on the CPU in worker processes, a window of batches ahead of the
step, exactly as a CPU training makes them (the same function on the same cropped and flipped
uint8 images), so the views are byte for byte those of a training without workers on the CPU,
at any number of workers.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

import numpy as np
import torch

from vcrbench.training.views import AugMixViews


def _start_worker() -> None:
    torch.set_num_threads(1)


def _views(make_views: AugMixViews, batch: np.ndarray, start: int) -> list[np.ndarray]:
    """The two views of ``batch`` ((B, H, W, 3) uint8 at epoch positions ``start`` ...)."""
    views = make_views(torch.from_numpy(batch), range(start, start + len(batch)))
    return [v.numpy() for v in views]


def view_worker_count(setting: int | str, threads: int, device_type: str) -> int:
    """Workers of a job with ``threads`` threads (config ``threads.train_views``): ``auto`` is
    ``threads - 1`` (at least 1) on a GPU and 0 on the CPU; a number is taken as it is."""
    if setting == "auto":
        return max(1, threads - 1) if device_type == "cuda" else 0
    return int(setting)


class ViewWorkers:
    """A pool of ``workers`` processes (spawned, one torch thread each) making AugMix views.

    Use as a context manager (the processes end with it); one pool serves every epoch.
    ``ahead``: batches in flight (default twice the workers). Spawned workers import the
    calling program's main module again (as ``__mp_main__``): a script that creates the pool
    must keep its work under ``if __name__ == "__main__":``.
    """

    def __init__(self, workers: int, ahead: int | None = None) -> None:
        if workers < 1:
            raise ValueError(f"view workers must be at least 1, not {workers}")
        self.workers = workers
        self.ahead = ahead or 2 * workers
        self._pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_start_worker)

    def __enter__(self) -> ViewWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)

    def stream(self, make_views: AugMixViews, batches: Iterable[tuple[torch.Tensor, int]]
               ) -> Iterator[list[torch.Tensor]]:
        """The views made by ``make_views`` (an epoch's maker, :func:`~vcrbench.training.
        scratch.augmix_maker`) of each ``(batch, start)`` in order: ``batch`` (B, H, W, 3)
        uint8 on the CPU, ``start`` its first position in the epoch's order; yields two
        (B, H, W, 3) uint8 CPU tensors per batch, keeping ``ahead`` batches in flight."""
        pending: deque[Future] = deque()
        source = iter(batches)

        def fill() -> None:
            while len(pending) < self.ahead:
                item = next(source, None)
                if item is None:
                    return
                batch, start = item
                pending.append(self._pool.submit(_views, make_views, batch.numpy(), start))

        fill()
        while pending:
            views = pending.popleft().result()
            fill()
            yield [torch.from_numpy(v) for v in views]
