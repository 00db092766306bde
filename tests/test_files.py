"""Files are replaced whole: a failed or interrupted write keeps what was saved before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
