"""Progress of a long loop in the job's log: done / total, rate and time left, about every 10 s.

A user tailing a cluster job's log sees it move::

    score gaussian_noise: 1,536 / 50,000 samples (3.1 %), 153.2 samples/s, about 5 min 16 s left

:class:`Progress` logs when at least ``interval`` seconds passed since the last line (never on
every step, so it costs nothing in a tight loop) and once at the end with the total time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("vcrbench.progress")

#: Seconds between two progress lines.
DEFAULT_INTERVAL = 10.0


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


class Progress:
    """Counts the items of one loop and logs its progress (module docstring).

    Args:
        what: what the loop does, e.g. ``"score gaussian_noise"``.
        total: items the loop will process.
        unit: what an item is called (``"samples"``, ``"images"``).
        interval: seconds between two lines.
        clock: a monotonic clock in seconds (tests pass a fake one).
        logger: where the lines go.
    """

    def __init__(self, what: str, total: int, unit: str = "items", *,
                 interval: float = DEFAULT_INTERVAL,
                 clock: Callable[[], float] = time.monotonic,
                 logger: logging.Logger = log) -> None:
        self.what, self.total, self.unit = what, max(0, int(total)), unit
        self.interval, self.clock, self.logger = float(interval), clock, logger
        self.done = 0
        self.start = self.last = clock()

    def line(self) -> str:
        """The progress line for the items done so far."""
        elapsed = max(self.clock() - self.start, 1e-9)
        rate = self.done / elapsed
        share = 100.0 * self.done / self.total if self.total else 100.0
        text = (f"{self.what}: {self.done:,} / {self.total:,} {self.unit} ({share:.1f} %), "
                f"{rate:.1f} {self.unit}/s")
        if self.done >= self.total:
            return f"{text}, done in {_duration(elapsed)}"
        if rate > 0:
            text += f", about {_duration((self.total - self.done) / rate)} left"
        return text

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more items done; log a line if ``interval`` seconds passed, or at the
        end."""
        self.done += int(n)
        now = self.clock()
        if self.done >= self.total or now - self.last >= self.interval:
            self.logger.info(self.line())
            self.last = now
