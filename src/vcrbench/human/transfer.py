"""Which human curve each corruption is compared with: its own data, or a visually similar one.

The VCR paper (§4.4) found two classes of corruptions that affect humans alike, so that one
member's human curve can stand for the others (:data:`PAPER_CLASSES`). A human data set of
corruption ``c`` serves ``c`` itself and the corruptions of its ``transfer_to`` list (default:
the other members of ``c``'s class in the run). A corruption with its own data never takes a
transferred curve; otherwise the first data set in config order that transfers to it wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: Visually similar corruption classes found with humans in the VCR paper (§4.4, Fig. 8).
PAPER_CLASSES: dict[str, tuple[str, ...]] = {
    "noise": ("shot_noise", "impulse_noise", "gaussian_noise", "uniform_noise"),
    "blur": ("blur", "median_blur", "gaussian_blur", "glass_blur", "defocus_blur"),
}


def transfer_targets(entry: Mapping[str, Any], corruptions: Sequence[str]) -> list[str]:
    """The corruptions a human data set's curve is transferred to (module docstring)."""
    if entry.get("transfer_to") is not None:
        return [c for c in entry["transfer_to"] if c != entry["corruption"]]
    for members in PAPER_CLASSES.values():
        if entry["corruption"] in members:
            return [c for c in corruptions if c in members and c != entry["corruption"]]
    return []


def source_name(entry: Mapping[str, Any]) -> str:
    """The human data's name in the summary (``source``, or format/folder)."""
    return entry.get("source") or f"{entry['format']}/{Path(entry['path']).name}"


def human_assignments(
    human: Sequence[Mapping[str, Any]], corruptions: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """corruption -> (corruption whose human curve it uses, human_source text)."""
    assigned: dict[str, tuple[str, str]] = {}
    for entry in human:
        assigned[entry["corruption"]] = (entry["corruption"], source_name(entry))
    for entry in human:
        for target in transfer_targets(entry, corruptions):
            if target not in assigned:
                assigned[target] = (
                    entry["corruption"],
                    f"{source_name(entry)} via {entry['corruption']}",
                )
    return {c: assigned[c] for c in corruptions if c in assigned}
