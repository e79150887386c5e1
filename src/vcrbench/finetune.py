"""Fine-tuning a registry model, optionally with a corruption as augmentation (VCR paper §4.3,
supplementary §8.10; NOC paper §3.2), one epoch per call so that the workflow caches and resumes
per epoch.

One epoch ``e`` (1-based) of entry ``name``:

1. Order: a permutation of the training index keyed by ``(seed, name, e)``, cut into batches of
   ``batch_size`` (the last one may be smaller).
2. Augmentation: the first ``round(fraction · B)`` images of each batch (a random subset, since
   the order is random) are corrupted with their own parameters drawn over the corruption's
   whole domain (``linear``: U(C) as in the paper) and their own pixel-noise seed, both keyed by
   ``(seed, name, e, position in the epoch)``; the corrupted uint8 image is what the model sees.
3. Step: the base model's preprocessing, cross-entropy on the 1000 ImageNet logits, SGD with
   momentum (the paper: lr 0.001, momentum 0.9) at the epoch's learning rate (constant, cosine
   or step schedule, a function of ``e`` only).
4. What learns (``trainable``): the model's *units* are its top-level children, with a
   ``Sequential`` / ``ModuleList`` counted child by child (EfficientNet-Lite0: stem conv, stem BN,
   16 MBConv blocks, head conv, head BN, classifier); ``classifier`` is the last unit with
   parameters, ``last:k`` the last k such units, ``all`` everything. Frozen units run as in
   evaluation; trainable units run in training mode (dropout, drop-connect), with their
   batch-norm statistics frozen unless ``batchnorm: train``.

Randomness of dropout comes from torch's global generator, seeded per epoch from
``(seed, name, e)``, so an epoch computed after a restart equals the uninterrupted one. On the CPU
the result is bit-identical across runs with the same torch build and thread count.

Training log (one row per epoch, ``models/<name>/training-log.parquet``): ``epoch`` (int32),
``lr``, ``loss`` and ``accuracy`` over all training images of the epoch as they were seen
(float64), the same split into ``loss_clean`` / ``accuracy_clean`` and ``loss_corrupted`` /
``accuracy_corrupted`` (null when the epoch had no such image), ``n_images``, ``n_corrupted``
(int64). Accuracy is top-1 over 1000 classes, measured on each batch before its step.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.seeding import name_words, seed_of

LOG_SCHEMA = pa.schema(
    [
        ("epoch", pa.int32()),
        ("lr", pa.float64()),
        ("loss", pa.float64()),
        ("accuracy", pa.float64()),
        ("loss_clean", pa.float64()),
        ("accuracy_clean", pa.float64()),
        ("loss_corrupted", pa.float64()),
        ("accuracy_corrupted", pa.float64()),
        ("n_images", pa.int64()),
        ("n_corrupted", pa.int64()),
    ]
)
#: Keyed streams of one epoch (kept apart so that changing one never shifts another).
_ORDER, _PARAMETERS, _NOISE, _DROPOUT = range(4)


@dataclass(frozen=True)
class TrainingSpec:
    """The settings of one fine-tuning entry (config ``finetune[]``, defaults filled).

    Attributes:
        name: entry name (folder ``models/<name>``, model ``finetuned:<name>``).
        base: registry model name it starts from.
        corruption: augmentation corruption, or None for plain fine-tuning.
        fraction: share of each batch that is corrupted, in [0, 1].
        spacing: parameter spacing of the augmentation, ``linear`` (U(C)) or ``visual``.
        epochs, batch_size: passes over the data; images per step.
        trainable: ``all``, ``classifier`` or ``last:<k>``.
        batchnorm: ``frozen`` or ``train``.
        lr, momentum, weight_decay, nesterov: SGD settings.
        schedule, step_size, gamma: learning-rate schedule per epoch.
        seed: seed of every draw.
    """

    name: str
    base: str
    corruption: str | None
    fraction: float
    spacing: str
    epochs: int
    batch_size: int
    trainable: str
    batchnorm: str
    lr: float
    momentum: float
    weight_decay: float
    nesterov: bool
    schedule: str
    step_size: int
    gamma: float
    seed: int

    @classmethod
    def from_config(cls, entry: Mapping[str, Any], run_seed: int) -> TrainingSpec:
        """From a validated ``finetune`` entry; ``seed: null`` takes the run's seed."""
        augmentation, optimizer, schedule = (
            entry["augmentation"], entry["optimizer"], entry["schedule"]
        )
        return cls(
            name=entry["name"],
            base=entry["base"],
            corruption=augmentation["corruption"],
            fraction=float(augmentation["fraction"]),
            spacing=augmentation["spacing"],
            epochs=int(entry["epochs"]),
            batch_size=int(entry["batch_size"]),
            trainable=entry["trainable"],
            batchnorm=entry["batchnorm"],
            lr=float(optimizer["lr"]),
            momentum=float(optimizer["momentum"]),
            weight_decay=float(optimizer["weight_decay"]),
            nesterov=bool(optimizer["nesterov"]),
            schedule=schedule["kind"],
            step_size=int(schedule["step_size"]),
            gamma=float(schedule["gamma"]),
            seed=int(run_seed if entry["seed"] is None else entry["seed"]),
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ----------------------------------------------------------------------------- what learns


def model_units(module: torch.nn.Module) -> list[tuple[str, torch.nn.Module]]:
    """The units of a model that own parameters, in order (module docstring, step 4)."""
    units = []
    for name, child in module.named_children():
        if isinstance(child, torch.nn.Sequential | torch.nn.ModuleList):
            units += [(f"{name}.{sub}", block) for sub, block in child.named_children()]
        else:
            units.append((name, child))
    return [(name, unit) for name, unit in units if any(True for _ in unit.parameters())]


def trainable_unit_names(module: torch.nn.Module, trainable: str) -> list[str]:
    """Names of the units that learn under ``trainable`` (``all`` | ``classifier`` | ``last:k``)."""
    units = model_units(module)
    if trainable == "all":
        return [name for name, _ in units]
    count = 1 if trainable == "classifier" else int(trainable.partition(":")[2] or 0)
    if trainable not in ("classifier",) and not trainable.startswith("last:"):
        raise VcrbenchError(f"trainable {trainable!r} is not all, classifier or last:<k>")
    if not 1 <= count <= len(units):
        raise VcrbenchError(
            f"trainable {trainable!r}: the model has {len(units)} units with parameters "
            f"({', '.join(name for name, _ in units)}); use last:1 to last:{len(units)} or all"
        )
    return [name for name, _ in units[-count:]]


def set_training_mode(module: torch.nn.Module, spec: TrainingSpec) -> list[torch.nn.Parameter]:
    """Freeze and set modes as the spec says; returns the trainable parameters in model order."""
    learning = set(trainable_unit_names(module, spec.trainable))
    module.eval()
    for parameter in module.parameters():
        parameter.requires_grad_(False)
    for name, unit in model_units(module):
        if name not in learning:
            continue
        unit.train()
        for parameter in unit.parameters():
            parameter.requires_grad_(True)
        if spec.batchnorm == "frozen":
            for layer in unit.modules():
                if isinstance(layer, torch.nn.modules.batchnorm._BatchNorm):
                    layer.eval()
    return [p for p in module.parameters() if p.requires_grad]


def learning_rate(spec: TrainingSpec, epoch: int) -> float:
    """The learning rate of epoch ``epoch`` (1-based)."""
    if spec.schedule == "constant":
        return spec.lr
    if spec.schedule == "cosine":
        return spec.lr * 0.5 * (1.0 + math.cos(math.pi * (epoch - 1) / spec.epochs))
    if spec.schedule == "step":
        return spec.lr * spec.gamma ** ((epoch - 1) // spec.step_size)
    raise VcrbenchError(f"schedule {spec.schedule!r} is not constant, cosine or step")


# ----------------------------------------------------------------------------- keyed draws


def _epoch_key(spec: TrainingSpec, epoch: int, stream: int, *spawn: int) -> np.random.SeedSequence:
    entropy = [spec.seed & 0xFFFFFFFF, spec.seed >> 32, *name_words(f"finetune/{spec.name}")]
    return np.random.SeedSequence(entropy, spawn_key=(int(epoch), stream, *map(int, spawn)))


def epoch_batches(n_images: int, spec: TrainingSpec, epoch: int) -> list[np.ndarray]:
    """Index arrays of the epoch's batches (a keyed permutation of ``range(n_images)``)."""
    order = np.random.default_rng(_epoch_key(spec, epoch, _ORDER)).permutation(n_images)
    return [order[i : i + spec.batch_size] for i in range(0, n_images, spec.batch_size)]


def augmentation_draws(spec: TrainingSpec, epoch: int, positions: range
                       ) -> tuple[dict[str, np.ndarray], list[int]]:
    """Parameters (name -> (k,) float64) and pixel-noise seeds of the images at ``positions``
    (their places in the epoch's order) for the augmentation corruption."""
    from vcrbench.corruptions import get_corruption
    from vcrbench.corruptions.sampling import sample_parameters

    names = list(get_corruption(spec.corruption).parameters)
    points = [
        sample_parameters(
            spec.corruption, np.random.default_rng(_epoch_key(spec, epoch, _PARAMETERS, p)),
            spec.spacing,
        )
        for p in positions
    ]
    seeds = [seed_of(_epoch_key(spec, epoch, _NOISE, p)) for p in positions]
    params = {n: np.array([point[n] for point in points], np.float64) for n in names}
    return params, seeds


def corrupted_count(batch: int, fraction: float) -> int:
    """How many images of a batch of ``batch`` are corrupted: ``round(fraction · batch)``,
    half rounded up (so 0.5 of an odd batch corrupts the larger half)."""
    return min(batch, int(math.floor(fraction * batch + 0.5)))


# ----------------------------------------------------------------------------- data checks


def check_training_index(train: pa.Table, evaluation: pa.Table, name: str) -> None:
    """Refuse a training set with unlabelled images or any image of the evaluation set (same
    ``image_id`` or the same file)."""
    labels = np.asarray(train.column("label").to_numpy())
    unlabelled = int((labels < 0).sum())
    if unlabelled:
        example = train.column("image_id")[int(np.flatnonzero(labels < 0)[0])].as_py()
        raise VcrbenchError(
            f"finetune {name}: {unlabelled} of {train.num_rows} training images have no ImageNet "
            f"label (e.g. {example}); use a folder with WNID subfolders or '<WNID>_' file names"
        )
    shared = set(train.column("image_id").to_pylist()) & set(
        evaluation.column("image_id").to_pylist()
    )

    def files(table: pa.Table) -> set[str]:
        return {
            p if p.startswith("builtin:") else str(Path(p).resolve())
            for p in table.column("path").to_pylist()
        }

    same_files = files(train) & files(evaluation)
    if shared or same_files:
        examples = sorted(shared)[:3] or sorted(same_files)[:3]
        raise VcrbenchError(
            f"finetune {name}: the training images overlap the evaluation images "
            f"({len(shared)} shared image ids, {len(same_files)} shared files, e.g. "
            f"{', '.join(examples)}); training on evaluation images would inflate every metric. "
            "Use disjoint folders, or e.g. dataset.categories16_only with "
            "train.exclude_categories16"
        )


# ----------------------------------------------------------------------------- one epoch


def _optimizer(parameters: list[torch.nn.Parameter], spec: TrainingSpec, lr: float
               ) -> torch.optim.SGD:
    return torch.optim.SGD(
        parameters, lr=lr, momentum=spec.momentum, weight_decay=spec.weight_decay,
        nesterov=spec.nesterov and spec.momentum > 0,
    )


def train_epoch(
    spec: TrainingSpec,
    train_index: pa.Table,
    epoch: int,
    previous: dict[str, Any] | None,
    device: torch.device,
    log: Any = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train epoch ``epoch`` from the base model (epoch 1) or the ``previous`` epoch checkpoint.

    Returns ``(checkpoint, log_row)``: the checkpoint dict of :mod:`vcrbench.models.finetuned`
    with the optimiser state, and the epoch's row of the training log (:data:`LOG_SCHEMA`).
    """
    from vcrbench.datasets import load_images
    from vcrbench.models import load_model
    from vcrbench.models.finetuned import FORMAT, VERSION
    from vcrbench.models.preprocess import apply_preprocessing
    from vcrbench.scoring import corrupt_batch

    if (epoch == 1) != (previous is None):
        raise VcrbenchError(f"finetune {spec.name}: epoch {epoch} needs the checkpoint of "
                            f"epoch {epoch - 1}" if epoch > 1 else "epoch 1 starts from the base")
    if previous is not None and previous["spec"] != spec.as_dict():
        raise VcrbenchError(
            f"finetune {spec.name}: the checkpoint of epoch {epoch - 1} was trained with other "
            "settings; delete results/<run>/models/" + spec.name + " and re-run"
        )
    model = load_model(spec.base, device)
    module = model.module
    if previous is not None:
        module.load_state_dict(previous["state_dict"], strict=True)
    parameters = set_training_mode(module, spec)
    lr = learning_rate(spec, epoch)
    optimizer = _optimizer(parameters, spec, lr)
    if previous is not None:
        # a copy: the optimiser updates its state in place and the caller's dict must not change
        optimizer.load_state_dict(copy.deepcopy(previous["optimizer"]))
        for group in optimizer.param_groups:
            group["lr"] = lr
    if device.type == "cpu":
        module.to(memory_format=torch.channels_last)
    dropout_seed = int(_epoch_key(spec, epoch, _DROPOUT).generate_state(1, np.uint32)[0])
    torch.manual_seed(dropout_seed)

    paths = train_index.column("path").to_pylist()
    labels = np.asarray(train_index.column("label").to_numpy(), np.int64)
    sums = {"clean": [0.0, 0, 0], "corrupted": [0.0, 0, 0]}  # loss sum, correct, count
    position = 0
    batches = epoch_batches(len(paths), spec, epoch)
    for step, batch in enumerate(batches):
        images = load_images([paths[i] for i in batch])
        k = corrupted_count(len(batch), spec.fraction) if spec.corruption else 0
        if k:
            params, seeds = augmentation_draws(spec, epoch, range(position, position + k))
            images[:k] = corrupt_batch(spec.corruption, images[:k], params, np.array(seeds),
                                       device)
        x = torch.from_numpy(images).to(device).permute(0, 3, 1, 2).float().div_(255.0)
        x = apply_preprocessing(model.preprocessing, x).contiguous(
            memory_format=torch.channels_last
        )
        target = torch.from_numpy(labels[batch]).to(device)
        logits = module(x)
        losses = torch.nn.functional.cross_entropy(logits, target, reduction="none")
        optimizer.zero_grad(set_to_none=True)
        losses.mean().backward()
        optimizer.step()
        with torch.no_grad():
            correct = (logits.argmax(dim=1) == target).cpu().numpy()
            values = losses.detach().double().cpu().numpy()
        for part, rows in (("corrupted", slice(0, k)), ("clean", slice(k, None))):
            sums[part][0] += float(values[rows].sum())
            sums[part][1] += int(correct[rows].sum())
            sums[part][2] += len(values[rows])
        position += len(batch)
        if log is not None and (step + 1) % 10 == 0:
            log.info("epoch %d: step %d of %d, mean loss so far %.4f", epoch, step + 1,
                     len(batches), (sums["clean"][0] + sums["corrupted"][0]) / position)

    def ratio(a: float, b: int) -> float | None:
        return a / b if b else None

    total = [sums["clean"][i] + sums["corrupted"][i] for i in range(3)]
    row = {
        "epoch": epoch,
        "lr": lr,
        "loss": ratio(total[0], total[2]),
        "accuracy": ratio(total[1], total[2]),
        "loss_clean": ratio(*sums["clean"][0::2]),
        "accuracy_clean": ratio(*sums["clean"][1:]),
        "loss_corrupted": ratio(*sums["corrupted"][0::2]),
        "accuracy_corrupted": ratio(*sums["corrupted"][1:]),
        "n_images": total[2],
        "n_corrupted": sums["corrupted"][2],
    }
    module.to(memory_format=torch.contiguous_format)
    checkpoint = {
        "format": FORMAT,
        "version": VERSION,
        "name": spec.name,
        "base": spec.base,
        "spec": spec.as_dict(),
        "epoch": epoch,
        "state_dict": {k: v.detach().cpu().clone() for k, v in module.state_dict().items()},
        "optimizer": _cpu(optimizer.state_dict()),
    }
    return checkpoint, row


def _cpu(value: Any) -> Any:
    """A (nested) optimiser state with every tensor on the CPU."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, dict):
        return {k: _cpu(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_cpu(v) for v in value)
    return value


def final_checkpoint(last_epoch: dict[str, Any]) -> dict[str, Any]:
    """The model checkpoint of the last epoch without its optimiser state."""
    return {key: value for key, value in last_epoch.items() if key != "optimizer"}


def training_log(rows: list[dict[str, Any]]) -> pa.Table:
    """The training log table (:data:`LOG_SCHEMA`) from the epoch rows, by epoch."""
    rows = sorted(rows, key=lambda row: row["epoch"])
    return pa.Table.from_pylist(rows, schema=LOG_SCHEMA)


def save_checkpoint(checkpoint: dict[str, Any], path: str | Path) -> None:
    """Write a checkpoint atomically (a partial file is never left under its final name)."""
    from vcrbench.tables import atomic_path, replace_atomically

    tmp = atomic_path(path)
    torch.save(checkpoint, tmp)
    replace_atomically(tmp, path)
