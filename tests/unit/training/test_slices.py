"""Packing a training's finished epochs for the next slice (vcrbench.training.slices): parts
reassemble byte for byte, damage is refused, only finished epochs are packed, and the stop
time leaves the longest epoch room to end. The whole cycle on the workflow (interrupted,
packed, resumed on a fresh copy, final weights byte-identical) is
benchmarks/bench_train_slices.py."""

from __future__ import annotations

import os
from base64 import urlsafe_b64encode
from pathlib import Path

import pytest

from vcrbench.errors import VcrbenchError
from vcrbench.training.slices import (
    MANIFEST,
    carried_files,
    entry_progress,
    incomplete_files,
    pack,
    refresh_mtimes,
    stop_time,
    unpack,
)

RESULTS = "results/r"


def _write(root: Path, relative: str, data: bytes, mtime_ns: int | None = None) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return Path(relative)


def _mark_incomplete(root: Path, relative: str, max_len: int | None = None) -> None:
    """A marker as Snakemake writes it (the path's urlsafe base64, cut into folders of
    ``max_len - 1`` characters with "@" before all but the last when it is long)."""
    encoded = urlsafe_b64encode(relative.encode()).decode()
    pieces = [encoded] if max_len is None else [
        encoded[i:i + max_len - 1] for i in range(0, len(encoded), max_len - 1)]
    pieces = ["@" + p for p in pieces[:-1]] + [pieces[-1]]
    _write(root / ".snakemake" / "incomplete", os.path.join(*pieces), b"{}")


def test_parts_reassemble_byte_for_byte_with_their_mtimes(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    data = {f"{RESULTS}/models/m/epochs/state-{k}.parquet": os.urandom(1500 + 500 * k)
            for k in range(1, 5)}
    files = [_write(src, p, b, mtime_ns=1_700_000_000_000_000_000 - k * 10**9)
             for k, (p, b) in enumerate(data.items())]
    written = pack(src, files, tmp_path / "out", part_bytes=4096, max_files=8)
    parts = [p for p in written if p.name != MANIFEST]
    assert len(parts) > 2 and all(p.stat().st_size <= 4096 for p in parts)
    restored = unpack(tmp_path / "out", dst)
    assert {str(p) for p in restored} == set(data)
    for path, content in data.items():
        assert (dst / path).read_bytes() == content
        assert (dst / path).stat().st_mtime_ns == (src / path).stat().st_mtime_ns
    # Returned oldest first (the last written here is the oldest).
    assert [str(p) for p in restored] == list(data)[::-1]


def test_a_damaged_or_missing_part_is_refused(tmp_path):
    files = [_write(tmp_path / "src", f"{RESULTS}/a.bin", os.urandom(3000))]
    parts = pack(tmp_path / "src", files, tmp_path / "out", part_bytes=4096)
    damaged = bytearray(parts[1].read_bytes())
    damaged[10] ^= 1
    parts[1].write_bytes(bytes(damaged))
    with pytest.raises(VcrbenchError, match="damaged"):
        unpack(tmp_path / "out", tmp_path / "dst")
    parts[1].unlink()
    with pytest.raises(VcrbenchError, match="missing"):
        unpack(tmp_path / "out", tmp_path / "dst")
    with pytest.raises(VcrbenchError, match="not a training slice"):
        unpack(tmp_path, tmp_path / "dst")


def test_a_pack_over_the_hosts_file_limit_is_refused(tmp_path):
    files = [_write(tmp_path, f"{RESULTS}/a.bin", os.urandom(5000))]
    with pytest.raises(VcrbenchError, match="more than the 3 files"):
        pack(tmp_path, files, tmp_path / "out", part_bytes=1024, max_files=3)


def _epochs(root: Path, name: str, rows: range, states: range) -> None:
    for e in rows:
        _write(root, f"{RESULTS}/models/{name}/epochs/state-{e}.parquet", b"row")
        _write(root, f"{RESULTS}/logs/train/{name}/epoch-{e}.log", b"log")
    for e in states:
        _write(root, f"{RESULTS}/models/{name}/epochs/state-{e}.pt", b"state")


def test_only_finished_epochs_are_packed_and_only_the_last_state(tmp_path):
    # a: epochs 1-3 done (older states deleted as Snakemake's temp files are); epoch 4 stopped
    # after its state and before its log row.
    _epochs(tmp_path, "a", range(1, 4), range(3, 5))
    # b: epoch 3 marked incomplete (Snakemake was killed); epoch 2's state is still there.
    _epochs(tmp_path, "b", range(1, 4), range(2, 4))
    _mark_incomplete(tmp_path, f"{RESULTS}/models/b/epochs/state-3.pt", max_len=12)
    # c: finished, its model written.
    _epochs(tmp_path, "c", range(1, 3), range(0))
    for f in ("model.pt", "training-log.parquet", "training-log.csv"):
        _write(tmp_path, f"{RESULTS}/models/c/{f}", b"m")
    assert incomplete_files(tmp_path) == {Path(f"{RESULTS}/models/b/epochs/state-3.pt")}
    assert entry_progress(tmp_path, RESULTS, "a").epochs == 3
    assert entry_progress(tmp_path, RESULTS, "b").epochs == 2
    assert entry_progress(tmp_path, RESULTS, "c").done
    assert entry_progress(tmp_path, RESULTS, "new").epochs == 0
    carried = {str(p) for p in carried_files(tmp_path, RESULTS, ["a", "b", "c", "new"])}
    states = sorted(p for p in carried if p.endswith(".pt") and "/epochs/" in p)
    assert states == [f"{RESULTS}/models/a/epochs/state-3.pt",
                      f"{RESULTS}/models/b/epochs/state-2.pt"]
    assert f"{RESULTS}/models/a/epochs/state-3.parquet" in carried
    assert f"{RESULTS}/models/b/epochs/state-3.parquet" not in carried
    assert f"{RESULTS}/logs/train/b/epoch-2.log" in carried
    assert f"{RESULTS}/logs/train/b/epoch-3.log" not in carried
    assert f"{RESULTS}/models/c/model.pt" in carried


def test_refreshed_mtimes_keep_the_order_and_follow_every_earlier_file(tmp_path):
    files = [_write(tmp_path, f"f{k}", b"x", mtime_ns=10**18 - k) for k in range(4)]
    earlier = _write(tmp_path, "rebuilt", b"y")
    refresh_mtimes(tmp_path, files)
    stamps = [(tmp_path / f).stat().st_mtime_ns for f in files]
    assert stamps == sorted(stamps) and len(set(stamps)) == 4
    assert stamps[0] > (tmp_path / earlier).stat().st_mtime_ns
    _write(tmp_path, "next", b"z")
    assert (tmp_path / "next").stat().st_mtime_ns >= stamps[-1]


def test_the_stop_leaves_the_longest_epoch_and_a_quarter_before_the_margin():
    assert stop_time(1000.0, 30.0, []) == 970.0
    assert stop_time(1000.0, 30.0, [10.0, 40.0, 20.0]) == 1000.0 - 30.0 - 50.0
