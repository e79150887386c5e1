"""What learns during fine-tuning: a model's units, the trainable ones, and their modes.

The *units* of a model are its top-level children, with a ``Sequential`` / ``ModuleList``
counted child by child (EfficientNet-Lite0: stem conv, stem BN, 16 MBConv blocks, head conv,
head BN, classifier); ``classifier`` is the last unit with parameters, ``last:k`` the last k
such units, ``all`` everything. Frozen units run as in evaluation; trainable units run in
training mode (dropout, drop-connect), with their batch-norm statistics frozen unless
``batchnorm: train``.
"""

from __future__ import annotations

import torch

from vcrbench.errors import VcrbenchError
from vcrbench.training.spec import TrainingSpec


def model_units(module: torch.nn.Module) -> list[tuple[str, torch.nn.Module]]:
    """The units of a model that own parameters, in order (module docstring)."""
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
