"""Progress lines: about every interval, with rate and time left, and one at the end."""

from __future__ import annotations

import logging

from vcrbench.core.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_come_every_interval_and_at_the_end(caplog) -> None:
    clock = Clock()
    logger = logging.getLogger("test.progress")
    progress = Progress("score frost", 1000, "samples", interval=10, clock=clock, logger=logger)
    with caplog.at_level(logging.INFO, logger="test.progress"):
        for _ in range(50):  # 20 samples every 2 s: 100 s in all
            clock.now += 2.0
            progress.advance(20)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 10  # at 10, 20, …, 90 s, then the end at 100 s
    assert lines[0] == ("score frost: 100 / 1,000 samples (10.0 %), 10.0 samples/s, "
                        "about 1 min 30 s left")
    assert lines[-1] == ("score frost: 1,000 / 1,000 samples (100.0 %), 10.0 samples/s, "
                         "done in 1 min 40 s")


def test_a_fast_loop_logs_once_and_an_empty_one_never_divides_by_zero(caplog) -> None:
    clock = Clock()
    logger = logging.getLogger("test.progress")
    with caplog.at_level(logging.INFO, logger="test.progress"):
        progress = Progress("predict m", 64, "images", clock=clock, logger=logger)
        progress.advance(32)
        progress.advance(32)
        assert Progress("nothing", 0, clock=clock, logger=logger).line().endswith("done in 0 s")
    first_parts = [r.getMessage().split(",")[0] for r in caplog.records]
    assert first_parts == ["predict m: 64 / 64 images (100.0 %)"]
