"""The one atomic write: a writer killed before its rename, or failing, never leaves a file
under the final name, and a failed rewrite keeps the previous file. Checked for every kind of
output (table, text, figure, checkpoint), since they all go through it."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
from helpers.paths import REPO

from vcrbench.core import files, tables

KILL_BEFORE_RENAME = """
import os, signal, sys
sys.path.insert(0, {src!r})
from vcrbench.core import files
def killed(tmp, path):  # the process dies after the temporary file is complete
    assert os.path.getsize(tmp) > 0
    os.kill(os.getpid(), signal.SIGKILL)
files.replace_atomically = killed
{write}
"""

WRITERS = {
    "table": (
        "shard-0.parquet",
        "import pyarrow as pa\nfrom vcrbench.core.tables import write_table\n"
        "write_table(pa.table({{'x': [1, 2, 3]}}), {path!r})",
    ),
    "text": (
        "summary.md",
        "from vcrbench.core.tables import write_text\nwrite_text('| a |\\n', {path!r})",
    ),
    "figure": (
        "curves.png",
        "import matplotlib.pyplot as plt\nfrom vcrbench.figures.style import save_figure\n"
        "save_figure(plt.figure(), [{path!r}])",
    ),
    "checkpoint": (
        "checkpoint.pt",
        "from vcrbench.training.checkpoint import save_checkpoint\n"
        "save_checkpoint({{'format': 'x'}}, {path!r})",
    ),
}


@pytest.mark.parametrize("kind", list(WRITERS))
def test_output_killed_before_rename_leaves_no_file_under_its_name(kind, tmp_path):
    name, write = WRITERS[kind]
    path = tmp_path / name
    script = KILL_BEFORE_RENAME.format(src=str(REPO / "src"), write=write.format(path=str(path)))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert not path.exists()
    left = [p.name for p in tmp_path.iterdir()]
    assert left and all(n.startswith(f".{name}.tmp-") for n in left), left


def test_failed_table_write_keeps_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "summary.parquet"
    tables.write_table(pa.table({"x": [1]}), path)
    before = path.read_bytes()

    def broken(table, where, **kwargs):
        Path(where).write_bytes(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(tables.pq, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        tables.write_table(pa.table({"x": [2]}), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_failed_figure_write_leaves_nothing(tmp_path):
    import matplotlib.pyplot as plt

    from vcrbench.figures.style import save_figure

    def broken(where, **kwargs):
        Path(where).write_bytes(b"\x89PNG half a file")
        raise OSError("disk full")

    fig = plt.figure()
    fig.savefig = broken
    path = tmp_path / "robustness.png"
    with pytest.raises(OSError, match="disk full"):
        save_figure(fig, [path])
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_creates_the_folder_and_replaces_an_old_file(tmp_path):
    path = tmp_path / "a" / "b" / "note.txt"
    with files.atomic_write(path) as tmp:
        tmp.write_text("one")
    with files.atomic_write(path) as tmp:
        assert tmp.parent == path.parent and tmp.name.startswith(".note.txt.tmp-")
        tmp.write_text("two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["note.txt"]


def test_as_paths_takes_one_path_or_a_list():
    from pathlib import Path

    from vcrbench.core.files import as_paths

    assert as_paths("a/b.parquet") == ["a/b.parquet"]
    assert as_paths(Path("a/b.parquet")) == ["a/b.parquet"]
    assert as_paths(["x", Path("y")]) == ["x", "y"]
