"""RobustBench checkpoints written locally in the zoo's file layout: the real architectures of
zoo entries with seeded random weights, saved as RobustBench's files are (a ``state_dict``
with DataParallel's ``module.`` prefix, a bare state dict, or Kireev et al.'s ``last`` /
``best`` pair), so the loader is tested offline on what it will meet."""

from __future__ import annotations

from pathlib import Path

import torch

#: (name, dataset, threat, layout): small CIFAR-10 entries of the three leaderboards.
CIFAR10_ENTRIES = (
    ("Ding2020MMA", "cifar10", "Linf", "state_dict"),
    ("Rice2020Overfitting", "cifar10", "L2", "bare"),
    ("Hendrycks2020AugMix_WRN", "cifar10", "corruptions", "state_dict"),
)
#: Architectures that take scalar values of their own tensors while being built, which the meta
#: device cannot give (benchmarks/bench_zoo_architectures.py builds them on the CPU).
NOT_ON_META = frozenset({
    ("cifar10", "Linf", "Kang2021Stable"), ("cifar10", "Linf", "Bai2024MixedNUTS"),
    ("cifar100", "Linf", "Bai2024MixedNUTS"), ("imagenet", "Linf", "Bai2024MixedNUTS"),
    ("imagenet", "Linf", "Amini2024MeanSparse_Swin-L"), ("imagenet", "Linf", "Xu2024MIMIR_Swin-B"),
    ("imagenet", "Linf", "Xu2024MIMIR_Swin-L")})
#: An entry whose file holds two models (RobustBench takes ``last``).
KIREEV = ("Kireev2021Effectiveness_AugMixNoJSD", "cifar10", "corruptions", "last")


def zoo_model_string(name: str, dataset: str, threat: str, model_dir: Path) -> str:
    """The registry name of an entry whose files are under ``model_dir``."""
    return f"robustbench:{name}?dataset={dataset}&threat={threat}&model_dir={model_dir}"


def write_checkpoint(model_dir: Path, name: str, dataset: str, threat: str, layout: str,
                     seed: int = 0) -> dict[str, torch.Tensor]:
    """Build the entry's architecture with weights seeded by ``seed`` and save it where
    RobustBench looks (``<model_dir>/<dataset>/<threat>/<name>.pt``); returns its state dict
    (the keys the architecture itself uses)."""
    from vcrbench.models.robustbench_zoo import import_zoo

    zoo = import_zoo()
    entry = zoo.model_dicts[zoo.BenchmarkDataset(dataset)][zoo.ThreatModel(threat)][name]
    torch.manual_seed(seed)
    module = entry["model"]()
    with torch.no_grad():  # batch-norm statistics that are not the identity
        for buffer_name, buffer in module.named_buffers():
            if buffer_name.endswith("running_mean"):
                buffer.normal_(0.0, 0.1)
            elif buffer_name.endswith("running_var"):
                buffer.uniform_(0.5, 1.5)
    state = {key: value.clone() for key, value in module.state_dict().items()}
    if layout == "state_dict":
        payload = {"state_dict": {f"module.{key}": value for key, value in state.items()},
                   "epoch": 200}
    elif layout == "last":
        payload = {"last": state, "best": {key: torch.zeros_like(v) for key, v in state.items()}}
    else:
        payload = state
    folder = model_dir / dataset / threat
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(payload, folder / f"{name}.pt")
    return state
