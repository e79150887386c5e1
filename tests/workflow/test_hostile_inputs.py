"""Hostile inputs at the workflow level: the user gets a clear message, never a hang, and no
output that looks complete is left behind.

``test_datasets.py`` checks the library's answers to bad image files one by one and
``test_config.py`` the config messages; here the same inputs go through ``snakemake`` on an
``imagefolder`` config made in ``tmp_path``, to check that the message reaches the console, that
the failed stage leaves no table, and that ``dataset.skip_unreadable`` skips and logs them while
grayscale, CMYK and 16-bit images go through corruption, VIF and a model.
"""

from __future__ import annotations

import os
import struct
import subprocess
import zlib
from io import BytesIO
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from helpers.workflow import REPO, snakemake, snakemake_command
from PIL import Image

from vcrbench.config import model_slug

pytestmark = pytest.mark.workflow

RUN = "hostile"
INDEX = f"results/{RUN}/data/index.parquet"
COLOUR_MODEL = f"file:{REPO / 'tests' / 'assets' / 'colour_model.py'}"
#: Generous: a stage on a handful of images takes seconds; a hang fails instead of blocking.
TIMEOUT_S = 300


def _photo(seed: int = 0, size: tuple[int, int] = (96, 80)) -> Image.Image:
    """A small RGB image with some structure (VIF of a flat image is degenerate)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0 : size[1], 0 : size[0]]
    base = np.stack([x * 2, y * 3, (x + y) * 1.5], axis=-1) % 256
    noise = rng.integers(0, 40, size=(size[1], size[0], 3))
    return Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8))


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` px, with no pixel data at all."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


def _truncated_jpeg() -> bytes:
    buffer = BytesIO()
    _photo(1).save(buffer, format="JPEG", quality=90)
    data = buffer.getvalue()
    return data[: len(data) // 2]


def _too_small() -> bytes:
    buffer = BytesIO()
    _photo(2, size=(20, 40)).save(buffer, format="PNG")
    return buffer.getvalue()


#: name -> (file name, bytes, text the error must contain besides the file name)
BAD_FILES = {
    "truncated-jpeg": ("n01440764_truncated.JPEG", _truncated_jpeg, "cannot read this image"),
    "zero-bytes": ("n01440764_empty.JPEG", lambda: b"", "cannot read this image"),
    "bomb-header": ("bomb.png", lambda: _png_header_only(20000, 20000), "decompression bomb"),
    "too-small": ("tiny.png", _too_small, "at least 32 px per side"),
}


def _write_good_images(folder: Path) -> list[str]:
    """RGB, grayscale, CMYK and 16-bit grayscale files; their image ids, sorted."""
    folder.mkdir(parents=True, exist_ok=True)
    _photo(3).save(folder / "n01440764_rgb.png")
    _photo(4).convert("L").save(folder / "gray.jpg", quality=95)
    _photo(5).convert("CMYK").save(folder / "cmyk.jpg", quality=95)
    gray16 = np.asarray(_photo(6).convert("L"), dtype=np.uint16) * 257
    Image.fromarray(gray16).save(folder / "gray16.png")
    for name, mode in [("gray.jpg", "L"), ("cmyk.jpg", "CMYK"), ("gray16.png", "I")]:
        with Image.open(folder / name) as image:
            assert image.mode.startswith(mode), (name, image.mode)
    return sorted(["n01440764_rgb", "gray", "cmyk", "gray16"])


def _configfile(tmp_path: Path, images: Path, **overrides) -> Path:
    config = {
        "run": RUN,
        "seed": 3,
        "dataset": {"source": "imagefolder", "path": str(images)},
        "corruptions": ["gaussian_noise"],
        "sampling": {"mode": "uniform", "n": 4, "shard_size": 4},
        "binning": {"bins": 2, "min_count": 1},
        "bootstrap": {"replicates": 2},
        "models": [COLOUR_MODEL],
        "device": "cpu",
        "figures": {"formats": ["png"]},
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _complete_looking_files(results: Path) -> list[str]:
    """Files under ``results`` other than logs and benchmarks (hidden temporaries included)."""
    if not results.exists():
        return []
    return sorted(
        str(p.relative_to(results))
        for p in results.rglob("*")
        if p.is_file() and not {"logs", "benchmarks"} & set(p.relative_to(results).parts)
    )


#: Every bad file type stops a run through the same path (the index job's VcrbenchError); two
#: representatives run here, the text for each type is checked by test_datasets.py and, in the
#: log, by the skip_unreadable test below.
@pytest.mark.parametrize("case", ["truncated-jpeg", "bomb-header"])
def test_bad_image_stops_the_index_with_a_clear_message(case, tmp_path):
    name, content, expected = BAD_FILES[case]
    images = tmp_path / "images"
    _write_good_images(images)
    (images / name).write_bytes(content())
    workdir = tmp_path / "work"
    result = snakemake(
        INDEX,
        "--cores",
        "1",
        "--configfile",
        str(_configfile(tmp_path, images)),
        workdir=workdir,
        timeout=TIMEOUT_S,
    )
    console = result.stdout + result.stderr
    assert result.returncode != 0, console[-3000:]
    message = next((line for line in console.splitlines() if "vcrbench error in index" in line), "")
    assert name in message and expected in message, console[-3000:]
    if expected == "cannot read this image":
        assert "dataset.skip_unreadable: true" in message, message
    results = workdir / "results" / RUN
    assert _complete_looking_files(results) == []
    log = (results / "logs" / "index.log").read_text()
    assert "ERROR" in log and name in log, log


def test_skip_unreadable_logs_bad_files_and_runs_odd_modes_through(tmp_path):
    images = tmp_path / "images"
    good = _write_good_images(images)
    for name, content, _ in BAD_FILES.values():
        (images / name).write_bytes(content())
    workdir = tmp_path / "work"
    slug = model_slug(COLOUR_MODEL)
    predictions = f"results/{RUN}/predictions/{slug}"
    result = snakemake(
        f"{predictions}/clean.parquet",
        f"{predictions}/gaussian_noise/shard-0.parquet",
        "--cores",
        "2",
        "--configfile",
        str(_configfile(tmp_path, images, dataset={"skip_unreadable": True})),
        workdir=workdir,
        timeout=TIMEOUT_S,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    results = workdir / "results" / RUN
    index = pq.read_table(results / "data" / "index.parquet")
    assert index.column("image_id").to_pylist() == good
    log = (results / "logs" / "index.log").read_text()
    skipped = [line for line in log.splitlines() if "skipped unreadable image" in line]
    assert len(skipped) == len(BAD_FILES), log
    for name, _, expected in BAD_FILES.values():
        assert any(name in line and expected in line for line in skipped), (name, log)
    assert f"{len(good)} images indexed, {len(BAD_FILES)} unreadable skipped" in log, log
    scored = pq.read_table(results / "scored" / "gaussian_noise" / "shard-0.parquet")
    dv = scored.column("dv").to_numpy()
    assert scored.num_rows == 4 and np.all((dv >= 0) & (dv <= 1)), dv
    assert pq.read_table(workdir / f"{predictions}/clean.parquet").num_rows == len(good)
    assert pq.read_table(workdir / f"{predictions}/gaussian_noise/shard-0.parquet").num_rows == 4


#: Type errors are all reported at once; model names are checked after the types are right.
WRONG_TYPES = {
    "sampling": {"n": "many"},
    "corruptions": {"gaussian_noise": 1},  # a name or a list of names (and sets), not a mapping
    "seed": 1.5,
    "figures": {"formats": "png"},
    "dataset": {"skip_unreadable": "maybe"},
}
WRONG_TYPE_MESSAGES = [
    "'sampling.n' must be of type integer, got 'many'",
    "'corruptions' must be of type array, got {'gaussian_noise': 1}",
    "'seed' must be of type integer, got 1.5",
    "'figures.formats' must be of type array, got 'png'",
    "'dataset.skip_unreadable' must be of type boolean, got 'maybe'",
]


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (WRONG_TYPES, WRONG_TYPE_MESSAGES),
        (
            {"models": ["efficientnet-lite0", "resnet-9000"]},
            [
                "models[1]: unknown model 'resnet-9000' (no '<kind>:' prefix); accepted forms:",
                "file:<path.py>",
            ],
        ),
    ],
    ids=["wrong-types", "unknown-model"],
)
def test_wrong_config_file_stops_before_any_job(override, expected, tmp_path):
    images = tmp_path / "images"
    _write_good_images(images)
    workdir = tmp_path / "work"
    configfile = _configfile(tmp_path, images, **override)
    result = snakemake("-n", "--configfile", str(configfile), workdir=workdir, timeout=TIMEOUT_S)
    console = result.stdout + result.stderr
    assert result.returncode != 0
    assert "invalid configuration" in console, console[-3000:]
    missing = [text for text in expected if text not in console]
    assert not missing, (missing, console[-3000:])
    assert not (workdir / "results").exists()


BROKEN_MODEL = '''
import torch


def build_model():
    """A user's mistake: a 10-class head instead of ImageNet's 1000 classes."""
    return torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                               torch.nn.Linear(3, 10))
'''


def test_model_that_breaks_at_run_time_names_the_problem_and_leaves_no_table(tmp_path):
    model_file = tmp_path / "ten_classes.py"
    model_file.write_text(BROKEN_MODEL)
    model = f"file:{model_file}"
    workdir = tmp_path / "work"
    target = f"results/{RUN}/predictions/{model_slug(model)}/clean.parquet"
    configfile = _configfile(
        tmp_path, tmp_path, dataset={"source": "builtin", "path": None, "limit": 2}, models=[model]
    )
    result = snakemake(
        target, "--cores", "1", "--configfile", str(configfile), workdir=workdir, timeout=TIMEOUT_S
    )
    console = result.stdout + result.stderr
    assert result.returncode != 0, console[-3000:]
    message = next((line for line in console.splitlines() if "vcrbench error in" in line), "")
    assert "predict_clean" in message and "(B, 1000)" in message, console[-3000:]
    assert "expected (B, 1000) logits, got" in message, message
    predictions = workdir / f"results/{RUN}/predictions"
    assert not predictions.exists() or not [p for p in predictions.rglob("*") if p.is_file()]


def test_missing_weights_stop_the_dry_run_naming_file_and_fetch(tmp_path):
    """Weights that need a download are named before any job, by the dry run (on a login
    node): the file to place and the command that fetches it."""
    images = tmp_path / "images"
    _write_good_images(images)
    workdir = tmp_path / "work"
    hub = tmp_path / "torch"
    configfile = _configfile(tmp_path, images, models=["torchvision:resnet18"])
    result = subprocess.run(
        snakemake_command("-n", "--configfile", str(configfile), workdir=workdir),
        cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S,
        env={**os.environ, "TORCH_HOME": str(hub)})
    console = result.stdout + result.stderr
    assert result.returncode != 0
    assert "model weights are missing (no job has run)" in console, console[-3000:]
    assert str(hub / "hub" / "checkpoints" / "resnet18-f37072fd.pth") in console
    assert "torchvision.models.get_model('resnet18', weights='IMAGENET1K_V1')" in console
    assert not (workdir / "results").exists()


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="needs a host without CUDA")
def test_cuda_asked_for_on_a_host_without_it_stops_before_any_job(tmp_path):
    """``device: cuda`` where torch sees no GPU: one message before the first job, nothing
    written (a dry run still plans it: a cluster's login node has no GPU either)."""
    images = tmp_path / "images"
    _write_good_images(images)
    workdir = tmp_path / "work"
    configfile = _configfile(tmp_path, images, device="cuda")
    planned = snakemake("-n", "--configfile", str(configfile), workdir=workdir,
                        timeout=TIMEOUT_S)
    assert planned.returncode == 0, (planned.stdout + planned.stderr)[-3000:]
    result = snakemake("--cores", "1", "--configfile", str(configfile), workdir=workdir,
                       timeout=TIMEOUT_S)
    console = result.stdout + result.stderr
    assert result.returncode != 0
    assert "device: cuda was asked for but torch sees no CUDA GPU" in console, console[-3000:]
    assert "no job was started" in console
    assert not (workdir / "results").exists()
