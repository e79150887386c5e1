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
#: ``pool_source`` prefix of a pool that is a train entry's training images (reva.from_train).
TRAINED_POOL = "trained:"
#: Prefix of pool image ids that repeat an evaluation image id (:func:`distinct_pool_ids`).
POOL_ID_PREFIX = "pool/"


@dataclass(frozen=True)
class ComparisonPlan:
    """The comparison of training methods (``reva.comparison``), checked.

    Attributes:
        methods: label -> model string, in table order.
        baselines: labels every method is tested against.
        transfer_from: the label whose model crafts the transferred attacks (None without
            attacks).
        alternative: of the signed-rank tests.
        attacks: the attacks of ``reva.attacks.names`` the comparison crafts on every method
            and transfers (``reva.comparison.attacks``; all of them by default).
    """

    methods: dict[str, str]
    baselines: list[str]
    transfer_from: str | None
    alternative: str
    attacks: list[str] = field(default_factory=list)

    @property
    def source_model(self) -> str | None:
        """The model the transferred attacks are crafted on."""
        return self.methods[self.transfer_from] if self.transfer_from else None


@dataclass(frozen=True)
class RevaPlan:
    """What the REVa branch of a run does, resolved from the config.

    Attributes:
        ranking_model: the model whose robustness ranks the pool.
        pool: ``training`` or ``evaluation``.
        pool_source: ``evaluation``, ``train`` (reva.train), ``finetune:<name>`` or
            ``trained:<name>`` (a train entry's training images, reva.from_train).
        pool_size, evaluation_size, weak_size: images (from file names).
        attacks: attack name -> its parameters (defaults filled).
        source: the model transfer attacks are crafted on, None for white-box.
        validated: the models part 1 tests on both sets and reports (``reva.models``; None =
            every model of the run).
    """

    ranking_model: str
    pool: str
    pool_source: str
    pool_size: int
    evaluation_size: int
    weak_size: int
    attacks: dict[str, dict[str, float]] = field(default_factory=dict)
    source: str | None = None
    comparison: ComparisonPlan | None = None
    validated: list[str] | None = None

    def set_size(self, name: str) -> int:
        """Images of set ``weak`` or ``evaluation``."""
        return self.weak_size if name == "weak" else self.evaluation_size

    def pool_label(self) -> str:
        """How outputs name the pool: ``training (reva.train)``, ``evaluation`` …"""
        if self.pool == "evaluation":
            return "evaluation"
        where = {"train": "reva.train"}.get(self.pool_source, self.pool_source)
        if self.pool_source.startswith(TRAINED_POOL):
            where = f"train entry {self.pool_source.partition(':')[2]}"
        return f"training ({where})"


def ranking_model(config: Mapping[str, Any]) -> str:
    """``reva.model``, or else the first of ``models``."""
    return config["reva"]["model"] or config["models"][0]


def reva_models(config: Mapping[str, Any]) -> list[str]:
    """The models the REVa branch needs evaluated besides ``models``: the ranking model, the
    transfer source and the compared methods' models (none without ``reva.enabled``)."""
    reva = config["reva"]
    if not reva["enabled"]:
        return []
    compared = [m for m in reva["comparison"]["methods"].values() if isinstance(m, str)]
    validated = reva["models"] or []
    return [m for m in (ranking_model(config), reva["attacks"]["source"], *compared, *validated)
            if m]


def comparison_plan(config: Mapping[str, Any]) -> ComparisonPlan | None:
    """The checked ``reva.comparison`` (None when ``methods`` is empty).

    Raises:
        VcrbenchError: naming the key, when the comparison is configured without
            ``reva.enabled``, has fewer than two methods, names a model that does not parse or
            a fine-tuning entry that does not exist, compares fine-tuned models of different
            bases or training images, gives a baseline or ``transfer_from`` that is not a
            method, or lacks them, or lists an attack outside ``reva.attacks.names``.
    """
    from vcrbench.models.registry import parse_model_name

    reva = config["reva"]
    section = reva["comparison"]
    methods = dict(section["methods"])
    if not methods:
        if section["baselines"] or section["transfer_from"]:
            raise VcrbenchError("config: reva.comparison.baselines / transfer_from are set but "
                                "reva.comparison.methods is empty; name the methods "
                                "(label: model) or remove the comparison")
        return None
    if not reva["enabled"]:
        raise VcrbenchError("config: reva.comparison.methods is set but reva.enabled is false; "
                            "the comparison is part of the REVa branch: set reva.enabled: true")
    if len(methods) < 2:
        raise VcrbenchError(f"config: reva.comparison.methods has {len(methods)} method "
                            f"({list(methods)}); a comparison needs at least two")
    for label, model in methods.items():
        if not label.strip():
            raise VcrbenchError("config: reva.comparison.methods: a label is empty; give every "
                                "method a name (e.g. Standard, AugMix, REVa)")
        try:
            parse_model_name(model)
        except VcrbenchError as error:
            raise VcrbenchError(f"config: reva.comparison.methods.{label}: {error}") from None
    models = list(methods.values())
    repeated = sorted({m for m in models if models.count(m) > 1})
    if repeated:
        raise VcrbenchError(f"config: reva.comparison.methods names the model(s) {repeated} "
                            "more than once; each method is a different model")
    entries = {e["name"]: e for e in config["finetune"]}
    finetuned = {}
    for label, model in methods.items():
        if model.startswith("finetuned:"):
            name = model.partition(":")[2]
            if name not in entries:
                known = ", ".join(entries) or "none"
                raise VcrbenchError(
                    f"config: reva.comparison.methods.{label} is {model!r} but there is no "
                    f"finetune entry {name!r} (entries: {known}); add the entry or fix the name")
            finetuned[label] = entries[name]
    for key in ("base", "train"):
        values = {label: e[key] for label, e in finetuned.items()}
        if len({repr(v) for v in values.values()}) > 1:
            raise VcrbenchError(
                f"config: reva.comparison compares methods fine-tuned from the same base on the "
                f"same images, but their finetune entries differ in {key}: "
                + "; ".join(f"{label}: {v!r}" for label, v in values.items())
                + f"; give every compared entry the same {key}")
    baselines = list(section["baselines"])
    if not baselines:
        raise VcrbenchError(f"config: reva.comparison.baselines is empty; name the methods every "
                            f"method is tested against, among {list(methods)} (the paper: "
                            "Standard and AugMix)")
    unknown = [b for b in baselines if b not in methods]
    if unknown:
        raise VcrbenchError(f"config: reva.comparison.baselines {unknown} are not labels of "
                            f"reva.comparison.methods ({list(methods)})")
    names = reva["attacks"]["names"]
    attacks = names if section["attacks"] is None else list(section["attacks"])
    unknown = [a for a in attacks if a not in names]
    if unknown:
        raise VcrbenchError(f"config: reva.comparison.attacks {unknown} are not in "
                            f"reva.attacks.names {names}; the comparison uses a subset of the "
                            "run's attacks: add them there or remove them here")
    transfer_from = section["transfer_from"]
    if transfer_from is None and attacks:
        raise VcrbenchError(f"config: reva.comparison.transfer_from is not set; name the method "
                            f"whose model crafts the transferred attacks, among {list(methods)} "
                            "(the paper: the standard model)")
    if transfer_from is not None and transfer_from not in methods:
        raise VcrbenchError(f"config: reva.comparison.transfer_from {transfer_from!r} is not a "
                            f"label of reva.comparison.methods ({list(methods)})")
    return ComparisonPlan(methods=methods, baselines=baselines,
                          transfer_from=transfer_from if attacks else None,
                          alternative=section["alternative"], attacks=attacks)


def _pool_entries(config: Mapping[str, Any]) -> tuple[str, list]:
    from vcrbench.data.config import check_dataset
    from vcrbench.data.datasets import list_entries_from_config

    reva = config["reva"]
    if reva["from_train"] is not None and reva["from_finetune"] is not None:
        raise VcrbenchError(
            f"config: reva.from_train ({reva['from_train']!r}) and reva.from_finetune "
            f"({reva['from_finetune']!r}) both name the pool; keep one")
    if reva["pool"] == "evaluation":
        for key in ("from_train", "from_finetune"):
            if reva[key] is not None:
                raise VcrbenchError(
                    f"config: reva.{key} is {reva[key]!r} but reva.pool is evaluation (the "
                    f"evaluation images are the pool); set reva.pool: training or remove "
                    f"reva.{key}")
        return "evaluation", list_entries_from_config(config["dataset"])
    name = reva["from_train"]
    if reva["pool_per_class"] is not None and name is None:
        raise VcrbenchError(
            f"config: reva.pool_per_class is {reva['pool_per_class']} but reva.from_train is not "
            "set; it narrows a train entry's images (a reva.train pool has its own per_class and "
            "limit keys): set reva.from_train or remove reva.pool_per_class")
    if name is not None:
        entries = {e["name"]: (i, e) for i, e in enumerate(config["train"])}
        if name not in entries:
            known = ", ".join(entries) or "none"
            raise VcrbenchError(
                f"config: reva.from_train {name!r} is not a train entry (entries: {known}); "
                "name the train entry whose training images are the pool"
            )
        i, entry = entries[name]
        check_dataset(entry["data"], f"train[{i}].data")
        entries = list_entries_from_config(entry["data"])
        keep = first_per_class([e.label for e in entries], reva["pool_per_class"])
        return f"{TRAINED_POOL}{name}", [entries[k] for k in keep]
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
    if (reva["pool"] == "training" and reva["from_finetune"] is None
            and reva["from_train"] is None):
        check_dataset(reva["train"], "reva.train")
    evaluation = list_entries_from_config(config["dataset"])
    unlabelled = [e.image_id for e in evaluation if e.label < 0]
    if unlabelled:
        raise VcrbenchError(
            f"config: reva.enabled needs labelled evaluation images (relative errors divide by "
            f"the clean top-1 error), but {len(unlabelled)} have no ImageNet label (e.g. "
            f"{unlabelled[:3]}); point dataset at labelled images or set reva.enabled: false"
        )
    validated = _validated_models(config)
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
            if source.startswith(TRAINED_POOL):
                # a train entry's images: the same files (ids that repeat across class-folder
                # splits are made distinct in the pool index, distinct_pool_ids)
                files = {_file(e.path) for e in evaluation}
                shared = [e.image_id for e in pool if _file(e.path) in files]
            else:
                shared = [e.image_id for e in pool if e.image_id in ids or e.path in paths]
            if shared:
                raise VcrbenchError(
                    f"config: reva.disjoint is true but the pool ({source}) shares "
                    f"{len(shared)} images with the evaluation set (e.g. {shared[:3]}); exclude "
                    "them from the pool (e.g. reva.train.exclude_categories16 when dataset."
                    "categories16_only), or set reva.disjoint: false (class-folder copies whose "
                    "ids repeat across splits, such as CIFAR's train/ and test/ folders: use a "
                    "train entry's images, reva.from_train, which keeps the ids apart)"
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
        comparison=comparison_plan(config),
        validated=validated,
    )


def _file(path: str) -> str:
    """A path as a comparable file name (resolved; builtin images as they are)."""
    from pathlib import Path

    return path if "://" in path or path.startswith("builtin:") else str(Path(path).resolve())


def first_per_class(labels, per_class: int | None) -> list[int]:
    """Positions of the first ``per_class`` items of each label, in order (all with None):
    reva.pool_per_class, at plan time on the data set's entries and in the pool job on the
    training index's rows (the same images in the same order)."""
    if per_class is None:
        return list(range(len(labels)))
    seen: dict[int, int] = {}
    keep = []
    for position, label in enumerate(labels):
        label = int(label)
        if seen.get(label, 0) < per_class:
            seen[label] = seen.get(label, 0) + 1
            keep.append(position)
    return keep


def distinct_pool_ids(pool, evaluation):
    """The pool index (``pa.Table``) with ids that no evaluation image has: when any pool id is
    also an evaluation id (the files differ; class-folder copies repeat ``airplane/0000`` in
    their train and test folders), every pool id gets the prefix :data:`POOL_ID_PREFIX`, so
    that the weak set's images are never keyed like evaluation images (bootstrap weights,
    random starts). Schema and metadata (the image size) are kept."""
    import pyarrow as pa

    ids = pool.column("image_id").to_pylist()
    if not set(ids) & set(evaluation.column("image_id").to_pylist()):
        return pool
    column = pa.array([POOL_ID_PREFIX + i for i in ids], pool.schema.field("image_id").type)
    return pool.set_column(pool.schema.get_field_index("image_id"),
                           pool.schema.field("image_id"), column)


def _validated_models(config: Mapping[str, Any]) -> list[str] | None:
    """``reva.models`` checked: each parses, and the base of every fine-tuning entry with
    method reva and targeted auto is among them (its part-1 groups choose the corruptions)."""
    from vcrbench.models.registry import parse_model_name

    names = config["reva"]["models"]
    if names is None:
        return None
    for name in names:
        try:
            parse_model_name(name)
        except VcrbenchError as error:
            raise VcrbenchError(f"config: reva.models: {error}") from None
    for entry in config["finetune"]:
        targeted = entry.get("reva", {}).get("targeted", "auto")
        if entry.get("method") == "reva" and targeted == "auto" and entry["base"] not in names:
            raise VcrbenchError(
                f"config: finetune entry {entry['name']!r} takes its targeted corruptions from "
                f"REVa part 1 of its base {entry['base']!r} (reva.targeted: auto), but "
                f"reva.models {names} does not validate it; add {entry['base']!r} to "
                "reva.models or list the corruptions in reva.targeted")
    return list(names)


def check_reva(config: Mapping[str, Any]) -> None:
    """Every check of the ``reva`` section (with it disabled, only that it configures no
    comparison)."""
    if config["reva"]["enabled"]:
        reva_plan(config)
        _check_draw(config)
    else:
        comparison_plan(config)


def _check_draw(config: Mapping[str, Any]) -> None:
    """A random baseline (``reva.weak.draw``) has no non-robust corruptions to target: no train
    or fine-tuning entry of method reva may read them (``reva.targeted: auto``)."""
    if config["reva"]["weak"]["draw"] == "weakest":
        return
    for section in ("train", "finetune"):
        for entry in config.get(section) or []:
            targeted = (entry.get("reva") or {}).get("targeted")
            if entry.get("method") == "reva" and targeted == "auto":
                raise VcrbenchError(
                    f"config: {section} entry {entry['name']!r} (method reva, reva.targeted auto) "
                    "would target the corruptions REVa part 1 calls non-robust, but "
                    "reva.weak.draw is random-unselected: part 1 then evaluates a random "
                    "baseline, not the weak-robust set; set reva.weak.draw: weakest or list the "
                    "corruptions in the entry's reva.targeted")


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
