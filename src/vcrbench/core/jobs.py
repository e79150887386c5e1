"""What every pipeline job does around its one library call: logging to the rule's log file,
thread limits, and a clear message for user errors.

This module never imports snakemake; workflow scripts pass it the log path and thread count.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Iterator

from vcrbench.errors import VcrbenchError


def set_threads(threads: int) -> None:
    """Limit torch and BLAS to ``threads`` threads (the rule's ``threads:``).

    torch is configured only when the job has imported it (plotting jobs never pay for it).
    """
    threads = max(1, int(threads))
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(threads)
    if "torch" not in sys.modules:
        return
    import torch

    torch.set_num_threads(threads)
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)


@contextlib.contextmanager
def job(log_path: str, threads: int = 1, name: str = "job") -> Iterator[logging.Logger]:
    """Run one pipeline job: log to ``log_path``, set threads, explain user errors.

    A :class:`VcrbenchError` is logged and printed as one clear line, then the job exits with
    status 1 so that Snakemake removes the job's (never complete) outputs.
    """
    os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
    handler = logging.FileHandler(log_path, mode="w", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logger = logging.getLogger(f"vcrbench.{name}")
    set_threads(threads)
    start = time.perf_counter()
    logger.info("start (threads=%d)", threads)
    try:
        yield logger
    except VcrbenchError as error:
        logger.error("%s", error)
        print(f"vcrbench error in {name}: {error}", file=sys.stderr)
        handler.flush()
        raise SystemExit(1) from None
    except Exception:
        logger.exception("unexpected failure")
        raise
    logger.info("done in %.1f s", time.perf_counter() - start)
    handler.flush()
