"""The tiny run through a real one-node SLURM gives the same tables as a local run.

Starts munged, slurmctld and slurmd in a private folder (own munge key and socket, own
``slurm.conf`` with free ports, own spool and logs), so nothing in ``/etc`` is touched and a
SLURM already running on the machine is left alone; runs ``config/test.yaml`` with
``--executor slurm`` through ``tests/assets/slurm-profile``; compares the tables byte for byte
with a local run; stops the daemons it started. Skipped, with the reason, when not root or when
SLURM, munge or snakemake-executor-plugin-slurm are not installed (docs/cluster.md says how to
install them). Every command has a timeout, so a broken SLURM fails the test instead of hanging.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers.workflow import (
    REPO,
    TEST_CONFIG,
    TINY_ARGS,
    TINY_RESULTS,
    rule_texts,
    snakemake,
    snakemake_command,
    table_digests,
    tiny_workdir,
)

pytestmark = pytest.mark.workflow

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "sinfo", "srun", "scancel")
PLUGINS = ("snakemake_executor_plugin_slurm", "snakemake_executor_plugin_slurm_jobstep")
PROFILE = REPO / "tests" / "assets" / "slurm-profile"
CLUSTER_PROFILE = REPO / "profiles" / "slurm"
GPU_RESOURCE = re.compile(r"^\s+gpu\s*=", re.MULTILINE)
#: Daemons live in /usr/sbin, which a non-login PATH may lack.
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
#: The SLURM run of the tiny config takes ~6 min on 2 busy cores; this bounds a stuck one.
RUN_TIMEOUT_S = 1200


def _which(name: str) -> str | None:
    return shutil.which(name, path=SEARCH_PATH)


def _skip_reason() -> str | None:
    missing = [name for name in DAEMONS + CLIENTS if _which(name) is None]
    if missing:
        return (
            f"SLURM/munge not installed (missing: {', '.join(missing)}); as root: "
            "apt-get install -y slurm-wlm munge (see docs/cluster.md)"
        )
    if os.geteuid() != 0:
        return "needs root to start munged, slurmctld and slurmd"
    absent = [name for name in PLUGINS if importlib.util.find_spec(name) is None]
    if absent:
        return (
            f"{', '.join(absent)} not installed; pip install -e '.[test]' "
            "(snakemake-executor-plugin-slurm)"
        )
    return None


def _free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports that nothing listens on now."""
    probes = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def _output(command: list[str], env: dict[str, str], timeout: int) -> str:
    """Standard output of a SLURM client command (no check: the caller judges the text)."""
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=timeout
    ).stdout


def _run(command: list[str], env: dict[str, str], timeout: float = 30) -> str:
    """Run a SLURM/munge command; its output, or an AssertionError with what it printed."""
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}"
    return result.stdout


def _stop(pid_file: Path, name: str) -> None:
    """SIGTERM (then SIGKILL) the daemon whose pid ``pid_file`` holds, if it is still ``name``."""
    try:
        pid = int(pid_file.read_text().split()[0])
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError, IndexError):
        return  # never started, or already gone
    if comm != name:
        return  # the pid was reused by another program: leave it alone
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.2)
    if Path(f"/proc/{pid}").exists():
        os.kill(pid, signal.SIGKILL)


def _logs(folder: Path) -> str:
    return "\n".join(
        f"--- {p.name} (tail)\n" + "\n".join(p.read_text(errors="replace").splitlines()[-30:])
        for p in sorted(folder.glob("*.log"))
    )


def _slurm_conf(folder: Path, hostname: str, node_line: str, munge_socket: Path) -> str:
    controller_port, node_port = _free_ports(2)
    return f"""\
# Written by tests/workflow/test_slurm.py: a one-node cluster in {folder}
ClusterName=vcrbench-test
SlurmctldHost={hostname}
SlurmctldPort={controller_port}
SlurmdPort={node_port}
AuthType=auth/munge
AuthInfo=socket={munge_socket}
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmUser=root
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmdSpoolDir={folder}/spool/slurmd
StateSaveLocation={folder}/spool/slurmctld
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
{node_line} State=UNKNOWN
PartitionName=debug Nodes={hostname} Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def local_slurm() -> Iterator[dict[str, str]]:
    """A running one-node SLURM; yields the environment that submits to it."""
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    # A short path: the munge socket path must fit in a sockaddr_un (108 bytes).
    folder = Path(tempfile.mkdtemp(prefix="vcr-slurm-", dir="/tmp"))
    env = {**os.environ, "PATH": SEARCH_PATH}
    pid_files = [
        (folder / "slurmd.pid", "slurmd"),
        (folder / "slurmctld.pid", "slurmctld"),
        (folder / "munge" / "munged.pid", "munged"),
    ]
    try:
        (folder / "spool" / "slurmd").mkdir(parents=True)
        (folder / "spool" / "slurmctld").mkdir(parents=True)
        (folder / "munge").mkdir(mode=0o755)
        key = folder / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        munge_socket = folder / "munge" / "munge.socket.2"
        _run(
            [
                _which("munged"),
                "--force",
                f"--socket={munge_socket}",
                f"--key-file={key}",
                f"--pid-file={folder / 'munge' / 'munged.pid'}",
                f"--log-file={folder / 'munged.log'}",
                f"--seed-file={folder / 'munge' / 'munged.seed'}",
            ],
            env,
        )
        node_line = _run([_which("slurmd"), "-C"], env).splitlines()[0]
        assert node_line.startswith("NodeName="), node_line
        hostname = node_line.split()[0].removeprefix("NodeName=")
        conf = folder / "slurm.conf"
        conf.write_text(_slurm_conf(folder, hostname, node_line, munge_socket))
        env["SLURM_CONF"] = str(conf)
        # snakemake-executor-plugin-slurm-jobstep (0.6.1) removes SLURM_* variables, SLURM_CONF
        # included, before it calls srun inside a job; real clusters keep slurm.conf in /etc,
        # this one does not, so the jobs find srun through a wrapper that sets it again.
        shims = folder / "bin"
        shims.mkdir()
        srun = shims / "srun"
        srun.write_text(f'#!/bin/sh\nSLURM_CONF={conf} exec {_which("srun")} "$@"\n')
        srun.chmod(0o755)
        env["PATH"] = f"{shims}{os.pathsep}{env['PATH']}"
        _run([_which("slurmctld"), "-f", str(conf)], env)
        _run([_which("slurmd"), "-f", str(conf)], env)
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline:
            state = _output([_which("sinfo"), "-h", "-o", "%T"], env, 15).strip()
            if state == "idle":
                break
            time.sleep(1)
        assert state == "idle", f"the SLURM node is {state!r}, not idle:\n{_logs(folder)}"
        yield env
    finally:
        if (folder / "slurmctld.pid").exists():
            jobs = _output([_which("squeue"), "-h", "-o", "%i"], env, 30).split()
            if jobs:
                subprocess.run([_which("scancel"), *jobs], env=env, timeout=30, check=False)
        for pid_file, name in pid_files:
            _stop(pid_file, name)
        shutil.rmtree(folder, ignore_errors=True)


def test_tiny_run_on_slurm_matches_local_run(local_slurm, tiny_run, tmp_path):
    command = snakemake_command("--profile", str(PROFILE), *TINY_ARGS,
                                workdir=tiny_workdir(tmp_path))
    result = subprocess.run(
        command, cwd=REPO, env=local_slurm, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-8000:]
    submitted = output.count("has been submitted with SLURM jobid")
    assert submitted >= 20, f"only {submitted} jobs went through SLURM:\n{output[-4000:]}"

    results = tmp_path / TINY_RESULTS
    for name in ("metrics/summary.parquet", "metrics/summary.csv", "metrics/summary.md"):
        assert (results / name).stat().st_size > 0, name
    figures = sorted(p.relative_to(results) for p in (results / "figures").rglob("*.png"))
    reference_figures = sorted(
        p.relative_to(tiny_run / TINY_RESULTS)
        for p in (tiny_run / TINY_RESULTS / "figures").rglob("*.png")
    )
    assert figures and figures == reference_figures

    slurm_tables = table_digests(results)
    local_tables = table_digests(tiny_run / TINY_RESULTS)
    assert "metrics/summary.parquet" in local_tables
    differing = sorted(
        name
        for name in slurm_tables.keys() | local_tables.keys()
        if slurm_tables.get(name) != local_tables.get(name)
    )
    assert not differing, f"tables that differ between the SLURM and the local run: {differing}"


# --------------------------------------------------------------------------- profiles/slurm


def _cluster_partitions() -> tuple[str, dict[str, str]]:
    """(default partition, rule -> partition set for it) in profiles/slurm."""
    profile = yaml.safe_load((CLUSTER_PROFILE / "config.yaml").read_text(encoding="utf-8"))
    default = profile["default-resources"]["slurm_partition"]
    per_rule = {
        rule: resources["slurm_partition"]
        for rule, resources in (profile.get("set-resources") or {}).items()
        if "slurm_partition" in resources
    }
    return default, per_rule


def test_cluster_profile_sends_every_gpu_rule_to_another_partition():
    default, per_rule = _cluster_partitions()
    rules = rule_texts()
    gpu_rules = {
        name for name, chain in rules.items() if any(GPU_RESOURCE.search(b) for _, b in chain)
    }
    assert {"score", "predict_clean", "predict_shard"} <= gpu_rules, gpu_rules
    on_cpu = sorted(rule for rule in gpu_rules if per_rule.get(rule, default) == default)
    assert not on_cpu, f"GPU rules left on the CPU partition in profiles/slurm: {on_cpu}"
    unknown = sorted(set(per_rule) - set(rules))
    assert not unknown, f"profiles/slurm sets resources of rules that do not exist: {unknown}"


def test_cluster_profile_is_accepted_in_a_dry_run(tmp_path):
    absent = [name for name in PLUGINS if importlib.util.find_spec(name) is None]
    if absent:
        pytest.skip(f"{', '.join(absent)} not installed; pip install -e '.[test]'")
    default, per_rule = _cluster_partitions()
    result = snakemake(
        "-n",
        "--profile",
        str(CLUSTER_PROFILE),
        "--configfile",
        str(TEST_CONFIG),
        "--config",
        "device=cuda",
        workdir=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    jobs = re.findall(r"^(?:local)?rule (\w+):\n(?:.*\n)*?\s+resources: (.*)$", result.stdout, re.M)
    assert jobs, result.stdout[-4000:]
    for rule, resources in jobs:
        expected = per_rule.get(rule, default)
        assert f"slurm_partition={expected}" in resources, (rule, resources)
        if re.search(r"\bgpu=1\b", resources):
            assert expected != default, (rule, resources)
