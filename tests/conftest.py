"""Fixtures shared by every test: the optional ../shared reference data and the one tiny run."""

from __future__ import annotations

import os

# Two test workers and the reference runs share the cores: OpenMP threads that spin while they
# wait slow each other down badly (the Snakefile sets the same for its jobs). Before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from helpers.paths import IMAGENET_SAMPLE, REPO, SHARED_DATA
from helpers.workflow import (
    cifar_reference_run,
    start_reference_run,
    stop_reference_runs,
    tiny_reference_run,
)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the reference runs the collected tests need (the ``tiny_run``, ``cifar_run`` and
    ``reva_run`` fixtures) in the background: they run while the tests before the first one
    that needs them do (the unit tests, which leave a core idle much of the time), and that
    test waits for them. Under pytest-xdist every worker collects the same tests; the first
    to get to a run starts it and the others share it (:func:`helpers.workflow.reference_base`).
    """
    if session.config.option.collectonly or not session.items:
        return
    needed = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    base = session.config._tmp_path_factory.getbasetemp()
    if "tiny_run" in needed:
        start_reference_run(base, "tiny-reference")
    if "cifar_run" in needed and (SHARED_DATA / "cifar10" / "test").is_dir():
        start_reference_run(base, "cifar-reference", SHARED_DATA / "cifar10")
    if "reva_run" in needed and IMAGENET_SAMPLE.is_dir():
        start_reference_run(base, "reva-reference", IMAGENET_SAMPLE)


def pytest_sessionfinish(session: pytest.Session) -> None:
    stop_reference_runs(session.config._tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def imagenet_sample() -> Path:
    if not IMAGENET_SAMPLE.is_dir():
        pytest.skip(f"{IMAGENET_SAMPLE} is absent (reference data lives in ../shared/data)")
    return IMAGENET_SAMPLE


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """The session's one finished run of the tiny config (:data:`helpers.workflow.TINY_ARGS`):
    a working folder holding ``results/tiny``. Read it; copy it before changing anything."""
    return tiny_reference_run(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def shared_cifar10() -> Path:
    """The shared JPEG copy of CIFAR-10 (``train/`` and ``test/`` class folders)."""
    folder = SHARED_DATA / "cifar10"
    if not (folder / "test").is_dir():
        pytest.skip(f"{folder} is absent (reference data lives in ../shared/data)")
    return folder


@pytest.fixture(scope="session")
def cifar_run(tmp_path_factory, shared_cifar10) -> Path:
    """The session's one finished run of the tiny CIFAR config
    (:func:`helpers.workflow.cifar_reference_run`): a working folder holding
    ``results/tiny-cifar``. Read it; copy it before changing anything."""
    return cifar_reference_run(tmp_path_factory.getbasetemp(), shared_cifar10)
