"""The vcrbench command line: listing, corrupting, VIF, prediction, config checks."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
from helpers.paths import REPO
from PIL import Image

from vcrbench.cli import main
from vcrbench.corruptions import CORRUPTIONS
from vcrbench.data.datasets import prepare_image


def _write_photo(path):
    Image.fromarray(prepare_image("builtin:skimage:chelsea.png")).save(path)
    return path


def test_corruptions_json_lists_every_corruption_and_its_sets(capsys):
    assert main(["corruptions", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in entries] == list(CORRUPTIONS)
    sets = {e["name"]: e["sets"] for e in entries}
    assert sets["frost"] == ["vcr", "imagenet-c"] and sets["noc_rain"] == [
        "noc-candidates", "imagenet-noc"]
    for entry in entries:
        assert entry["parameters"] and entry["visual_class"] and entry["source"]
    glass = next(e for e in entries if e["name"] == "glass_blur")
    spec = CORRUPTIONS["glass_blur"]
    assert glass["visual_coupling"] == spec.coupling
    for param, described in glass["parameters"].items():
        assert (described["low"], described["high"]) == spec.parameters[param]
        assert described["clean"] == spec.identity[param]
        assert described["visual_log_floor"] == spec.spacing.get(param)
        if param not in spec.spacing:
            assert described["visual_power"] is None


def test_corruptions_lists_cifar_c_severities_next_to_imagenet_cs(capsys):
    """JSON: each entry's CIFAR-10-C severities are the registry's table (null without one);
    text: each table under its corruption, a parameter's five values on one line."""
    from vcrbench.corruptions.cifar_c import CIFAR_C_SEVERITIES, cifar_c_severities

    assert main(["corruptions", "--json"]) == 0
    entries = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    assert {n for n, e in entries.items() if e["cifar_c_severities"] is not None} == set(
        CIFAR_C_SEVERITIES)
    assert entries["motion_blur"]["cifar_c_severities"] == list(cifar_c_severities("motion_blur"))
    assert entries["motion_blur"]["cifar_c_severities"][0] == {"radius": 6, "sigma": 1}
    assert entries["uniform_noise"]["cifar_c_severities"] is None
    assert main(["corruptions"]) == 0
    text = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(text) if line.startswith("motion_blur "))
    assert text[at + 1:at + 3] == [
        "    ImageNet-C severities 1–5: radius 10, 15, 15, 15, 20; sigma 3, 5, 8, 12, 15",
        "    CIFAR-10-C severities 1–5: radius 6, 6, 6, 8, 9; sigma 1, 1.5, 2, 2, 2.5"]
    assert all(len(line) <= 100 for line in text if line.startswith("    "))
    snow = next(i for i, line in enumerate(text) if line.startswith("snow "))
    end = next(i for i in range(snow + 1, len(text)) if not text[i].startswith(" "))
    cifar_snow = " ".join(text[snow + 1:end]).split("CIFAR-10-C severities 1–5:")[1]
    assert "layer_std 0.2, 0.2, 0.3, 0.3, 0.3" in cifar_snow  # a setting of its points too
    zoom = next(i for i, line in enumerate(text) if line.startswith("zoom_blur "))
    assert text[zoom + 2] == ("    CIFAR-10-C severities 1–5: zoom 1.06, 1.11, 1.15, 1.2, 1.25; "
                              "cifar_factors 1, –, –, 1, 1")  # given at some severities only


def test_corrupt_is_reproducible_and_prints_parameters(tmp_path, capsys):
    source = _write_photo(tmp_path / "cat.png")
    for name in ("a.png", "b.png"):
        assert (
            main(["corrupt", "gaussian_noise", str(source), str(tmp_path / name), "--seed", "5"])
            == 0
        )
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed[0]["parameters"] == printed[1]["parameters"]
    a = np.asarray(Image.open(tmp_path / "a.png"))
    assert np.array_equal(a, np.asarray(Image.open(tmp_path / "b.png")))
    assert not np.array_equal(a, np.asarray(Image.open(source)))


def test_corrupt_rejects_unknown_names_and_out_of_domain(tmp_path, capsys):
    source = _write_photo(tmp_path / "cat.png")
    assert main(["corrupt", "glas_blur", str(source), str(tmp_path / "x.png")]) == 2
    assert "glas_blur" in capsys.readouterr().err
    assert (
        main(
            [
                "corrupt",
                "gaussian_noise",
                str(source),
                str(tmp_path / "x.png"),
                "--param",
                "sigma=-4",
            ]
        )
        == 2
    )
    assert not (tmp_path / "x.png").exists()


def test_vif_of_identical_pair_is_one(tmp_path, capsys):
    source = _write_photo(tmp_path / "cat.png")
    assert main(["vif", str(source), str(source), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result[0]["vif"] == 1.0 and result[0]["dv"] == 0.0


def test_check_config_reports_the_key(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("sampling: {n: 0}\n")
    assert main(["check-config", str(bad)]) == 2
    assert "'sampling.n' must be at least 1" in capsys.readouterr().err


def test_console_script_predicts(tmp_path):
    source = _write_photo(tmp_path / "cat.png")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "vcrbench.cli",
            "predict",
            "--model",
            "efficientnet-lite0",
            "--device",
            "cpu",
            str(source),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    prediction = json.loads(result.stdout)[0]
    assert prediction["category16"] == "cat"
