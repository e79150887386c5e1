"""CIFAR-10-C-style errors of a CIFAR-10 model trained from scratch (``vcrbench cifar-c``;
``model.pt`` of ``benchmarks/bench_cifar_train.py`` or a workflow's ``trained:<name>``).

The test images (all, or a class-balanced subset: :func:`balanced_subset`) are corrupted at
32 px with each corruption at CIFAR-10-C's five severities (:mod:`vcrbench.corruptions.cifar_c`;
noise seeds keyed by corruption, severity and image), classified, and the error per corruption
and severity is reported with the mean corruption error (the unnormalised mean over the
corruptions' five severities that AugMix and REVa report as CIFAR-10-C "mCE" / mean error) and
a 95 % bootstrap interval of that mean over the test images (paired: one image resample for all
corruptions and models). ``pgd_steps`` adds the error on white-box PGD images
(:func:`pgd_images`: ε 8/255, step 2/255); a ``baseline`` model is evaluated on the same images,
with paired intervals of the differences (:func:`cifar_c_report`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from vcrbench.attacks import attack_images
from vcrbench.core.seeding import noise_seed
from vcrbench.corruptions.cifar_c import cifar_c_severities
from vcrbench.corruptions.registry import corrupt_uint8
from vcrbench.corruptions.sets import expand_sets
from vcrbench.data.cifar import CifarSplit
from vcrbench.models.checkpoints import read_checkpoint
from vcrbench.training.scratch import ScratchRecipe, new_state, predict

#: Bootstrap resamples of the test images behind every interval.
BOOTSTRAP = 2000


def balanced_subset(labels: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of ``n`` images, the same number per class, drawn with ``seed``."""
    classes = np.unique(labels)
    per = n // len(classes)
    rng = np.random.default_rng(seed)
    return np.sort(np.concatenate([rng.choice(np.flatnonzero(labels == c), per, replace=False)
                                   for c in classes]))


def load_model(path: str | Path, device: torch.device, precision: str | None = None
               ) -> tuple[torch.nn.Module, ScratchRecipe]:
    """The network (in eval mode, on ``device``) and recipe of a from-scratch ``model.pt``
    (``precision`` replaces the recipe's)."""
    checkpoint = read_checkpoint(path, "trained")
    values = dict(checkpoint["recipe"])
    if precision:
        values["precision"] = precision
    recipe = ScratchRecipe.from_dict(values)
    model = new_state(recipe, device).model
    model.load_state_dict(checkpoint["state_dict"])
    return model.eval(), recipe


def pgd_images(model: torch.nn.Module, recipe: ScratchRecipe, images: np.ndarray,
               labels: np.ndarray, ids: list[str], *, steps: int, eps: float = 8 / 255,
               alpha: float = 2 / 255, seed: int = 0, batch_size: int = 500,
               device: torch.device | str = "cpu") -> np.ndarray:
    """PGD counterparts (uint8 (N, 32, 32, 3)) of uint8 images against ``model`` in float32,
    normalised as in training: the project's PGD (:mod:`vcrbench.attacks`: untargeted L∞,
    random start keyed by ``(seed, image id)``, rounded to uint8 within ε), as the workflow's
    ``train_pgd`` and REVa's attacks."""
    device = torch.device(device)
    mean = torch.tensor(recipe.mean, device=device).view(1, 3, 1, 1)
    std = torch.tensor(recipe.std, device=device).view(1, 3, 1, 1)
    model.eval()

    def forward(x: torch.Tensor) -> torch.Tensor:
        return model((x - mean) / std)

    return attack_images("pgd", forward, images, np.asarray(labels, np.int64), image_ids=ids,
                         seed=seed, params={"eps": eps, "alpha": alpha, "steps": steps,
                                            "random_start": True},
                         batch_size=batch_size, device=device)


def corrupted_versions(images: np.ndarray, corruptions: Sequence[str], seed: int
                       ) -> dict[str, list[np.ndarray]]:
    """Each corruption's five CIFAR-10-C severities of ``images`` (uint8 (N, 32, 32, 3)),
    noise keyed by ``(seed, "cifar-c/<corruption>/<severity>", image position)``."""
    corrupted = {}
    for corruption in corruptions:
        versions = []
        for severity, point in enumerate(cifar_c_severities(corruption), start=1):
            params = {k: np.full(len(images), v) for k, v in point.items()}
            seeds = [noise_seed(seed, f"cifar-c/{corruption}/{severity}", i)
                     for i in range(len(images))]
            versions.append(corrupt_uint8(corruption, images, params, seeds,
                                          torch.device("cpu")))
        corrupted[corruption] = versions
    return corrupted


def per_image_errors(model: torch.nn.Module, recipe: ScratchRecipe, images: np.ndarray,
                     labels: np.ndarray, ids: list[str], corrupted: dict, *, pgd_steps: int,
                     pgd_eps: float, seed: int, device: torch.device,
                     log: Callable[[dict], None]) -> dict:
    """Per-image errors of one model: ``clean`` (N,), corruption -> (5, N), and with
    ``pgd_steps`` ``pgd`` (N,) on its own white-box PGD images; bool arrays."""
    def wrong(batch: np.ndarray) -> np.ndarray:
        p = predict(model, torch.as_tensor(batch, device=device), recipe)
        return (p.argmax(1).cpu().numpy() != labels)

    errors = {"clean": wrong(images), "corruptions": {}}
    for corruption, versions in corrupted.items():
        errors["corruptions"][corruption] = np.stack([wrong(v) for v in versions])
        log({"corruption": corruption, "error": [round(float(r.mean()), 4)
                                                 for r in errors["corruptions"][corruption]]})
    if pgd_steps:
        float_recipe = replace(recipe, precision="fp32")
        adversarial = pgd_images(model, float_recipe, images, labels, ids, steps=pgd_steps,
                                 eps=pgd_eps, alpha=2 / 255, seed=seed, device=device)
        errors["pgd"] = wrong(adversarial)
        log({"pgd_steps": pgd_steps, "error": round(float(errors["pgd"].mean()), 4)})
    return errors


def interval(per_image: np.ndarray, draws: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95 % percentile bootstrap interval of a per-image quantity (``draws``: (B, N)
    image indices, the same for every quantity: paired)."""
    lo, hi = np.percentile(per_image[draws].mean(1), [2.5, 97.5])
    return float(per_image.mean()), float(lo), float(hi)


def cifar_c_report(test: CifarSplit, model: str | Path, *, baseline: str | Path | None = None,
                   images: int | None = None, corruptions: str = "imagenet-c",
                   pgd_steps: int = 0, pgd_eps: float = 8 / 255, precision: str = "fp32",
                   device: str = "cpu", seed: int = 0, machine: dict | None = None,
                   start: float | None = None) -> str:
    """The Markdown report of the module docstring for the ``model.pt`` at ``model`` (and
    ``baseline``) on ``test``: ``images`` of them (class-balanced) or all, ``corruptions`` a
    comma-separated list of corruptions and sets. Progress goes to standard output as JSON
    lines, each with the seconds since ``start`` (a ``time.perf_counter()``; default: now);
    ``machine`` (:func:`vcrbench.host.machine`) is printed with the figures."""
    start = time.perf_counter() if start is None else start
    torch_device = torch.device(device)

    def log(row: dict) -> None:
        print(json.dumps({**row, "elapsed_s": round(time.perf_counter() - start)}), flush=True)

    index = (np.arange(len(test)) if images is None
             else balanced_subset(test.labels, images, seed))
    clean, labels = test.images[index], test.labels[index]
    ids = [test.image_ids[i] for i in index]
    corrupted = corrupted_versions(clean, expand_sets(corruptions.split(",")), seed)
    paths = {"model": model, **({"baseline": baseline} if baseline else {})}
    results, recipes = {}, {}
    for role, path in paths.items():
        network, recipe = load_model(path, torch_device, precision)
        recipes[role] = recipe
        log({"evaluating": role, "model": str(path)})
        results[role] = per_image_errors(network, recipe, clean, labels, ids, corrupted,
                                         pgd_steps=pgd_steps, pgd_eps=pgd_eps, seed=seed,
                                         device=torch_device, log=log)

    draws = np.random.default_rng(seed).integers(0, len(clean), (BOOTSTRAP, len(clean)))

    def summaries(errors: dict) -> dict[str, np.ndarray]:
        """Per-image quantities: clean error, mean corruption error (over the corruptions' five
        severities), PGD error."""
        out = {"clean error": errors["clean"].astype(float),
               "mean corruption error": np.mean([e.mean(0) for e in
                                                 errors["corruptions"].values()], axis=0)}
        if "pgd" in errors:
            out[f"PGD error (eps {pgd_eps * 255:.0f}/255, {pgd_steps} steps)"] = (
                errors["pgd"].astype(float))
        return out

    subset = "all" if images is None else "class-balanced subset"
    lines = [f"{len(clean)} test images ({subset}), precision {precision}; machine: "
             f"{json.dumps(machine or {})}", ""]
    for role, path in paths.items():
        errors = results[role]["corruptions"]
        lines += [f"**{role}**: `{path}` ({recipes[role].architecture}, method "
                  f"{recipes[role].method})", "",
                  "| corruption | s1 | s2 | s3 | s4 | s5 | mean |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for corruption, e in errors.items():
            lines.append(f"| {corruption} | " + " | ".join(f"{100 * r.mean():.1f}" for r in e)
                         + f" | {100 * e.mean():.1f} |")
        lines.append("")
    lines += ["| quantity | " + " | ".join(paths) + (" | model − baseline (paired) |"
                                                     if baseline else ""),
              "|---|" + "---:|" * (len(paths) + bool(baseline))]
    per_role = {role: summaries(results[role]) for role in paths}
    for quantity in per_role["model"]:
        cells = [per_role[role][quantity] for role in paths]
        row = [f"{100 * m:.2f} [{100 * lo:.2f}, {100 * hi:.2f}]"
               for m, lo, hi in (interval(c, draws) for c in cells)]
        if baseline:
            m, lo, hi = interval(cells[0] - cells[1], draws)
            row.append(f"{100 * m:+.2f} [{100 * lo:+.2f}, {100 * hi:+.2f}]")
        lines.append(f"| {quantity} | " + " | ".join(row) + " |")
    if baseline:
        lower = sum(results["model"]["corruptions"][c].mean()
                    < results["baseline"]["corruptions"][c].mean() for c in corrupted)
        lines += ["", f"The model's error is lower on {lower} of {len(corrupted)} corruptions."]
    lines += ["", f"Errors in %, 95 % percentile bootstrap intervals over the test images "
              f"({BOOTSTRAP} resamples, the same for every column: the difference is paired). "
              f"Wall time {time.perf_counter() - start:.0f} s; first image id {ids[0]}."]
    return "\n".join(lines)
