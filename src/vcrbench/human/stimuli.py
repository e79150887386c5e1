"""Δv for human trials whose stimuli are unknown: each condition measured on the run's images.

The model-vs-human data record a trial's condition (noise width, blur σ) but not its image, so
its Δv cannot be computed. Instead every condition's stimulus transform, as the experiment
defined it, is applied with our corruption code to K of the run's images and scored with our
VIF against the unmodified grayscale image; that gives a *distribution* of Δv per condition
(stored: ``human/<corruption>-stimuli.parquet``), which :mod:`vcrbench.human.conditions` hands
out to the trials of that condition.

Stimulus transforms (Geirhos et al. 2018, "Generalisation in humans and deep neural networks",
224 × 224 grayscale images in [0, 1]):

- ``uniform-noise``: contrast reduced to 30 % (``0.35 + 0.3 x``), then ``clip(x + U[−w, w])``
  with ``w`` the condition (our ``uniform_noise``, one channel).
- ``low-pass``: Gaussian blur with standard deviation σ = the condition, in pixels (our
  ``gaussian_blur``).

Grayscale is OpenCV's integer rule (as the VIF's), the reference for Δv is that grayscale
image, and stimuli are quantised to 8 bits like every corrupted image here. Note that the
30 % contrast of ``uniform-noise`` alone already is a visual change (condition 0 has Δv > 0).

Schema of the stimuli table: ``condition`` (float64), ``image_id`` (string), ``dv`` (float64).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import torch

from vcrbench.core.seeding import noise_seed
from vcrbench.errors import VcrbenchError

CONTRAST = 0.3


def _uniform_noise(gray: torch.Tensor, width: float, seeds: list[int]) -> torch.Tensor:
    from vcrbench.corruptions import apply_corruption

    low_contrast = (1.0 - CONTRAST) / 2.0 + CONTRAST * gray
    images = low_contrast[:, None].expand(-1, 3, -1, -1)
    return apply_corruption("uniform_noise", images, {"width": [width] * len(seeds)}, seeds)[:, 0]


def _low_pass(gray: torch.Tensor, sigma: float, seeds: list[int]) -> torch.Tensor:
    from vcrbench.corruptions import apply_corruption

    images = gray[:, None].expand(-1, 3, -1, -1)
    return apply_corruption("gaussian_blur", images, {"sigma": [sigma] * len(seeds)}, seeds)[:, 0]


#: experiment -> (stimulus transform of (B, H, W) float [0, 1] gray images -> (B, H, W) uint8,
#: the corruption whose code it uses).
STIMULI: dict[str, tuple[Callable[[torch.Tensor, float, list[int]], torch.Tensor], str]] = {
    "uniform-noise": (_uniform_noise, "uniform_noise"),
    "low-pass": (_low_pass, "gaussian_blur"),
}


def _check_experiment(experiment: str) -> None:
    if experiment not in STIMULI:
        raise VcrbenchError(
            f"human data: no stimulus transform is known for the model-vs-human experiment "
            f"{experiment!r} (known: {', '.join(STIMULI)}); give the trials with their own Δv in "
            "the 'trials' format instead"
        )


def condition_dv(
    experiment: str,
    conditions: list[float],
    images: np.ndarray,
    image_ids: list[str],
    *,
    seed: int,
    batch_size: int = 16,
    vif_precision: str = "exact",
) -> pa.Table:
    """Δv of every condition on every image (module docstring).

    Args:
        experiment: a key of :data:`STIMULI`.
        conditions: the experiment's condition levels.
        images: ``(K, H, W, 3)`` uint8 RGB images of the run (prepared, 224 × 224).
        image_ids: their ids.
        seed: run seed (keys the noise of stochastic stimuli).

    Returns:
        The stimuli table, rows ordered by condition, then image.
    """
    from vcrbench.vif import delta_v, rgb_to_gray, vif

    _check_experiment(experiment)
    transform, _ = STIMULI[experiment]
    if images.ndim != 4 or images.shape[-1] != 3 or images.dtype != np.uint8:
        raise VcrbenchError(f"expected (K, H, W, 3) uint8 images, got {images.shape} "
                            f"{images.dtype}")
    gray = rgb_to_gray(torch.from_numpy(images).permute(0, 3, 1, 2))  # (K, H, W) 0..255
    rows: dict[str, list] = {"condition": [], "image_id": [], "dv": []}
    stream = f"human-{experiment}"
    for level in sorted(set(float(c) for c in conditions)):
        for start in range(0, len(image_ids), batch_size):
            ref = gray[start : start + batch_size]
            seeds = [noise_seed(seed, f"{stream}-{level!r}", start + i) for i in range(len(ref))]
            stimulus = transform(ref / 255.0, level, seeds).to(torch.float64)
            values = delta_v(vif(ref, stimulus, precision=vif_precision))
            rows["condition"].extend([level] * len(ref))
            rows["image_id"].extend(image_ids[start : start + batch_size])
            rows["dv"].extend(float(v) for v in values)
    return pa.table(
        {
            "condition": pa.array(rows["condition"], pa.float64()),
            "image_id": pa.array(rows["image_id"], pa.string()),
            "dv": pa.array(rows["dv"], pa.float64()),
        }
    )


def stimuli_for_run(
    index: pa.Table, path: str, *, seed: int, n_images: int, vif_precision: str = "exact"
) -> pa.Table:
    """The stimuli table of a model-vs-human data set on ``n_images`` of the run's images.

    The images are the first ``n_images`` of a permutation of the index keyed by the seed, so
    every data set of a run is measured on the same images.
    """
    from vcrbench.data.datasets import load_images
    from vcrbench.evaluation.samples import image_order
    from vcrbench.human.trials import condition_accuracy, experiment_name, read_model_vs_human

    experiment = experiment_name(path)
    _check_experiment(experiment)
    conditions = condition_accuracy(read_model_vs_human(path)).column("condition").to_pylist()
    order = image_order(index.num_rows, seed, "human-stimuli")[:n_images]
    ids = [index.column("image_id")[int(i)].as_py() for i in order]
    paths = [index.column("path")[int(i)].as_py() for i in order]
    return condition_dv(experiment, conditions, load_images(paths), ids, seed=seed,
                        vif_precision=vif_precision)

