"""The ``human`` and ``human_discrimination`` sections of a run configuration: checks that a
JSON schema cannot express."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vcrbench.errors import VcrbenchError
from vcrbench.human.transfer import human_assignments


def check_human(config: Mapping[str, Any]) -> None:
    """Human data sets: corruptions of the run, one data set each, an existing path, valid
    transfers; the discrimination trials a file."""
    seen = {}
    for i, entry in enumerate(config["human"]):
        where = f"config: human[{i}]"
        if entry["corruption"] not in config["corruptions"]:
            raise VcrbenchError(
                f"{where}.corruption {entry['corruption']!r} is not one of the run's corruptions "
                f"({', '.join(config['corruptions'])}); add it to corruptions"
            )
        if entry["corruption"] in seen:
            raise VcrbenchError(
                f"{where}: corruption {entry['corruption']!r} already has human data "
                f"(human[{seen[entry['corruption']]}]); merge the two data sets"
            )
        seen[entry["corruption"]] = i
        for name in entry["transfer_to"] or []:
            if name not in config["corruptions"]:
                raise VcrbenchError(
                    f"{where}.transfer_to: {name!r} is not one of the run's corruptions "
                    f"({', '.join(config['corruptions'])})"
                )
        if not Path(entry["path"]).exists():
            raise VcrbenchError(
                f"{where}.path {entry['path']!r} does not exist (relative paths are relative to "
                "the folder snakemake runs in)"
            )
    human_assignments(config["human"], config["corruptions"])
    discrimination = config.get("human_discrimination")
    if discrimination and not Path(discrimination).is_file():
        raise VcrbenchError(f"config: human_discrimination {discrimination!r} is not a file")
