"""Files saved by long solves survive SIGKILL at any moment: `agon solve --tables-file` and
`agon tables` (results, report, --checkpoints) killed mid-write leave each file as its old
version or its new one, never torn, and no temporary file a reader could take for a result."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agon.solve.checkpoint import FORMAT, TABLE_NAMES

pytestmark = pytest.mark.slow

AGON = [sys.executable, "-c", "from agon.cli import main; main()"]
KILLS = 8
RUN_SECONDS = 2.5
"""About how long one run takes (start, a short solve, saving some hundred megabytes)."""
SOLVE = ["solve", "alak", "--size", "11", "--max-seconds", "0.3", "--table-bits", "12", "-q"]
TABLES = [
    "tables", "--only", "alak-tromp-taylor-16", "--max-seconds", "0.5", "--table-bits", "12",
    "-q",
]


def run_and_kill(args: list[str], after: float | None) -> bool:
    """Run the command, SIGKILL it ``after`` seconds on (None: let it end, compiling the
    kernels if need be); whether it was killed."""
    process = subprocess.Popen(
        [*AGON, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        process.wait(timeout=after)
        return False
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        return True


def assert_whole_tables(path: Path) -> None:
    """A file of tables that loads whole: every array and the header."""
    assert zipfile.is_zipfile(path)
    with np.load(path, allow_pickle=False) as content:
        assert json.loads(str(content["header"]))["format"] == FORMAT
        for name in TABLE_NAMES:
            assert content[name].dtype == np.int64


def temporaries_left(folder: Path, results: set[str]) -> int:
    """How many temporary files of writes cut short the folder holds, every file not a
    result being one: hidden and named ``.tmp``, so that no reader (``*.npz``, ``*.json``)
    takes it for a result."""
    left = [path.name for path in folder.iterdir() if path.name not in results]
    for name in left:
        assert name.startswith(".") and name.endswith(".tmp"), name
    return len(left)


def test_solve_tables_file_is_old_or_new_after_sigkill(tmp_path: Path) -> None:
    tables = tmp_path / "tables.npz"
    rng = random.Random(7)
    killed = checked = 0
    for attempt in range(KILLS + 1):
        # (the first run is not killed: later kills then cut a rewrite of a file there)
        after = None if attempt == 0 else rng.uniform(0.3, RUN_SECONDS)
        killed += run_and_kill([*SOLVE, "--tables-file", str(tables)], after)
        assert tables.exists()
        assert_whole_tables(tables)
        checked += 1
    cut = temporaries_left(tmp_path, {tables.name})
    print(f"\nsolve --tables-file: {killed} kills ({cut} mid-write), {checked} files checked")


def test_tables_results_report_and_checkpoints_are_old_or_new_after_sigkill(
    tmp_path: Path,
) -> None:
    out, checkpoints = tmp_path / "results.md", tmp_path / "checkpoints"
    store = out.with_suffix(".json")
    checkpoint = checkpoints / "alak-tromp-taylor-16.npz"
    rng = random.Random(11)
    killed = checked = 0
    for attempt in range(KILLS + 1):
        after = None if attempt == 0 else rng.uniform(0.3, RUN_SECONDS)
        killed += run_and_kill([*TABLES, "--out", str(out), "--checkpoints", str(checkpoints)],
                               after)
        for path in (store, out, checkpoint):
            if attempt == 0:
                assert path.exists(), f"{path} written by a whole run"
            if not path.exists():
                continue  # (never written yet)
            if path.suffix == ".json":
                assert "alak-tromp-taylor-16" in json.loads(path.read_text())["jobs"]
            elif path.suffix == ".md":
                assert path.read_text().endswith("\n")
            else:
                assert_whole_tables(path)
            checked += 1
    cut = temporaries_left(tmp_path, {store.name, out.name, checkpoints.name})
    cut += temporaries_left(checkpoints, {checkpoint.name})
    print(f"\nagon tables: {killed} kills ({cut} mid-write), {checked} files checked")
