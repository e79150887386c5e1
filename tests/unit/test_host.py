"""The host check (torch / torchvision at start-up) and the wheelhouse's choice of wheels, on
fake resolver reports: no network, no pip."""

from __future__ import annotations

import json

import pytest

from vcrbench import cli, host
from vcrbench.errors import VcrbenchError

ENV = host.target_environment("3.12", "manylinux_2_28_x86_64")


def item(name: str, version: str, *requires: str, requested: bool = False) -> dict:
    """One entry of the ``install`` list of ``pip install --report``."""
    return {"metadata": {"name": name, "version": version, "requires_dist": list(requires)},
            "download_info": {"url": f"https://files.example/{name}-{version}.whl"},
            "requested": requested}


#: A small world shaped like the real one: the project needs snakemake, torch, numpy, timm and
#: a package with an extra; torch and matplotlib share jinja2 / packaging with snakemake.
REPORT = [
    item("vcrbench", "0.1.0", "snakemake==9.27.1", "torch==2.14.1", "numpy==2.4.6",
         "timm==1.0.31", "PyYAML==6.0.3", "fancy[fast]>=1", requested=True),
    item("snakemake", "9.27.1", "jinja2>=3", "packaging>=24", "connection_pool>=0.0.3",
         "tomli; python_version < '3.11'", "pywin32; sys_platform == 'win32'"),
    item("connection-pool", "0.0.3"),
    item("torch", "2.14.1", "jinja2", "sympy>=1.13", "filelock",
         "nvidia-cudnn-cu13==9.19.0.56; platform_system == 'Linux'",
         "opt-einsum>=3.3; extra == 'opt-einsum'"),
    item("torchvision", "0.29.1", "torch==2.14.1", "numpy", "pillow>=5.3"),
    item("timm", "1.0.31", "torch", "torchvision", "huggingface_hub", "pyyaml"),
    item("huggingface-hub", "1.0.0", "packaging>=20.9", "tqdm>=4.42", "filelock"),
    item("tqdm", "4.67.0", "colorama; platform_system == 'Windows'"),
    item("fancy", "1.2", "numpy", "speedup>=2; extra == 'fast'", "slowdown; extra == 'slow'"),
    item("speedup", "2.0", "packaging"),
    item("slowdown", "1.0"),
    item("jinja2", "3.1.6", "MarkupSafe>=2.0"),
    item("markupsafe", "3.0.4"),
    item("packaging", "25.0"),
    item("sympy", "1.14.0", "mpmath<1.4,>=1.1.0"),
    item("mpmath", "1.3.0"),
    item("filelock", "3.20.0"),
    item("nvidia-cudnn-cu13", "9.19.0.56"),
    item("numpy", "2.4.6"),
    item("PyYAML", "6.0.3"),
    item("pillow", "13.0.0"),
    item("matplotlib", "3.11.2", "packaging>=20.0", "pillow>=8", "numpy>=1.25"),
]


def test_the_host_packages_and_what_only_they_need_are_left_out():
    chosen = host.select(REPORT, "vcrbench", host.HOST_PACKAGES, ENV)
    # torch alone needs sympy, mpmath and the CUDA libraries: they stay with the host; snakemake,
    # timm and huggingface-hub need jinja2, packaging and filelock too: those travel, although
    # the host's torch and matplotlib bring their own copies (which may not fit)
    assert chosen["keep"] == ["connection-pool", "fancy", "filelock", "huggingface-hub",
                              "jinja2", "markupsafe", "packaging", "snakemake", "speedup", "timm",
                              "tqdm", "vcrbench"]
    assert chosen["left_out"] == ["numpy", "pillow", "pyyaml", "torch", "torchvision"]
    assert not {"sympy", "mpmath", "nvidia-cudnn-cu13", "pillow"} & set(chosen["keep"])
    # what the carried packages want of the host's copies, and who wants it; the project's own
    # exact pins are not requirements on the host (torch is checked apart)
    assert chosen["host_requirements"] == {
        "numpy": ["numpy (fancy)"], "pyyaml": ["pyyaml (timm)"], "torch": ["torch (timm)"],
        "torchvision": ["torchvision (timm)"]}


def test_a_package_the_host_lacks_travels_with_what_it_needs():
    # without torchvision and pillow on the host: timm's torchvision travels, with pillow
    chosen = host.select(REPORT, "vcrbench", ["torch", "numpy"], ENV)
    assert {"torchvision", "pillow", "pyyaml"} <= set(chosen["keep"])
    assert chosen["left_out"] == ["numpy", "torch"]
    assert chosen["host_requirements"]["torch"] == ["torch (timm)", "torch==2.14.1 (torchvision)"]


def test_nothing_excluded_keeps_everything_the_project_reaches():
    chosen = host.select(REPORT, "vcrbench", [], ENV)
    reached = {"vcrbench", "snakemake", "connection-pool", "torch", "torchvision", "timm",
               "huggingface-hub", "tqdm", "fancy", "speedup", "jinja2", "markupsafe",
               "packaging", "sympy", "mpmath", "filelock", "nvidia-cudnn-cu13", "numpy",
               "pyyaml", "pillow"}
    assert set(chosen["keep"]) == reached and chosen["left_out"] == []
    # the unrequested extra, the Windows-only and the old-Python requirements stay out
    assert not {"slowdown", "colorama", "pywin32", "tomli", "matplotlib"} & reached


def test_markers_follow_the_target_not_this_interpreter():
    old = host.target_environment("3.10", "manylinux_2_28_x86_64")
    world = [*REPORT, item("tomli", "2.0")]
    assert "tomli" in host.select(world, "vcrbench", [], old)["keep"]
    assert "tomli" not in host.select(world, "vcrbench", [], ENV)["keep"]
    arm = host.target_environment("3.12", "manylinux_2_17_aarch64")
    assert arm["platform_machine"] == "aarch64" and ENV["platform_machine"] == "x86_64"
    assert ENV["python_full_version"] == "3.12.0" and ENV["sys_platform"] == "linux"
    with pytest.raises(VcrbenchError, match="only Linux"):
        host.target_environment("3.12", "win_amd64")


def test_a_missing_project_is_an_error():
    with pytest.raises(VcrbenchError, match="not in the resolved set"):
        host.select(REPORT[1:], "vcrbench", [], ENV)


def test_compatible_platforms_go_down_to_the_oldest_glibc_with_the_legacy_names():
    tags = host.compatible_platforms("manylinux_2_28_x86_64")
    assert tags[0] == "manylinux_2_28_x86_64" and tags[-1] == "manylinux1_x86_64"
    assert tags.index("manylinux2014_x86_64") == tags.index("manylinux_2_17_x86_64") + 1
    assert "manylinux2010_x86_64" in tags and "manylinux_2_29_x86_64" not in tags
    arm = host.compatible_platforms("manylinux_2_17_aarch64")
    assert "manylinux2014_aarch64" in arm and "manylinux1_aarch64" not in arm
    assert host.compatible_platforms("musllinux_1_2_x86_64") == ["musllinux_1_2_x86_64"]


def test_the_requirement_pip_could_not_satisfy_is_read_from_its_error():
    # pip 26.3's words for an sdist-only package under --only-binary=:all:
    stderr = ("ERROR: Could not find a version that satisfies the requirement "
              "connection_pool>=0.0.3 (from snakemake) (from versions: 0.0.1, 0.0.2)\n"
              "ERROR: No matching distribution found for connection_pool>=0.0.3\n")
    assert host.unsatisfied_requirement(stderr) == "connection_pool>=0.0.3"
    nested = ("ERROR: Could not find a version that satisfies the requirement "
              "stopit (from snakemake) (from vcrbench==0.1.0) (from versions: none)")
    assert host.unsatisfied_requirement(nested) == "stopit"
    marker = "ERROR: No matching distribution found for nvidia-x==9.1; platform_system == 'Linux'"
    assert host.unsatisfied_requirement(marker) == "nvidia-x==9.1"
    assert host.unsatisfied_requirement("ERROR: network is unreachable") is None


def test_pure_wheels_are_told_from_compiled_ones():
    assert host.is_pure("connection_pool-0.0.3-py3-none-any.whl")
    assert not host.is_pure("matplotlib-3.11.2-cp311-cp311-manylinux2014_x86_64.whl")


# ----------------------------------------------------------------------------- version check


@pytest.mark.parametrize("torch, vision", [
    ("2.11.0+cu130", "0.26.0+cu130"),   # a cluster's CUDA build, the oldest supported
    ("2.14.1", "0.29.1"),                # the pins
    ("2.11.0a0+git4ab3c", "0.26.0a0"),   # a container's source build
    ("2.15.0", "0.30.0"),                # newer than tested
])
def test_supported_pairs_pass(torch, vision):
    assert host.check_torch({"torch": torch, "torchvision": vision}) == {
        "torch": torch, "torchvision": vision}


def test_an_old_torch_names_what_was_found_and_what_is_needed():
    with pytest.raises(VcrbenchError) as error:
        host.check_torch({"torch": "2.10.1+cu128", "torchvision": "0.25.0+cu128"})
    message = str(error.value)
    assert "torch 2.10.1+cu128 (needs >= 2.11)" in message
    assert "torchvision 0.25.0+cu128 (needs >= 0.26)" in message
    assert host.SKIP_CHECK in message


def test_a_missing_torchvision_is_named():
    with pytest.raises(VcrbenchError, match="torchvision not installed; vcrbench needs torch "
                       r">= 2.11, torchvision >= 0.26"):
        host.check_torch({"torch": "2.14.1", "torchvision": None})


def test_a_torchvision_built_for_another_torch_is_refused():
    with pytest.raises(VcrbenchError, match=r"torchvision 0.29.1 is not built for torch 2.11.0 "
                       r"\(torch 2.11 goes with torchvision 0.26\)"):
        host.check_torch({"torch": "2.11.0", "torchvision": "0.29.1"})


def test_the_installed_versions_are_read_and_the_check_can_be_skipped(monkeypatch):
    found = host.check_torch()
    assert set(found) == {"torch", "torchvision"}
    monkeypatch.setattr(host, "installed_version", lambda name: "0.1")
    with pytest.raises(VcrbenchError, match="torch 0.1"):
        host.check_torch()
    monkeypatch.setenv(host.SKIP_CHECK, "1")
    assert host.check_torch() == {}


def test_a_version_without_metadata_is_read_from_version_py(tmp_path, monkeypatch):
    package = tmp_path / "vcrbench_fake_torch"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('must not be imported')\n")
    (package / "version.py").write_text("__version__ = '2.11.0+cu130'\ngit_version = 'x'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert host.installed_version("vcrbench_fake_torch") == "2.11.0+cu130"
    assert host.installed_version("vcrbench_no_such_package") is None


def test_the_command_line_checks_torch_before_a_subcommand(monkeypatch, capsys):
    monkeypatch.setattr(host, "installed_version",
                        lambda name: {"torch": "2.9.1", "torchvision": "0.24.1"}[name])
    assert cli.main(["corruptions"]) == 2
    assert "torch 2.9.1 (needs >= 2.11)" in capsys.readouterr().err


def test_unmet_host_requirements_name_the_package_and_who_wants_it(monkeypatch):
    versions = {"packaging": "23.2", "jinja2": "3.1.6", "filelock": None}
    monkeypatch.setattr(host, "installed_version", versions.get)
    unmet = host.unmet_host_requirements({
        "packaging": ["packaging>=24 (snakemake)", "packaging>=20.9 (huggingface-hub)"],
        "jinja2": ["jinja2>=3 (snakemake)"],
        "filelock": [],
    })
    assert unmet == ["filelock: not installed (needed by the wheelhouse's packages)",
                     "packaging 23.2: packaging>=24 (snakemake) wants >=24"]


def test_check_host_reads_the_manifest(tmp_path, monkeypatch):
    with pytest.raises(VcrbenchError, match="wheelhouse.json is absent"):
        host.check_host(tmp_path)
    (tmp_path / host.MANIFEST).write_text(json.dumps(
        {"host_requirements": {"packaging": ["packaging>=99 (snakemake)"]}}))
    problems = host.check_host(tmp_path)
    assert len(problems) == 1 and problems[0].startswith("packaging ")
    assert "wants >=99" in problems[0]


def test_skipped_packages_and_what_only_they_need_stay_out():
    world = [{**REPORT[0], "metadata": {**REPORT[0]["metadata"], "requires_dist": [
        *REPORT[0]["metadata"]["requires_dist"], "openvino==2026.4.1", "imagecorruptions"]}},
        *REPORT[1:], item("openvino", "2026.4.1", "openvino-telemetry", "packaging"),
        item("openvino-telemetry", "2025.2.0"),
        item("imagecorruptions", "1.1.2", "opencv-python>=3.4.5", "numpy"),
        item("opencv-python", "5.0.0.93", "numpy")]
    chosen = host.select(world, "vcrbench", ["torch"], ENV, skip=["OpenVINO"])
    assert chosen["skipped"] == ["openvino"]
    assert not {"openvino", "openvino-telemetry"} & set(chosen["keep"])
    # imagecorruptions travels for its data, without opencv-python (only it needs that)
    assert "imagecorruptions" in chosen["keep"] and "opencv-python" not in chosen["keep"]
    assert "packaging" in chosen["keep"]    # snakemake needs it, not only openvino
    full = host.select(world, "vcrbench", ["torch"], ENV, skip=[], data_only=[])
    assert {"openvino", "openvino-telemetry", "opencv-python"} <= set(full["keep"])
    assert full["skipped"] == []


def test_the_check_command_says_how_to_fix_an_unmet_requirement(tmp_path, capsys):
    # what the first GPU host gave: its packaging newer than snakemake's declared range
    from vcrbench.cli import main

    (tmp_path / host.MANIFEST).write_text(json.dumps(
        {"host_requirements": {"packaging": ["packaging<1 (snakemake)"]}}))
    assert main(["wheelhouse", "--check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "wants <1" in err and "left out of --exclude" in err and "snakemake -n" in err
