"""Files are replaced whole: a failed or interrupted write keeps what was saved before."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core import files
from agon.core.files import replace_file


def test_a_write_replaces_the_file_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    target.write_text("old")
    replace_file(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    target = tmp_path / "game.json"
    target.write_text("saved before")

    def fail(source: str, destination: str) -> None:
        raise failure

    monkeypatch.setattr(files.os, "replace", fail)
    with pytest.raises(type(failure)):
        replace_file(target, "half of the new text")
    assert target.read_text() == "saved before"
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]


def test_writers_do_not_share_a_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "game.json"
    used: list[str] = []
    real_replace = os.replace

    def record(source: str, destination: str) -> None:
        used.append(source)
        real_replace(source, destination)

    monkeypatch.setattr(files.os, "replace", record)
    replace_file(target, "one")
    replace_file(target, "two")
    assert len(set(used)) == 2
    assert target.read_text() == "two"


def test_permissions_are_kept_or_the_usual_ones(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.json"
    replace_file(fresh, "new")
    assert fresh.stat().st_mode & 0o777 == 0o644
    shared = tmp_path / "shared.json"
    shared.write_text("old")
    shared.chmod(0o664)
    replace_file(shared, "new")
    assert shared.stat().st_mode & 0o777 == 0o664


def test_a_change_under_the_folder_lock_keeps_other_processes_waiting(tmp_path: Path) -> None:
    fcntl = pytest.importorskip("fcntl")
    target = tmp_path / "levels.json"  # (need not exist)
    other = os.open(tmp_path, os.O_RDONLY)  # another process's hold on the folder
    try:
        with files.folder_locked(target), pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go afterwards
    finally:
        os.close(other)


@pytest.mark.parametrize(("command", "module", "work", "read"), [
    (["calibrate", "alternator", "--pool", "random,greedy", "--games", "2"],
     "agon.study.calibration", "calibrate", "agon.study.calibration:read_calibrations"),
    (["train", "alternator", "--games", "2", "--player", "alphabeta:100", "--exact-nodes", "100"],
     "agon.study.training", "train", "agon.core.evaluation:read_entries"),
])
def test_a_command_keeps_the_entry_another_run_wrote_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], module: str,
    work: str, read: str,
) -> None:
    out = tmp_path / "entries.json"
    worker = importlib.import_module(module)
    done = getattr(worker, work)

    def run(size: str) -> None:
        result = CliRunner().invoke(app, [
            *command[:2], "--size", size, *command[2:], "--out", str(out),
            "--checkpoint", str(tmp_path / f"kept-{size}"), "--quiet",
        ])
        assert result.exit_code == 0, result.output

    def while_another_ends(*arguments: Any) -> Any:
        found = done(*arguments)
        monkeypatch.setattr(worker, work, done)
        run("3x4")  # another process's run, ending while this one's work is done
        return found

    monkeypatch.setattr(worker, work, while_another_ends)
    run("3x3")
    reader_module, reader = read.split(":")
    entries = getattr(importlib.import_module(reader_module), reader)(out)
    assert [entry.options["height"] for entry in entries] == [4, 3]
