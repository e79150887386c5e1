"""The training images of a fine-tuning entry: labelled, and none of them an evaluation image."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from vcrbench.errors import VcrbenchError


def check_training_index(train: pa.Table, evaluation: pa.Table, name: str, *,
                         section: str = "finetune", compare_ids: bool = True) -> None:
    """Refuse a training set with unlabelled images or any image of the evaluation set (same
    ``image_id`` or the same file; ``compare_ids`` False: the same file only, for class folders
    whose ids repeat across splits, e.g. ``airplane/0000`` in CIFAR's train and test folders).
    ``section`` names the config section in messages (``finetune``, ``train``)."""
    labels = np.asarray(train.column("label").to_numpy())
    unlabelled = int((labels < 0).sum())
    if unlabelled:
        example = train.column("image_id")[int(np.flatnonzero(labels < 0)[0])].as_py()
        raise VcrbenchError(
            f"{section} {name}: {unlabelled} of {train.num_rows} training images have no label "
            f"(e.g. {example}); use labelled images (ImageNet: WNID subfolders or '<WNID>_' file "
            "names; CIFAR: a CIFAR source or class folders with classes: cifar10)"
        )
    shared = set(train.column("image_id").to_pylist()) & set(
        evaluation.column("image_id").to_pylist()
    ) if compare_ids else set()

    def files(table: pa.Table) -> set[str]:
        return {
            p if p.startswith("builtin:") else str(Path(p).resolve())
            for p in table.column("path").to_pylist()
        }

    same_files = files(train) & files(evaluation)
    if shared or same_files:
        examples = sorted(shared)[:3] or sorted(same_files)[:3]
        raise VcrbenchError(
            f"{section} {name}: the training images overlap the evaluation images "
            f"({len(shared)} shared image ids, {len(same_files)} shared files, e.g. "
            f"{', '.join(examples)}); training on evaluation images would inflate every metric. "
            "Use disjoint folders, or e.g. dataset.categories16_only with "
            "train.exclude_categories16"
        )
