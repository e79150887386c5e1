"""The ``reva`` section of a run configuration: checks a schema cannot express, and the plan the
workflow rules build from it (set sizes known before any job, so that every shard is named in
advance).

Set sizes come from the data sets' file names (:func:`vcrbench.data.datasets.list_entries`): an
unreadable file, found only when the index job decodes every image, makes the index smaller
than planned, and the jobs that depend on the size then stop with a message saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vcrbench.errors import VcrbenchError

#: Neighbour "corruption" name that keys the analyser's pixel noise (the registry's uniform
#: noise with width ε, seeded per image and neighbour: ``noise_seed(seed, NEIGHBOUR_KEY + '/' +
#: image_id, neighbour)``).
NEIGHBOUR_KEY = "reva-neighbour"
#: The two image sets every perturbation is applied to.
SETS = ("weak", "evaluation")


@dataclass(frozen=True)
class RevaPlan:
    """What the REVa branch of a run does, resolved from the config.

    Attributes:
        ranking_model: the model whose robustness ranks the pool.
        pool: ``training`` or ``evaluation``.
        pool_source: ``evaluation``, ``train`` (reva.train) or ``finetune:<name>``.
        pool_size, evaluation_size, weak_size: images (from file names).
        attacks: attack name -> its parameters (defaults filled).
        source: the model transfer attacks are crafted on, None for white-box.
    """

    ranking_model: str
    pool: str
    pool_source: str
    pool_size: int
    evaluation_size: int
    weak_size: int
    attacks: dict[str, dict[str, float]] = field(default_factory=dict)
    source: str | None = None

    def set_size(self, name: str) -> int:
        """Images of set ``weak`` or ``evaluation``."""
        return self.weak_size if name == "weak" else self.evaluation_size

    def pool_label(self) -> str:
        """How outputs name the pool: ``training (reva.train)``, ``evaluation`` …"""
        if self.pool == "evaluation":
            return "evaluation"
        where = "reva.train" if self.pool_source == "train" else self.pool_source
        return f"training ({where})"


def ranking_model(config: Mapping[str, Any]) -> str:
    """``reva.model``, or else the first of ``models``."""
    return config["reva"]["model"] or config["models"][0]


def reva_models(config: Mapping[str, Any]) -> list[str]:
    """The models the REVa branch needs evaluated besides ``models``: the ranking model and the
    transfer source (none without ``reva.enabled``)."""
    reva = config["reva"]
    if not reva["enabled"]:
        return []
    return [m for m in (ranking_model(config), reva["attacks"]["source"]) if m]


def _pool_entries(config: Mapping[str, Any]) -> tuple[str, list]:
    from vcrbench.data.datasets import list_entries_from_config

    reva = config["reva"]
    if reva["pool"] == "evaluation":
        return "evaluation", list_entries_from_config(config["dataset"])
    name = reva["from_finetune"]
    if name is not None:
        entries = {e["name"]: e for e in config["finetune"]}
        if name not in entries:
            known = ", ".join(entries) or "none"
            raise VcrbenchError(
                f"config: reva.from_finetune {name!r} is not a finetune entry (entries: {known})"
            )
        return f"finetune:{name}", list_entries_from_config(entries[name]["train"])
    if reva["train"]["source"] == "builtin":
        raise VcrbenchError(
            "config: reva.pool is training but reva.train is the builtin photographs, which have "
            "no labels; set reva.train to the model's labelled training images (source "
            "imagefolder or imagenet-val), reva.from_finetune, or reva.pool: evaluation"
        )
    return "train", list_entries_from_config(reva["train"])


def reva_plan(config: Mapping[str, Any]) -> RevaPlan:
    """The resolved plan of a validated config with ``reva.enabled`` (module docstring)."""
    from vcrbench.attacks import check_attack_params
    from vcrbench.data.config import check_dataset
    from vcrbench.data.datasets import list_entries_from_config
    from vcrbench.models.registry import parse_model_name

    reva = config["reva"]
    for key, name in (("reva.model", ranking_model(config)),
                      ("reva.attacks.source", reva["attacks"]["source"])):
        if name is None:
            continue
        try:
            parse_model_name(name)
        except VcrbenchError as error:
            raise VcrbenchError(f"config: {key}: {error}") from None
    names = reva["attacks"]["names"]
    unknown = sorted(set(reva["attacks"]["settings"]) - set(names))
    if unknown:
        raise VcrbenchError(
            f"config: reva.attacks.settings names {unknown}, which are not in reva.attacks.names "
            f"{names}; add them there or remove their settings"
        )
    attacks = {}
    for name in names:
        try:
            attacks[name] = check_attack_params(name, reva["attacks"]["settings"].get(name) or {})
        except VcrbenchError as error:
            raise VcrbenchError(f"config: reva.attacks: {error}") from None
    if reva["pool"] == "training" and reva["from_finetune"] is None:
        check_dataset(reva["train"], "reva.train")
    evaluation = list_entries_from_config(config["dataset"])
    unlabelled = [e.image_id for e in evaluation if e.label < 0]
    if unlabelled:
        raise VcrbenchError(
            f"config: reva.enabled needs labelled evaluation images (relative errors divide by "
            f"the clean top-1 error), but {len(unlabelled)} have no ImageNet label (e.g. "
            f"{unlabelled[:3]}); point dataset at labelled images or set reva.enabled: false"
        )
    source, pool = _pool_entries(config)
    if reva["pool"] == "training":
        unlabelled = [e.image_id for e in pool if e.label < 0]
        if unlabelled:
            raise VcrbenchError(
                f"config: the REVa pool ({source}) has {len(unlabelled)} images without an "
                f"ImageNet label (e.g. {unlabelled[:3]}); the analyser needs labels"
            )
        if reva["disjoint"]:
            ids, paths = {e.image_id for e in evaluation}, {e.path for e in evaluation}
            shared = [e.image_id for e in pool if e.image_id in ids or e.path in paths]
            if shared:
                raise VcrbenchError(
                    f"config: reva.disjoint is true but the pool ({source}) shares "
                    f"{len(shared)} images with the evaluation set (e.g. {shared[:3]}); exclude "
                    "them from the pool (e.g. reva.train.exclude_categories16 when dataset."
                    "categories16_only), or set reva.disjoint: false"
                )
    size = reva["weak"]["size"] or len(evaluation)
    if size > len(pool):
        raise VcrbenchError(
            f"config: reva.weak.size is {size} but the pool ({source}) has only {len(pool)} "
            "images; lower reva.weak.size or give a larger pool"
        )
    return RevaPlan(
        ranking_model=ranking_model(config),
        pool=reva["pool"],
        pool_source=source,
        pool_size=len(pool),
        evaluation_size=len(evaluation),
        weak_size=size,
        attacks=attacks,
        source=reva["attacks"]["source"],
    )


def check_reva(config: Mapping[str, Any]) -> None:
    """Every check of the ``reva`` section (nothing to check when it is disabled)."""
    if config["reva"]["enabled"]:
        reva_plan(config)


def check_pool_index(pool, evaluation, *, disjoint: bool) -> None:
    """The built pool index (``pa.Table``s of ``data/index.parquet`` columns): every image
    labelled and, with ``disjoint``, none shared with the evaluation images."""
    labels = pool.column("label").to_pylist()
    ids = pool.column("image_id").to_pylist()
    unlabelled = [i for i, label in zip(ids, labels, strict=True) if label < 0]
    if unlabelled:
        raise VcrbenchError(f"reva.train: {len(unlabelled)} pool images have no ImageNet label "
                            f"(e.g. {unlabelled[:3]}); the analyser needs labels")
    if disjoint:
        other_ids = set(evaluation.column("image_id").to_pylist())
        other_paths = set(evaluation.column("path").to_pylist())
        shared = [i for i, path in zip(ids, pool.column("path").to_pylist(), strict=True)
                  if i in other_ids or path in other_paths]
        if shared:
            raise VcrbenchError(f"reva.disjoint: the pool shares {len(shared)} images with the "
                                f"evaluation set (e.g. {shared[:3]}); exclude them from "
                                "reva.train or set reva.disjoint: false")
