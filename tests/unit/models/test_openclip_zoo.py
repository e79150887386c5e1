"""OpenCLIP zero-shot models from a local checkpoint, and their text embeddings artifact
(offline: a tiny random OpenCLIP architecture registered for the tests)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.predictions import Inference, _loaded_model
from vcrbench.models import load_model, parse_model_name
from vcrbench.models.preprocess import CLIP_MEAN, CLIP_STD, Preprocessing, to_float_batch

open_clip = pytest.importorskip("open_clip")

from vcrbench.models import openclip_zoo  # noqa: E402

ARCH = "vcrbench-test-tiny-clip"
#: One transformer layer per tower, 32 wide, 24 tokens (the longest prompt has 17): encoding
#: the 1000 prompts takes a fraction of a second.
TINY_CONFIG = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16,
                   "head_width": 16},
    "text_cfg": {"context_length": 24, "vocab_size": 49408, "width": 32, "heads": 2,
                 "layers": 1},
}


@pytest.fixture(scope="module")
def tiny_arch(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The tiny architecture, registered with open_clip (for the whole test session)."""
    if ARCH not in open_clip.list_models():
        config = tmp_path_factory.mktemp("openclip-config") / f"{ARCH}.json"
        config.write_text(json.dumps(TINY_CONFIG))
        open_clip.add_model_config(config)
    return ARCH


def _save_weights(arch: str, path: Path, seed: int) -> Path:
    torch.manual_seed(seed)
    clip = open_clip.create_model(arch)
    with torch.no_grad():  # a logit scale unlike the initial one, to be sure it is loaded
        clip.logit_scale.fill_(float(np.log(30.0 + seed)))
    torch.save(clip.state_dict(), path)
    return path


@pytest.fixture
def checkpoint(tiny_arch: str, tmp_path: Path) -> Path:
    return _save_weights(tiny_arch, tmp_path / "tiny-clip.pt", seed=0)


def _name(checkpoint: Path) -> str:
    return f"openclip:{ARCH}?pretrained={checkpoint}"


def _images(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 224, 224, 3), dtype=np.uint8)


# --------------------------------------------------------------------------- names


def test_both_name_forms_parse(checkpoint: Path) -> None:
    spec = parse_model_name("openclip:ViT-B-32/openai")
    assert (spec.target, dict(spec.options)) == ("ViT-B-32/openai", {})
    spec = parse_model_name(_name(checkpoint))
    assert (spec.target, dict(spec.options)) == (ARCH, {"pretrained": str(checkpoint)})


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("openclip:ViT-B-32?pretrained=/no/such/checkpoint.pt", "does not exist"),
        ("openclip:ViT-B-32", "needs <arch>/<tag>"),
        ("openclip:ViT-B-32/", "needs <arch>/<tag>"),
        ("openclip:ViT-B-32/a/b", "needs <arch>/<tag>"),
        ("openclip:ViT-B-32/openai?pretrained={file}", "needs <arch>/<tag>"),
        ("openclip:ViT-B-32?weights={file}", "unknown option 'weights'"),
    ],
)
def test_bad_names_are_refused_when_parsed(name: str, message: str, checkpoint: Path) -> None:
    with pytest.raises(VcrbenchError, match=message):
        parse_model_name(name.format(file=checkpoint))


def test_an_unknown_architecture_is_named(checkpoint: Path) -> None:
    with pytest.raises(VcrbenchError, match="no architecture 'NoSuchNet'"):
        load_model(f"openclip:NoSuchNet?pretrained={checkpoint}")


# --------------------------------------------------------------------------- classifier


def test_local_checkpoint_gives_open_clips_zero_shot_logits(checkpoint: Path) -> None:
    model = load_model(_name(checkpoint))
    assert model.preprocessing == Preprocessing(32, CLIP_MEAN, CLIP_STD, "bicubic")
    assert "prompts encoded at load" in model.description
    x = model.preprocessing(to_float_batch(_images(3)))
    with torch.inference_mode():
        logits = model.module(x)
    # the reference: open_clip's own CLIP.forward on the same weights, prompts and images
    clip = open_clip.create_model(ARCH, pretrained=str(checkpoint)).eval()
    tokenizer = open_clip.get_tokenizer(ARCH)
    prompts = [f"a picture of {c}" for c in open_clip.IMAGENET_CLASSNAMES]
    with torch.inference_mode():
        image, text, scale = clip(x, tokenizer(prompts))
    assert float(scale) == pytest.approx(30.0)
    torch.testing.assert_close(logits, scale * image @ text.T, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- artifact


def test_stored_embeddings_equal_the_encoded_ones_and_are_reproducible(
    checkpoint: Path, tmp_path: Path
) -> None:
    name = _name(checkpoint)
    path = openclip_zoo.embeddings_path(tmp_path / "models", name)
    table = openclip_zoo.write_text_embeddings(parse_model_name(name), path)
    first = path.read_bytes()
    openclip_zoo.write_text_embeddings(parse_model_name(name), path)
    assert path.read_bytes() == first
    assert table.num_rows == 1000 and table.column("embedding").type.list_size == 16
    assert table.column("class_name").to_pylist() == list(open_clip.IMAGENET_CLASSNAMES)
    fresh = load_model(name)
    cached = load_model(name, models_dir=tmp_path / "models")
    assert f"text embeddings from {path}" in cached.description
    assert torch.equal(cached.module.text_features, fresh.module.text_features)
    x = fresh.preprocessing(to_float_batch(_images(2)))
    with torch.inference_mode():
        assert torch.equal(cached.module(x), fresh.module(x))


def test_a_prediction_job_reads_the_embeddings_instead_of_encoding_prompts(
    checkpoint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _name(checkpoint)
    models = tmp_path / "models"
    openclip_zoo.write_text_embeddings(parse_model_name(name),
                                       openclip_zoo.embeddings_path(models, name))
    inference = Inference.from_config(
        name, "cpu", {"batch_size": 4, "precision": "fp32", "engine": "eager"}, str(models)
    )
    encoded: list[int] = []
    encode_text = open_clip.model.CLIP.encode_text

    def counting(self, text, normalize=False):
        encoded.append(len(text))
        return encode_text(self, text, normalize=normalize)

    monkeypatch.setattr(open_clip.model.CLIP, "encode_text", counting)
    _loaded_model.cache_clear()
    try:
        images = _images(5)
        from_artifact = inference.decisions(images)
        assert encoded == [1]  # the check that the embeddings belong to these weights only
        _loaded_model.cache_clear()
        on_the_fly = Inference(name, "cpu", batch_size=4, engine="eager").decisions(images)
        assert sum(encoded) == 1 + 1000
    finally:
        _loaded_model.cache_clear()
    for column in ("top1", "top1_16", "p_top1"):
        assert from_artifact[column].equals(on_the_fly[column]), column


def test_embeddings_of_another_model_are_refused(
    tiny_arch: str, checkpoint: Path, tmp_path: Path
) -> None:
    other = _save_weights(tiny_arch, tmp_path / "other.pt", seed=1)
    models = tmp_path / "models"
    made = openclip_zoo.embeddings_path(models, _name(other))
    openclip_zoo.write_text_embeddings(parse_model_name(_name(other)), made)
    wanted = openclip_zoo.embeddings_path(models, _name(checkpoint))
    wanted.parent.mkdir(parents=True)
    made.rename(wanted)
    with pytest.raises(VcrbenchError, match=f"made for another model.*{re.escape(str(other))}"):
        load_model(_name(checkpoint), models_dir=models)


def test_embeddings_of_other_weights_under_the_same_name_are_refused(
    tiny_arch: str, checkpoint: Path, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    openclip_zoo.write_text_embeddings(parse_model_name(_name(checkpoint)),
                                       openclip_zoo.embeddings_path(models, _name(checkpoint)))
    _save_weights(tiny_arch, checkpoint, seed=2)  # the checkpoint replaced in place
    with pytest.raises(VcrbenchError, match="do not belong to the weights"):
        load_model(_name(checkpoint), models_dir=models)


def test_embeddings_of_another_prompt_are_refused(checkpoint: Path, tmp_path: Path) -> None:
    name = _name(checkpoint)
    path = openclip_zoo.embeddings_path(tmp_path / "models", name)
    table = openclip_zoo.write_text_embeddings(parse_model_name(name), path)
    key = next(iter(table.schema.metadata))
    metadata = json.loads(table.schema.metadata[key])
    from vcrbench.core.tables import write_table

    write_table(table.replace_schema_metadata(
        {key: json.dumps({**metadata, "prompt": "a photo of a {}."})}), path)
    with pytest.raises(VcrbenchError, match="prompt 'a photo of a {}.'"):
        load_model(name, models_dir=tmp_path / "models")


def test_only_openclip_models_have_text_embeddings(tmp_path: Path) -> None:
    with pytest.raises(VcrbenchError, match="openclip: models only"):
        openclip_zoo.write_text_embeddings(parse_model_name("efficientnet-lite0"),
                                           tmp_path / "x.parquet")
