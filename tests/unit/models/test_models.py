"""Model registry, loaders, preprocessing and inference (offline, small inputs)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vcrbench.errors import VcrbenchError
from vcrbench.models import (
    CATEGORIES16,
    MODEL_FORMS,
    LoadedModel,
    Preprocessing,
    format_predictions,
    known_model_kinds,
    load_model,
    parse_model_name,
    predict,
    predict_files,
    resolve_device,
)
from vcrbench.models.preprocess import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    TF_LITE_MEAN,
    TF_LITE_STD,
    to_float_batch,
)

TINY_MODEL = '''
import torch


class Tiny(torch.nn.Module):
    """(B, 3, H, W) -> (B, 1000): a linear map of the per-channel means."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 1000)

    def forward(self, x):
        return self.fc(x.mean(dim=(2, 3)))


def build_model():
    torch.manual_seed(0)
    return Tiny()


input_size = 32
mean = (0.5, 0.5, 0.5)
std = (0.25, 0.25, 0.25)
'''


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_model.py"
    path.write_text(TINY_MODEL)
    return path


def _images(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 224, 224, 3), dtype=np.uint8)


# --------------------------------------------------------------------------- names


def test_known_kinds_and_forms() -> None:
    assert known_model_kinds() == [
        "efficientnet-lite", "torchvision", "timm", "robustbench", "openclip", "file", "finetuned",
        "trained",
    ]  # fmt: skip
    assert len(MODEL_FORMS) == 8


@pytest.mark.parametrize(
    ("name", "kind", "target", "options"),
    [
        ("efficientnet-lite1", "efficientnet-lite", "1", {}),
        ("torchvision:resnet18?weights=none", "torchvision", "resnet18", {"weights": "none"}),
        (
            "torchvision:resnet50?weights=IMAGENET1K_V2",
            "torchvision",
            "resnet50",
            {"weights": "IMAGENET1K_V2"},
        ),
        (
            "timm:resnet18.a1_in1k?pretrained=False",
            "timm",
            "resnet18.a1_in1k",
            {"pretrained": "false"},
        ),
        (
            "robustbench:Standard?dataset=cifar10&threat=Linf",
            "robustbench",
            "Standard",
            {"dataset": "cifar10", "threat": "linf"},
        ),
        ("openclip:ViT-B-32/openai", "openclip", "ViT-B-32/openai", {}),
    ],
)
def test_parse_valid(name: str, kind: str, target: str, options: dict) -> None:
    spec = parse_model_name(name)
    assert (spec.kind, spec.target, dict(spec.options)) == (kind, target, options)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "resnet50",
        "efficientnet-lite3",
        "keras:resnet50",
        "torchvision:",
        "torchvision:nonet",
        "torchvision:resnet18?weights=bogus",
        "torchvision:resnet18?colour=red",
        "torchvision:resnet18?weights",
        "timm:not_a_model_at_all",
        "timm:resnet18.bogus_tag",
        "timm:resnet18?pretrained=maybe",
        "openclip:ViT-B-32",
        "file:missing_model.py",
        "file:README.md",
    ],
)
def test_parse_invalid(name: str) -> None:
    with pytest.raises(VcrbenchError):
        parse_model_name(name)


def test_unknown_kind_lists_accepted_forms() -> None:
    with pytest.raises(VcrbenchError) as error:
        parse_model_name("resnet50")
    for form in (
        "efficientnet-lite0",
        "torchvision:<arch>",
        "timm:<model>",
        "robustbench:",
        "openclip:<arch>/<pretrained>",
        "file:<path.py>",
    ):
        assert form in str(error.value)


# --------------------------------------------------------------------------- loaders


@pytest.mark.parametrize("variant,size", [("0", 224), ("1", 240), ("2", 260)])
def test_efficientnet_lite_loads(variant: str, size: int) -> None:
    model = load_model(f"efficientnet-lite{variant}")
    assert isinstance(model, LoadedModel) and not model.module.training
    assert model.preprocessing == Preprocessing(size, TF_LITE_MEAN, TF_LITE_STD, "bicubic")
    x = model.preprocessing(to_float_batch(_images(2)))
    assert x.shape == (2, 3, size, size)
    with torch.inference_mode():
        assert model.module(x).shape == (2, 1000)


def test_torchvision_without_weights() -> None:
    model = load_model("torchvision:resnet18?weights=none")
    assert model.preprocessing == Preprocessing(224, IMAGENET_MEAN, IMAGENET_STD, "bilinear")
    out = predict(model, _images(2), batch_size=2)
    assert out["top1"].shape == (2,)


def test_torchvision_missing_weights(offline_caches: Path) -> None:
    with pytest.raises(VcrbenchError) as error:
        load_model("torchvision:resnet18")
    message = str(error.value)
    expected = offline_caches / "torch" / "hub" / "checkpoints" / "resnet18-f37072fd.pth"
    assert str(expected) in message and "python -c" in message and "IMAGENET1K_V1" in message


def test_torchvision_cached_weights(offline_caches: Path) -> None:
    import torchvision

    folder = offline_caches / "torch" / "hub" / "checkpoints"
    folder.mkdir(parents=True)
    torch.manual_seed(0)
    state = torchvision.models.resnet18().state_dict()
    torch.save(state, folder / "resnet18-f37072fd.pth")
    model = load_model("torchvision:resnet18")
    assert "IMAGENET1K_V1" in model.description
    assert model.preprocessing == Preprocessing(224, IMAGENET_MEAN, IMAGENET_STD, "bilinear")
    torch.testing.assert_close(model.module.state_dict()["fc.weight"], state["fc.weight"])


def test_timm_without_weights() -> None:
    pytest.importorskip("timm")
    model = load_model("timm:resnet18?pretrained=false")
    assert model.preprocessing == Preprocessing(224, IMAGENET_MEAN, IMAGENET_STD, "bicubic")
    x = model.preprocessing(to_float_batch(_images(2)))
    with torch.inference_mode():
        assert model.module(x).shape == (2, 1000)


def test_timm_missing_weights(offline_caches: Path) -> None:
    pytest.importorskip("timm")
    with pytest.raises(VcrbenchError) as error:
        load_model("timm:resnet18.a1_in1k")
    message = str(error.value)
    assert str(offline_caches / "hf" / "hub" / "models--timm--resnet18.a1_in1k") in message
    assert "timm.create_model('resnet18.a1_in1k', pretrained=True)" in message


def test_timm_cached_weights(offline_caches: Path) -> None:
    timm = pytest.importorskip("timm")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    repo = offline_caches / "hf" / "hub" / "models--timm--resnet18.a1_in1k"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0" * 40)
    (repo / "snapshots" / ("0" * 40)).mkdir(parents=True)
    torch.manual_seed(1)
    state = timm.create_model("resnet18").state_dict()
    safetensors_torch.save_file(state, str(repo / "snapshots" / ("0" * 40) / "model.safetensors"))
    model = load_model("timm:resnet18.a1_in1k")
    assert model.preprocessing == Preprocessing(224, IMAGENET_MEAN, IMAGENET_STD, "bicubic")
    torch.testing.assert_close(model.module.state_dict()["fc.weight"], state["fc.weight"])


@pytest.mark.parametrize(
    ("name", "package", "module"),
    [
        ("openclip:ViT-B-32/openai", "open_clip_torch", "open_clip"),
    ],
)
def test_optional_sources_explain_missing_package(
    name: str, package: str, module: str, offline_caches: Path
) -> None:
    try:
        importlib.import_module(module)
        importable = True
    except ImportError:
        importable = False
    if importable:
        with pytest.raises(VcrbenchError, match="python -c"):  # installed: weights not cached
            load_model(name)
    else:
        with pytest.raises(VcrbenchError, match=f"pip install {package}"):
            load_model(name)


def test_file_model_end_to_end(tiny_file: Path) -> None:
    model = load_model(f"file:{tiny_file}")
    assert model.preprocessing == Preprocessing(32, (0.5,) * 3, (0.25,) * 3, "bilinear")
    images = _images(5)
    out = predict(model, images, batch_size=2)
    assert out["top1"].dtype == np.int16 and out["top1_16"].dtype == np.int8
    assert out["p_top1"].dtype == np.float32 and out["top1"].shape == (5,)
    assert ((0 <= out["top1"]) & (out["top1"] < 1000)).all()
    assert ((0 <= out["top1_16"]) & (out["top1_16"] < 16)).all()
    assert ((0 < out["p_top1"]) & (out["p_top1"] <= 1)).all()
    again = predict(model, images.transpose(0, 3, 1, 2), batch_size=5)  # NCHW, other batching
    np.testing.assert_array_equal(out["top1"], again["top1"])
    np.testing.assert_array_equal(out["top1_16"], again["top1_16"])
    np.testing.assert_allclose(out["p_top1"], again["p_top1"], rtol=1e-6)


def test_file_model_with_preprocess_and_errors(tmp_path: Path) -> None:
    custom = tmp_path / "custom.py"
    custom.write_text(
        "import torch\n"
        "model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LazyLinear(1000))\n"
        "def preprocess(x):\n"
        "    return torch.nn.functional.avg_pool2d(x, 56)\n"
    )
    model = load_model(f"file:{custom}")
    assert model.preprocessing.__name__ == "preprocess"
    assert predict(model, _images(3))["top1"].shape == (3,)

    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(VcrbenchError, match="build_model"):
        load_model(f"file:{empty}")
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(VcrbenchError, match="boom"):
        load_model(f"file:{broken}")
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "import torch\nmodel = torch.nn.Sequential(torch.nn.Flatten(), "
        "torch.nn.LazyLinear(10))\ndef preprocess(x):\n    return x[:, :, :4, :4]\n"
    )
    with pytest.raises(VcrbenchError, match=r"\(B, 1000\)"):
        predict(load_model(f"file:{wrong}"), _images(2))


# --------------------------------------------------------------------------- inference


def test_predict_is_deterministic_on_cpu() -> None:
    model = load_model("efficientnet-lite0")
    images = _images(3, seed=1)
    first = predict(model, images, batch_size=2)
    second = predict(model, images, batch_size=2)
    for key in ("top1", "top1_16", "p_top1"):
        assert first[key].tobytes() == second[key].tobytes()


def test_predict_rejects_bad_input(tiny_file: Path) -> None:
    model = load_model(f"file:{tiny_file}")
    with pytest.raises(VcrbenchError, match="bf16"):
        predict(model, _images(1), precision="bf16", device="cpu")
    with pytest.raises(VcrbenchError, match="precision"):
        predict(model, _images(1), precision="fp8")
    with pytest.raises(VcrbenchError, match="uint8"):
        predict(model, _images(1).astype(np.float32))
    with pytest.raises(VcrbenchError, match="channels"):
        predict(model, np.zeros((1, 224, 224, 4), np.uint8))


def test_a_batch_that_does_not_fit_runs_in_halves_with_the_same_results(
        tiny_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A device that runs out of memory above 3 images per forward pass: the batch of 8 is run
    in pieces of 2 (8 -> 4 -> 2), the later batches too, the predictions are those of batch
    size 2, the lowering is said once; one image that does not fit is a clear error."""
    from vcrbench.models.inference import FittingBatch

    model = load_model(f"file:{tiny_file}")
    images = _images(19, seed=3)
    sizes: list[int] = []
    forward = model.module.forward

    def small_device(x: torch.Tensor) -> torch.Tensor:
        sizes.append(len(x))
        if len(x) > 3:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return forward(x)

    model.module.forward = small_device
    lowered = predict(model, images, batch_size=8)
    model.module.forward = forward
    reference = predict(model, images, batch_size=2)
    for key in ("top1", "top1_16", "p_top1"):
        assert lowered[key].tobytes() == reference[key].tobytes()
    assert sizes == [8, 4, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1]  # batches of 8, 8 and 3
    err = capsys.readouterr().err
    assert err.count("does not fit in the memory of cpu; running batches of") == 2
    assert "inference.batch_size: 2" in err

    def no_memory(x: torch.Tensor) -> torch.Tensor:
        raise torch.OutOfMemoryError("CUDA out of memory (simulated)")

    with pytest.raises(VcrbenchError, match="does not fit in the memory of cpu even with one"):
        FittingBatch("m", torch.device("cpu"), 4).forward(no_memory, torch.zeros(4, 3))


def test_preprocessing() -> None:
    x = to_float_batch(_images(2))
    assert x.shape == (2, 3, 224, 224) and x.dtype == torch.float32 and float(x.max()) <= 1.0
    identity = Preprocessing(224, (0.0,) * 3, (1.0,) * 3)
    assert torch.equal(identity(x), x)
    assert Preprocessing(240, (0.5,) * 3, (0.5,) * 3, "bicubic")(x).shape == (2, 3, 240, 240)
    assert Preprocessing(160, (0.5,) * 3, (0.5,) * 3)(x).shape == (2, 3, 160, 160)
    with pytest.raises(VcrbenchError):
        Preprocessing(224, (0.5,) * 3, (0.5,) * 3, "lanczos")


def test_resolve_device() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    with pytest.raises(VcrbenchError):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(VcrbenchError, match="torch sees no CUDA GPU; set device: auto or cpu"):
            resolve_device("cuda")


def test_predict_files(tiny_file: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    paths = []
    for i, size in enumerate([(300, 260), (256, 400)]):
        path = tmp_path / f"image{i}.png"
        Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    records = predict_files(f"file:{tiny_file}", paths, device="cpu")
    assert [r["image"] for r in records] == [str(p) for p in paths]
    for record in records:
        assert record["wnid"].startswith("n") and record["category16"] in CATEGORIES16
        assert CATEGORIES16[record["top1_16"]] == record["category16"]
    assert json.loads(format_predictions(records, as_json=True)) == records
    text = format_predictions(records)
    assert text.count("\n") == 1 and "16-class:" in text
