"""Training carried across short GPU slices: which epochs a run has finished, and their files
packed into a few parts that come back from a host and travel to the next one.

A slice's pack holds, for every train entry of a run, the files a later host needs so that
Snakemake sees the finished epochs as done (docs/cifar.md, "Training in slices"): each finished
epoch's log row (``epochs/state-<e>.parquet``), its job log and benchmark, and the state of the
last finished epoch only (``train_epoch`` e reads state e - 1 alone, and states are ``temp``:
Snakemake does not redo an epoch whose state is gone once the next one exists); a finished
entry's ``model.pt`` and training log instead. The files go into one uncompressed tar (states
do not compress), cut into parts of at most ``part_bytes`` (16 MiB: the most a host returns per
file), with a JSON manifest of each file's and part's SHA-256, size and mtime; unpacking checks
every checksum and restores the files byte for byte.

An epoch counts as finished when its log row (and, for the last one, its state) exists and
Snakemake has not marked it incomplete (``.snakemake/incomplete``): both files are written
atomically, the state first, so a job stopped mid-epoch leaves nothing that is packed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import time
from base64 import urlsafe_b64decode
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vcrbench.errors import VcrbenchError

#: The most files and the largest file a device host returns (docs: the device tool's limits).
MAX_FILES = 8
MAX_FILE_BYTES = 16 * 1024 * 1024
MANIFEST = "train-slice.json"
PART = "train-slice.tar.{:02d}"
_STATE = re.compile(r"state-(\d+)\.(pt|parquet)$")


def incomplete_files(workdir: str | Path) -> set[Path]:
    """The files Snakemake marks incomplete in ``workdir/.snakemake/incomplete`` (a job started
    and not finished), as paths relative to ``workdir``."""
    root = Path(workdir) / ".snakemake" / "incomplete"
    if not root.is_dir():
        return set()
    out = set()
    for marker in root.rglob("*"):
        if not marker.is_file() or marker.name == "migration_underway":
            continue
        parts = marker.relative_to(root).parts  # long names are split over folders ("@" heads)
        encoded = "".join(p.removeprefix("@") for p in parts)
        try:
            out.add(Path(urlsafe_b64decode(encoded.encode()).decode()))
        except ValueError:
            continue
    return out


@dataclass(frozen=True)
class EntryProgress:
    """What a run holds of one train entry: its finished epochs 1..``epochs`` (contiguous),
    whether the last one's state is there, and whether the model is done."""

    name: str
    epochs: int
    has_state: bool
    done: bool


def entry_progress(workdir: str | Path, results: str, name: str,
                   incomplete: set[Path] | None = None) -> EntryProgress:
    """The finished part of train entry ``name`` under ``workdir/results`` (see the module
    docstring for what counts as finished)."""
    workdir = Path(workdir)
    incomplete = incomplete_files(workdir) if incomplete is None else incomplete
    folder = Path(results) / "models" / name

    def ok(relative: Path) -> bool:
        return (workdir / relative).is_file() and relative not in incomplete

    done = all(ok(folder / f) for f in ("model.pt", "training-log.parquet"))
    rows = {int(m.group(1)) for p in (workdir / folder / "epochs").glob("state-*.parquet")
            if (m := _STATE.search(p.name)) and ok(folder / "epochs" / p.name)}
    epochs = 0
    while epochs + 1 in rows:
        epochs += 1
    # The last finished epoch is the last whose state is there (an epoch without a state is
    # only resumable if a later one has one), so walk back to it.
    last = epochs
    while last and not ok(folder / "epochs" / f"state-{last}.pt"):
        last -= 1
    if not done and last < epochs:
        epochs = last
    return EntryProgress(name, epochs, bool(last), done)


def carried_files(workdir: str | Path, results: str, names: Iterable[str]) -> list[Path]:
    """The files (relative to ``workdir``) a next slice needs of each entry: see the module
    docstring."""
    workdir = Path(workdir)
    incomplete = incomplete_files(workdir)
    out: list[Path] = []
    for name in names:
        progress = entry_progress(workdir, results, name, incomplete)
        folder = Path(results) / "models" / name
        logs = Path(results) / "logs" / "train" / name
        bench = Path(results) / "benchmarks" / "train" / name
        epochs = range(1, progress.epochs + 1)
        out += [folder / "epochs" / f"state-{e}.parquet" for e in epochs]
        out += [p for e in epochs for p in (logs / f"epoch-{e}.log", bench / f"epoch-{e}.tsv")
                if (workdir / p).is_file()]
        if progress.done:
            out += [p for p in (folder / "model.pt", folder / "training-log.parquet",
                                folder / "training-log.csv", logs / "model.log")
                    if (workdir / p).is_file()]
        elif progress.epochs:
            out.append(folder / "epochs" / f"state-{progress.epochs}.pt")
    return out


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pack(workdir: str | Path, files: Sequence[Path], out: str | Path,
         part_bytes: int = MAX_FILE_BYTES, max_files: int = MAX_FILES) -> list[Path]:
    """Write ``files`` (relative to ``workdir``) into ``out`` as tar parts of at most
    ``part_bytes`` and a manifest, at most ``max_files`` files in all; returns their paths.

    Raises :class:`VcrbenchError` when the pack needs more files than allowed."""
    workdir, out = Path(workdir), Path(out)
    buffer = io.BytesIO()
    entries = []
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for relative in sorted(set(files), key=str):
            data = (workdir / relative).read_bytes()
            info = tarfile.TarInfo(str(relative))
            info.size, info.mode = len(data), 0o644
            info.mtime = int((workdir / relative).stat().st_mtime)
            tar.addfile(info, io.BytesIO(data))
            entries.append({"path": str(relative), "bytes": len(data), "sha256": _sha256(data),
                            "mtime_ns": (workdir / relative).stat().st_mtime_ns})
    blob = buffer.getvalue()
    count = max(1, -(-len(blob) // part_bytes))
    if count + 1 > max_files:
        raise VcrbenchError(
            f"the slice's pack is {len(blob) / 2**20:.1f} MiB: {count} parts of "
            f"{part_bytes / 2**20:.0f} MiB and a manifest, more than the {max_files} files a "
            "host returns; train fewer entries per slice (name them as targets)")
    out.mkdir(parents=True, exist_ok=True)
    parts = []
    for k in range(count):
        chunk = blob[k * part_bytes:(k + 1) * part_bytes]
        (out / PART.format(k)).write_bytes(chunk)
        parts.append({"name": PART.format(k), "bytes": len(chunk), "sha256": _sha256(chunk)})
    manifest = {"format": 1, "tar_bytes": len(blob), "tar_sha256": _sha256(blob),
                "parts": parts, "files": entries}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return [out / p["name"] for p in parts] + [out / MANIFEST]


def unpack(folder: str | Path, workdir: str | Path) -> list[Path]:
    """Restore a pack written by :func:`pack` from ``folder`` into ``workdir``, checking every
    part's and file's checksum; returns the files (relative to ``workdir``) in the order of
    their original mtimes. Raises :class:`VcrbenchError` for a missing or damaged part."""
    folder, workdir = Path(folder), Path(workdir)
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise VcrbenchError(f"no {MANIFEST} in {folder}: not a training slice's pack")
    manifest = json.loads(manifest_path.read_text())
    chunks = []
    for part in manifest["parts"]:
        path = folder / part["name"]
        if not path.is_file():
            raise VcrbenchError(f"{path} is missing: carry every part of the pack")
        chunk = path.read_bytes()
        if len(chunk) != part["bytes"] or _sha256(chunk) != part["sha256"]:
            raise VcrbenchError(f"{path} is damaged (size or SHA-256 differs from {MANIFEST})")
        chunks.append(chunk)
    blob = b"".join(chunks)
    if _sha256(blob) != manifest["tar_sha256"]:
        raise VcrbenchError(f"the parts in {folder} do not reassemble to the packed tar")
    restored = []
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r") as tar:
        for entry in manifest["files"]:
            relative = Path(entry["path"])
            if relative.is_absolute() or ".." in relative.parts:
                raise VcrbenchError(f"{relative}: a packed path must stay inside the run")
            data = tar.extractfile(str(relative)).read()
            if _sha256(data) != entry["sha256"]:
                raise VcrbenchError(f"{relative} in {folder} does not match its SHA-256")
            target = workdir / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".unpacking")
            tmp.write_bytes(data)
            os.replace(tmp, target)
            os.utime(target, ns=(entry["mtime_ns"], entry["mtime_ns"]))
            restored.append((entry["mtime_ns"], str(relative), relative))
    return [r for _, _, r in sorted(restored)]


def refresh_mtimes(workdir: str | Path, files: Sequence[Path]) -> None:
    """Give ``files`` (in order) mtimes after every file written so far, 1 ms apart and in
    their order, so that inputs rebuilt on this host do not make Snakemake redo them."""
    workdir = Path(workdir)
    start = time.time_ns() + 1_000_000
    for k, relative in enumerate(files):
        stamp = start + k * 1_000_000
        os.utime(workdir / relative, ns=(stamp, stamp))
    # Let the clock pass the last stamp, so that nothing written next looks older.
    time.sleep(max(0.0, (start + len(files) * 1_000_000 - time.time_ns()) / 1e9))


def stop_time(deadline: float, margin: float, epoch_seconds: Sequence[float]) -> float:
    """When to ask Snakemake to stop starting jobs (seconds, the clock of ``deadline``): the
    running epoch then ends by ``deadline - margin`` if it takes no longer than the longest
    epoch seen (``epoch_seconds``, plus a quarter); with none seen, at ``deadline - margin``."""
    longest = max(epoch_seconds, default=0.0)
    return deadline - margin - 1.25 * longest
