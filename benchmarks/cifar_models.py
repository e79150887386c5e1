"""The models of the CIFAR benchmarks (``model.pt`` of bench_cifar_train.py) and PGD on them.

``load_bench_model(path)`` rebuilds the network of a saved recipe; ``pgd_images`` attacks uint8
images through it with the project's PGD (``vcrbench.attacks``: untargeted L∞, random start keyed
by ``(seed, image id)``, rounded to uint8 within ε), as the workflow's ``train_pgd`` and REVa's
attacks do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from vcrbench.training.scratch import ScratchRecipe, new_state


def load_bench_model(path: str | Path, device: torch.device, precision: str | None = None
                     ) -> tuple[torch.nn.Module, ScratchRecipe]:
    """The network and recipe of a benchmark ``model.pt`` (``precision`` replaces the recipe's)."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
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
    normalised as in training."""
    from vcrbench.attacks import attack_images

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
