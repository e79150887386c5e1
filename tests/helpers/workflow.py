"""Running Snakemake on the repository's workflow from tests."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers.paths import ASSETS, REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake_command(*args: str, workdir: Path | None = None) -> list[str]:
    """The command line :func:`snakemake` runs (for callers that need ``Popen`` or an env)."""
    command = [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), *args]
    if workdir is not None:
        command += ["--directory", str(workdir)]
    return command


def snakemake(
    *args: str, workdir: Path | None = None, timeout: int = 1200,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Run snakemake on the repository's Snakefile (in ``workdir`` when given; ``env`` for the
    process, default this one's)."""
    command = snakemake_command(*args, workdir=workdir)
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env=env)


def fetched_weights_env(folder: Path, *, torch_hub: tuple[str, ...] = (),
                        hugging_face: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """This process's environment with torch-hub and Hugging Face caches under ``folder`` that
    hold placeholder files where weights fetched on a login node would be: ``torch_hub``
    checkpoint names, ``hugging_face`` (repo id, file name) pairs. A dry run checks only that
    weight files exist (``vcrbench.models.weights``), never reads them."""
    hub = folder / "torch" / "hub" / "checkpoints"
    hub.mkdir(parents=True, exist_ok=True)
    for name in torch_hub:
        (hub / name).write_bytes(b"")
    for repo_id, filename in hugging_face:
        repo = folder / "hf" / "hub" / f"models--{repo_id.replace('/', '--')}"
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / "main").write_text("0" * 40)
        (repo / "snapshots" / ("0" * 40)).mkdir(parents=True, exist_ok=True)
        (repo / "snapshots" / ("0" * 40) / filename).write_bytes(b"")
    env = {**os.environ, "TORCH_HOME": str(folder / "torch"), "HF_HOME": str(folder / "hf")}
    env.pop("HF_HUB_CACHE", None)
    return env


# --------------------------------------------------------------------------- shared helpers

TEST_CONFIG = REPO / "config" / "test.yaml"
#: The configs (an overlay: two files, space-separated) that ``test_dry_run_of_every_config``
#: dry-runs; a documented command that is only one of these with ``--cores`` is that same run.
DRY_RUN_CONFIGS = (
    "config.yaml",
    "config/test.yaml",
    "config/imagenet.yaml",
    "config/imagenet-sample.yaml",
    "config/finetune-sample.yaml",
    "config/reva-sample.yaml",
    "config/cifar10.yaml",
    "config/test-cifar.yaml",
    "config/reva-cifar10.yaml",
    "config/reva-cifar10-paper.yaml",
    "config/control-vcr-retraining-cifar10.yaml",
    "config/control-noc-overlap-cifar10.yaml",
    "config/control-reva-weak-cifar10.yaml",
    "config/control-reva-weak-cifar10.yaml config/control-reva-unselected-cifar10.yaml",
)
#: A user's own ``file:`` model, evaluated next to EfficientNet-Lite0 in the tiny run. Its path
#: is relative to the run's working folder (:func:`tiny_workdir` copies it there), so the model's
#: name, and with it every keyed bootstrap of its curves, is the same wherever the checkout is.
USER_MODEL = "file:colour_model.py"
#: The tiny run's command-line arguments: config/test.yaml with the user's model added.
TINY_ARGS = ("--configfile", str(TEST_CONFIG), "--config",
             f"models=[efficientnet-lite0, {USER_MODEL}]")
#: Where the tiny config writes its results, relative to the working directory.
TINY_RESULTS = Path("results") / "tiny"
#: The final tables of a run whose bytes must not depend on how the run was executed.
TABLE_PATTERNS = ("*.parquet", "metrics/summary.csv", "metrics/summary.md")


def table_digests(results: Path, patterns: tuple[str, ...] = TABLE_PATTERNS) -> dict[str, str]:
    """sha256 of every file under ``results`` matching ``patterns``, by relative path."""
    files = {p for pattern in patterns for p in results.rglob(pattern) if p.is_file()}
    return {
        str(p.relative_to(results)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(files)
    }


def tiny_workdir(workdir: Path) -> Path:
    """Make ``workdir`` ready for a run with :data:`TINY_ARGS` (the user's model beside it)."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ASSETS / "colour_model.py", workdir / "colour_model.py")
    return workdir


def _prepare_tiny(workdir: Path) -> tuple[str, ...]:
    tiny_workdir(workdir)
    return ("--cores", "2", *TINY_ARGS)


def tiny_reference_run(base: Path) -> Path:
    """One uninterrupted local run of the tiny config (:data:`TINY_ARGS`) per test session,
    under :func:`reference_base` of ``base`` (``tmp_path_factory.getbasetemp()``); the
    ``tiny_run`` fixture.

    Every workflow test that needs a finished run (a second invocation, figures rebuilt from
    tables, a killed and resumed run, SLURM) shares this one run instead of paying for its own.
    """
    return _finished_run(base, "tiny-reference", "the local reference run of config/test.yaml")


# ------------------------------------------------------------- reference runs in the background

#: name -> how to make a reference run's folder ready (returns snakemake's arguments).
_PREPARE: dict[str, object] = {"tiny-reference": _prepare_tiny}
#: The longest a test waits for a reference run (s).
REFERENCE_TIMEOUT_S = 1800
#: Runs a command, then writes its exit status to the file named first (atomically); a watchdog
#: kills the run's process group when the pytest process named second is gone (a session killed
#: before it could stop its runs leaves none behind).
_RECORD_STATUS = (
    'status_file="$1"; owner="$2"; shift 2; '
    '( while kill -0 "$owner" 2>/dev/null; do sleep 2; done; kill -9 -$$ ) & '
    '"$@"; echo $? > "$status_file.part"; mv "$status_file.part" "$status_file"'
)


def _session_owner() -> int:
    """The pytest process whose end ends the session: the xdist controller (a worker's
    parent), else this process."""
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


def reference_base(base: Path) -> Path:
    """Where the session's reference runs live: ``base`` (the session's temporary folder), or
    under pytest-xdist the session's folder that its workers' folders (``popen-gw<N>``) share,
    so that the workers share each run instead of making their own."""
    if os.environ.get("PYTEST_XDIST_WORKER") and base.parent.name.startswith("pytest-"):
        return base.parent
    return base


def _files(base: Path, name: str) -> dict[str, Path]:
    shared = reference_base(base)
    return {key: shared / f"{name}{suffix}" for key, suffix in
            (("workdir", ""), ("console", ".console.txt"), ("lock", ".lock"),
             ("pid", ".pid"), ("status", ".status"))}


def start_reference_run(base: Path, name: str, *context) -> None:
    """Start the session's reference run ``name`` without waiting for it, unless this or
    another worker of the session started it (conftest.py starts the runs the collected tests
    need, so that they run while the unit tests do). The run writes its exit status to
    ``<name>.status`` when it ends."""
    files = _files(base, name)
    with files["lock"].open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if files["pid"].exists():
            return
        workdir = files["workdir"]
        if workdir.exists():
            shutil.rmtree(workdir)
        workdir.mkdir(parents=True)
        args = _PREPARE[name](workdir, *context)
        with files["console"].open("w") as handle:
            process = subprocess.Popen(
                ["sh", "-c", _RECORD_STATUS, "sh", str(files["status"]), str(_session_owner()),
                 *snakemake_command(*args, workdir=workdir)],
                cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
        files["pid"].write_text(str(process.pid))


def _finished_run(base: Path, name: str, what: str, *context) -> Path:
    """The folder of the finished reference run ``name``: started now if it was not, waited
    for, and an AssertionError with the end of its console when it failed."""
    start_reference_run(base, name, *context)
    files = _files(base, name)
    deadline = time.monotonic() + REFERENCE_TIMEOUT_S
    while not files["status"].exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} took over {REFERENCE_TIMEOUT_S} s")
        time.sleep(0.5)
        if not _alive(int(files["pid"].read_text())) and not files["status"].exists():
            raise AssertionError(f"{what} ended without an exit status (killed?):\n"
                                 + files["console"].read_text()[-10000:])
    if files["status"].read_text().strip() != "0":
        raise AssertionError(f"{what} failed:\n" + files["console"].read_text()[-10000:])
    return files["workdir"]


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return True


def stop_reference_runs(base: Path) -> None:
    """Kill the session's reference runs still running (a session that ends before it needed
    them), with their jobs. Only the process that ends the session does it (not an xdist
    worker: another worker may still need the run)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for pid_file in reference_base(base).glob("*.pid"):
        if pid_file.with_suffix(".status").exists():
            continue
        try:
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)
        except (ProcessLookupError, PermissionError, ValueError):
            pass


#: ``rule name:`` or ``use rule parent as name with:`` at column 0 of a rule file.
RULE_HEADER = re.compile(
    r"^(?:(?:rule|checkpoint)\s+(?P<name>\w+)\s*:"
    r"|use\s+rule\s+(?P<parent>\w+)\s+as\s+(?P<alias>\w+)(?:\s+with\s*:)?)",
    re.MULTILINE,
)


def rule_texts(folder: Path = REPO / "rules") -> dict[str, list[tuple[Path, str]]]:
    """Each rule of ``folder/*.smk`` as text: name -> [(file, body), (parent's file, body), ...].

    The first entry is the rule's own body (its indented directives); a rule made with
    ``use rule parent as name with:`` is followed by its parent's entries, so a directive it
    does not override is found further down the list. Read as text, without running Snakemake.
    """
    own: dict[str, tuple[Path, str, str | None]] = {}
    for path in sorted(folder.glob("*.smk")):
        text = path.read_text(encoding="utf-8")
        headers = list(RULE_HEADER.finditer(text))
        ends = [h.start() for h in headers[1:]] + [len(text)] if headers else []
        for header, stop in zip(headers, ends, strict=True):
            body = text[header.end() : stop]
            # The body ends at the first non-blank, non-comment line back at column 0.
            end = re.search(r"^[^\s#]", body, re.MULTILINE)
            name = header["name"] or header["alias"]
            if name in own:
                raise AssertionError(f"rule {name} is defined twice")
            own[name] = (path, body[: end.start()] if end else body, header["parent"])
    chains: dict[str, list[tuple[Path, str]]] = {}
    for name in own:
        chain, seen, current = [], set(), name
        while current is not None:
            if current not in own or current in seen:
                raise AssertionError(f"rule {name} derives from unknown rule {current}")
            seen.add(current)
            path, body, current = own[current]
            chain.append((path, body))
        chains[name] = chain
    return chains


#: The tiny CIFAR-10 config: the shared JPEG copy at 32 px, the fast network trained for two
#: epochs, two corruptions (config/test-cifar.yaml; its ../shared paths made absolute).
CIFAR_CONFIG = REPO / "config" / "test-cifar.yaml"
CIFAR_RESULTS = Path("results") / "tiny-cifar"


def cifar_config(shared_cifar: Path) -> dict:
    """config/test-cifar.yaml with its data folders under ``shared_cifar`` (absolute)."""
    import yaml

    config = yaml.safe_load(CIFAR_CONFIG.read_text())
    config["dataset"]["path"] = str(shared_cifar / "test")
    for entry in config["train"]:
        entry["data"]["path"] = str(shared_cifar / "train")
    return config


#: RobustBench CIFAR-10 entries evaluated in the tiny CIFAR run beside the model trained there,
#: from checkpoints written in the zoo's layout under the run's folder (model_dir relative to it,
#: so that the model strings, and every key derived from them, do not depend on the folder).
CIFAR_ZOO_DIR = "robustbench"


def cifar_zoo_models() -> list[str]:
    """The tiny CIFAR run's RobustBench model strings (one entry per leaderboard)."""
    from helpers.zoo_files import CIFAR10_ENTRIES, zoo_model_string

    return [zoo_model_string(name, dataset, threat, Path(CIFAR_ZOO_DIR))
            for name, dataset, threat, _ in CIFAR10_ENTRIES]


def _prepare_cifar(workdir: Path, shared_cifar: Path) -> tuple[str, ...]:
    import yaml

    from helpers.zoo_files import CIFAR10_ENTRIES, write_checkpoint

    for entry in CIFAR10_ENTRIES:
        write_checkpoint(workdir / CIFAR_ZOO_DIR, *entry)
    config = cifar_config(shared_cifar)
    config["models"] = [*config["models"], *cifar_zoo_models()]
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return ("--cores", "2", "--configfile", str(path))


_PREPARE["cifar-reference"] = _prepare_cifar


def cifar_reference_run(base: Path, shared_cifar: Path) -> Path:
    """One run of the tiny CIFAR config per test session (:func:`reference_base`); the
    ``cifar_run`` fixture (a working folder holding ``results/tiny-cifar``)."""
    return _finished_run(base, "cifar-reference", "the tiny CIFAR run", shared_cifar)


#: The tiny REVa config on the shared ImageNet sample (config/test-reva.yaml).
REVA_CONFIG = REPO / "config" / "test-reva.yaml"
REVA_RESULTS = Path("results") / "tiny-reva"


def reva_config_file(folder: Path, imagenet_sample: Path, **reva) -> Path:
    """config/test-reva.yaml written to ``folder/config.yaml`` with its data paths under
    ``imagenet_sample`` (absolute) and ``reva`` keys replaced."""
    import yaml

    config = yaml.safe_load(REVA_CONFIG.read_text())
    config["dataset"]["path"] = str(imagenet_sample)
    config["reva"]["train"]["path"] = str(imagenet_sample)
    config["reva"].update(reva)
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _prepare_reva(workdir: Path, imagenet_sample: Path) -> tuple[str, ...]:
    return ("--cores", "2", "--configfile", str(reva_config_file(workdir, imagenet_sample)))


_PREPARE["reva-reference"] = _prepare_reva


def reva_reference_run(base: Path, imagenet_sample: Path) -> Path:
    """One run of the tiny REVa config per test session (:func:`reference_base`), started with
    the session like the others; the ``reva_run`` fixture (a folder holding
    ``results/tiny-reva``)."""
    return _finished_run(base, "reva-reference", "the tiny REVa run", imagenet_sample)
