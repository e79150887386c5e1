"""OpenCLIP models as zero-shot ImageNet-1k classifiers (optional package ``open_clip_torch``).

Names (see :data:`vcrbench.models.registry.MODEL_FORMS`)::

    openclip:<arch>/<tag>               e.g. openclip:ViT-B-32/openai
    openclip:<arch>?pretrained=<file>   e.g. openclip:ViT-B-32?pretrained=/data/b32.safetensors

``<arch>`` is an OpenCLIP architecture (``open_clip.list_models()``). ``<tag>`` is one of its
pretrained tags, whose weights are looked up in the local caches only (HF hub cache, then
``~/.cache/clip``; nothing is downloaded). ``<file>`` is a local checkpoint of that architecture
(``.safetensors``, or a ``torch.save`` state dict ``.pt``/``.pth``/``.bin``), absolute or
relative to the working folder; it must exist when the config is checked. A path holding ``&``
or ``?`` cannot be written this way (rename or link it).

Classifier: ``logits = exp(logit_scale) * normalise(encode_image(x)) @ T.T``, ``T`` the
(1000, D) L2-normalised text embeddings of the prompts ``"a picture of {class}"`` for OpenCLIP's
ImageNet class names (``open_clip.IMAGENET_CLASSNAMES``). Preprocessing: the model's image size;
a tag's mean/std and interpolation (OpenAI CLIP's and bicubic by default), a file's from its
architecture's config; the 224 crop is resized to the image size.

Text embeddings artifact: encoding the 1000 prompts takes over a minute of one core (ViT-B-32:
80 CPU seconds on an AMD EPYC, benchmarks/bench_openclip_embeddings.py), so the workflow does it
once per model and run (rule ``openclip_text_embeddings``) into
``<models_dir>/<model slug>/text-embeddings.parquet`` (:func:`write_text_embeddings`).
:func:`load_openclip` reads that file when it is there and refuses one made for another model,
prompt, class list or weights; without it (``vcrbench predict``) it encodes the prompts itself.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import torch

from vcrbench.errors import VcrbenchError
from vcrbench.models.preprocess import CLIP_MEAN, CLIP_STD, Preprocessing
from vcrbench.models.slugs import model_slug
from vcrbench.models.sources import (
    Loaded,
    _DownloadBlocked,
    _hf_cached,
    _hf_expected,
    _missing_dependency,
    missing_weights,
    no_downloads,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import pyarrow as pa

    from vcrbench.models.registry import ModelSpec

#: The zero-shot prompt of ``openclip:`` models.
OPENCLIP_PROMPT = "a picture of {}"
#: The text embeddings' file name inside ``<models_dir>/<model slug>/``.
TEXT_EMBEDDINGS_FILE = "text-embeddings.parquet"
#: Prompts encoded per forward pass of the text tower.
PROMPT_BATCH = 100
#: Largest |difference| allowed between a stored embedding and the same prompt encoded again.
SPOT_CHECK_ATOL = 1e-4
_METADATA_KEY = b"vcrbench.openclip.text_embeddings"


# --------------------------------------------------------------------------- names


def split_name(target: str, options: Mapping[str, str]) -> tuple[str, str | None, str | None]:
    """``(arch, tag, file)`` of a parsed ``openclip:`` name (exactly one of tag and file)."""
    arch, _, tag = target.partition("/")
    return arch, tag or None, options.get("pretrained")


def check_name(name: str, target: str, options: Mapping[str, str]) -> None:
    """Check an ``openclip:`` name's form, and that a local checkpoint exists (no import of
    open_clip: it is optional). Raises :class:`VcrbenchError` saying what to write instead."""
    arch, slash, tag = target.partition("/")
    file = options.get("pretrained")
    forms = (
        "openclip: needs <arch>/<tag> (e.g. openclip:ViT-B-32/openai) or "
        "<arch>?pretrained=<local checkpoint file>"
    )
    if not arch or "/" in tag or (slash and not tag) or (bool(tag) == bool(file)):
        raise VcrbenchError(f"model {name!r}: {forms}")
    if file is not None and not Path(file).expanduser().is_file():
        raise VcrbenchError(
            f"model {name!r}: the checkpoint {Path(file).expanduser()} does not exist "
            f"(relative paths start from the working folder {os.getcwd()}); pretrained tags "
            "are written openclip:<arch>/<tag>"
        )


def embeddings_path(models_dir: str | Path, name: str) -> Path:
    """Where the workflow keeps the text embeddings of model ``name``."""
    return Path(models_dir) / model_slug(name) / TEXT_EMBEDDINGS_FILE


# --------------------------------------------------------------------------- weights


def _import_open_clip():
    try:
        import open_clip
    except ImportError:
        raise _missing_dependency("openclip", "open_clip_torch") from None
    return open_clip


def _download_command(arch: str, tag: str) -> str:
    return (
        f"python -c \"import open_clip; open_clip.create_model_and_transforms('{arch}', "
        f"pretrained='{tag}'); open_clip.get_tokenizer('{arch}')\""
    )


def _tag_weights_file(arch: str, tag: str, cfg: dict) -> str:
    """Local file of a pretrained tag (HF cache, then ~/.cache/clip), else the error."""
    if cfg.get("file"):
        return str(cfg["file"])
    expected: list[str] = []
    if cfg.get("hf_hub"):
        repo_id, filename = os.path.split(cfg["hf_hub"])
        filename = filename or "open_clip_pytorch_model.bin"
        candidates = [filename]
        if filename == "open_clip_pytorch_model.bin":
            candidates.insert(0, "open_clip_model.safetensors")
        elif filename.endswith((".bin", ".pth")):
            candidates.insert(0, filename[:-4] + ".safetensors")
        found = _hf_cached(repo_id, candidates)
        if found:
            return found
        expected.append(_hf_expected(repo_id, " or ".join(candidates)))
    if cfg.get("url"):
        path = Path(os.path.expanduser("~/.cache/clip")) / os.path.basename(
            urlparse(cfg["url"]).path
        )
        if path.is_file():
            return str(path)
        expected.append(str(path))
    raise missing_weights(
        f"openclip:{arch}/{tag}", " or ".join(expected) or "?", _download_command(arch, tag)
    )


def weights_file(name: str, target: str, options: Mapping[str, str]) -> tuple[str, str, dict]:
    """``(path, command, cfg)`` of an ``openclip:`` name's weights: a tag's file in the local
    caches (else the missing-weights error) or the local checkpoint, the command that fetches
    it, and the tag's pretrained config (empty for a file). Reads no weights."""
    open_clip = _import_open_clip()
    arch, tag, file = split_name(target, options)
    if arch not in open_clip.list_models():
        raise VcrbenchError(
            f"{name}: OpenCLIP has no architecture {arch!r}; list them with "
            "python -c \"import open_clip; print(open_clip.list_models())\""
        )
    if tag is None:
        path = str(Path(file).expanduser())
        return path, f"(the checkpoint {path} is local; check that it is an {arch} state dict)", {}
    cfg = open_clip.get_pretrained_cfg(arch, tag)
    if not cfg:
        tags = open_clip.list_pretrained_tags_by_model(arch)
        raise VcrbenchError(
            f"{name}: OpenCLIP has no pretrained {tag!r} for {arch!r}; "
            f"known tags: {', '.join(tags) or 'none'}"
        )
    return _tag_weights_file(arch, tag, cfg), _download_command(arch, tag), cfg


def build_clip(name: str, target: str, options: Mapping[str, str]):
    """``(clip, tokenizer, preprocessing)`` of an ``openclip:`` name, on the CPU in eval mode."""
    open_clip = _import_open_clip()
    arch, tag, file = split_name(target, options)
    path, command, cfg = weights_file(name, target, options)
    try:
        with no_downloads():
            clip = open_clip.create_model(
                arch, pretrained=path, force_quick_gelu=bool(cfg.get("quick_gelu", False))
            ).eval()
            tokenizer = open_clip.get_tokenizer(arch)
    except _DownloadBlocked as blocked:
        raise missing_weights(name, blocked.target, command) from None
    except Exception as error:  # a config/tokenizer not in the HF cache, a wrong state dict
        raise VcrbenchError(
            f"{name}: loading failed ({type(error).__name__}: {error}); if a file was missing, "
            f"fetch it with:\n    {command}"
        ) from error
    model_cfg = open_clip.get_model_preprocess_cfg(clip)
    size = model_cfg.get("size", 224)
    size = int(size[0] if isinstance(size, (tuple, list)) else size)
    source = cfg if tag is not None else model_cfg
    interpolation = source.get("interpolation", "bicubic")
    interpolation = interpolation if interpolation in ("bilinear", "bicubic") else "bicubic"
    pre = Preprocessing(
        size,
        tuple(source.get("mean", CLIP_MEAN)),
        tuple(source.get("std", CLIP_STD)),
        interpolation,
    )
    return clip, tokenizer, pre


# --------------------------------------------------------------------------- text embeddings


def classnames() -> list[str]:
    """OpenCLIP's 1000 ImageNet class names, in ImageNet-1k index order."""
    return list(_import_open_clip().IMAGENET_CLASSNAMES)


def classnames_sha256(names: Sequence[str]) -> str:
    """sha256 of the class names joined by newlines (UTF-8)."""
    return hashlib.sha256("\n".join(names).encode()).hexdigest()


def encode_prompts(clip: torch.nn.Module, tokenizer, names: Sequence[str]) -> torch.Tensor:
    """(len(names), D) float32 L2-normalised text embeddings of :data:`OPENCLIP_PROMPT` per
    class name, encoded in batches of :data:`PROMPT_BATCH` on the CPU."""
    prompts = [OPENCLIP_PROMPT.format(c) for c in names]
    with torch.inference_mode():
        features = torch.cat([
            clip.encode_text(tokenizer(prompts[i : i + PROMPT_BATCH])).float()
            for i in range(0, len(prompts), PROMPT_BATCH)
        ])
        features = features / features.norm(dim=-1, keepdim=True)
    return features.clone()


def embeddings_table(name: str, features: torch.Tensor, names: Sequence[str]) -> pa.Table:
    """The artifact's table: ``class_index`` (int16), ``class_name`` (string), ``embedding``
    (fixed-size list of D float32), with the model, prompt and class names' sha256 in the
    schema metadata."""
    import pyarrow as pa

    values = features.detach().cpu().to(torch.float32).numpy()
    rows, dim = values.shape
    metadata = {
        "model": name,
        "prompt": OPENCLIP_PROMPT,
        "classnames_sha256": classnames_sha256(names),
        "dim": dim,
    }
    table = pa.table({
        "class_index": pa.array(range(rows), pa.int16()),
        "class_name": pa.array(list(names), pa.string()),
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), dim),
    })
    return table.replace_schema_metadata({_METADATA_KEY: json.dumps(metadata, sort_keys=True)})


def write_text_embeddings(spec: ModelSpec, path: str | Path) -> pa.Table:
    """Load the ``openclip:`` model ``spec`` (its parsed name,
    :func:`~vcrbench.models.registry.parse_model_name`: the registry validates names with
    this module, so this module does not parse them), encode its class prompts and write them
    to ``path`` (Parquet, atomically, byte-reproducible on one machine); returns the table."""
    from vcrbench.core.tables import write_table

    if spec.kind != "openclip":
        raise VcrbenchError(f"{spec.name}: text embeddings are made for openclip: models only")
    clip, tokenizer, _ = build_clip(spec.name, spec.target, spec.options)
    names = classnames()
    table = embeddings_table(spec.name, encode_prompts(clip, tokenizer, names), names)
    write_table(table, path)
    return table


def read_text_embeddings(path: str | Path, name: str, names: Sequence[str]) -> torch.Tensor:
    """The (len(names), D) float32 embeddings stored in ``path`` for model ``name``; raises
    :class:`VcrbenchError` when the file was made for another model, prompt or class list."""
    import numpy as np

    from vcrbench.core.tables import read_table

    table = read_table(path)
    raw = (table.schema.metadata or {}).get(_METADATA_KEY)
    if raw is None:
        raise VcrbenchError(f"{path}: not an OpenCLIP text embeddings file of vcrbench")
    made = json.loads(raw)
    wanted = {"model": name, "prompt": OPENCLIP_PROMPT,
              "classnames_sha256": classnames_sha256(names)}
    wrong = [f"{key} {made.get(key)!r} (expected {value!r})" for key, value in wanted.items()
             if made.get(key) != value]
    if wrong or table.num_rows != len(names):
        raise VcrbenchError(
            f"{path}: these text embeddings were made for another model or prompt: "
            + "; ".join(wrong or [f"{table.num_rows} classes (expected {len(names)})"])
            + ". Delete the file and re-run: the workflow makes it again."
        )
    column = table.column("embedding").combine_chunks()
    values = column.values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    return torch.from_numpy(values.reshape(table.num_rows, column.type.list_size).copy())


# --------------------------------------------------------------------------- classifier


class ZeroShotClassifier(torch.nn.Module):
    """CLIP image encoder + fixed text embeddings of the 1000 class prompts -> (B, 1000) logits.

    ``logits = exp(logit_scale) * normalise(image_features) @ text_features.T``.
    """

    def __init__(self, clip: torch.nn.Module, text_features: torch.Tensor) -> None:
        super().__init__()
        self.clip = clip
        self.register_buffer("text_features", text_features)
        self.register_buffer("scale", clip.logit_scale.detach().exp().reshape(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        image = self.clip.encode_image(x)
        image = image / image.norm(dim=-1, keepdim=True)
        return self.scale * image @ self.text_features.to(image.dtype).T


def load_openclip(
    name: str, target: str, options: Mapping[str, str], models_dir: str | Path | None = None
) -> Loaded:
    """An ``openclip:`` model (``name``, its parsed ``target`` and ``options``) as a zero-shot
    classifier: ``(module, preprocessing, description)``.

    With ``models_dir`` holding this model's text embeddings (:func:`embeddings_path`), they are
    read (and the first class's prompt is encoded again to check that they belong to these
    weights); otherwise the 1000 prompts are encoded here.
    """
    clip, tokenizer, pre = build_clip(name, target, options)
    names = classnames()
    stored = embeddings_path(models_dir, name) if models_dir is not None else None
    if stored is not None and stored.is_file():
        features = read_text_embeddings(stored, name, names)
        again = encode_prompts(clip, tokenizer, names[:1])
        if again.shape[1] != features.shape[1] or not torch.allclose(
            again[0], features[0], rtol=0, atol=SPOT_CHECK_ATOL
        ):
            raise VcrbenchError(
                f"{stored}: these text embeddings do not belong to the weights of {name} (its "
                f"first class's prompt encodes differently); the weights changed since they "
                "were made. Delete the file and re-run: the workflow makes it again."
            )
        text = f"text embeddings from {stored}"
    else:
        features = encode_prompts(clip, tokenizer, names)
        text = "prompts encoded at load"
    module = ZeroShotClassifier(clip, features).eval()
    prompt = OPENCLIP_PROMPT.format("{class}")
    return module, pre, f"{name}, zero-shot with prompt {prompt!r} ({text})"
