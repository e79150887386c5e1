"""What every benchmark prints with its figures: the machine they come from, and the report."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import torch


def machine(device: torch.device) -> dict:
    """The hardware the figures come from: CPU model and ISA extensions, the instruction-set cap
    in force (``ONEDNN_MAX_CPU_ISA``, ``ATEN_CPU_CAPABILITY``, ``NPY_DISABLE_CPU_FEATURES``:
    docs/architecture.md), GPU name."""
    info = {"cpu": platform.processor() or platform.machine(), "threads": torch.get_num_threads(),
            "torch": torch.__version__}
    try:
        text = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in text.splitlines()
                           if line.startswith("model name"))
        flags = next(line for line in text.splitlines() if line.startswith("flags")).split()
        info["isa"] = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    except (OSError, StopIteration):
        pass
    cap = {name: os.environ[name] for name in
           ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES")
           if os.environ.get(name)}
    if cap:
        info["isa_cap"] = cap
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


def machine_line(device: str = "cpu") -> str:
    """``machine: {...}``: :func:`machine` as the one line a benchmark prints with its figures."""
    return f"machine: {json.dumps(machine(torch.device(device)))}"


def emit(text: str, out: Path | None) -> None:
    """Print a benchmark's Markdown report and, with ``out``, write it there too."""
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
