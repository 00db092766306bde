"""The guard that keeps Numba's cache of compiled kernels in step with the sources."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import numba
import pytest

import agon
from agon.core.compiled import (
    CACHE_PREFIX,
    KEPT_CACHES,
    MARK,
    cache_by_sources,
    imported_fingerprint,
)

SOURCES = Path(agon.__file__).parent


@pytest.fixture
def numba_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numba's cache folder as it is now, given back after the test."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    monkeypatch.setenv("NUMBA_CACHE_DIR", "")


def _package(root: Path) -> Path:
    (root / "solve").mkdir(parents=True)
    (root / "solve" / "kernels.py").write_text("LAYOUT = 3\n")
    return root / "solve" / "kernels.py"


@pytest.mark.usefixtures("numba_cache")
def test_each_version_of_the_kernel_sources_has_a_cache_of_its_own(tmp_path: Path) -> None:
    source = _package(tmp_path)
    first = cache_by_sources(tmp_path)
    assert first is not None and first.parent == tmp_path / "__pycache__"
    assert numba.config.CACHE_DIR == os.environ["NUMBA_CACHE_DIR"] == str(first)
    assert imported_fingerprint(tmp_path).startswith(first.name.removeprefix(CACHE_PREFIX))

    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "app.py").write_text("PAGE = 1\n")  # an interface: no kernel imports it
    assert cache_by_sources(tmp_path) == first

    source.write_text("LAYOUT = 2\n")  # a kernel another file's cached kernel calls
    second = cache_by_sources(tmp_path)
    assert second is not None and second != first and first.is_dir()
    # a worker process, given its parent's folder, takes the same
    assert cache_by_sources(tmp_path) == second


@pytest.mark.usefixtures("numba_cache")
def test_only_the_most_recently_used_caches_are_kept(tmp_path: Path) -> None:
    source = _package(tmp_path)
    folders = []
    for version in range(KEPT_CACHES + 3):
        source.write_text(f"LAYOUT = {version}\n")
        folder = cache_by_sources(tmp_path)
        assert folder is not None
        os.utime(folder, (version, version))  # (used in this order)
        folders.append(folder)
    source.write_text("LAYOUT = 0\n")  # back to the first version: its folder is in use again
    assert cache_by_sources(tmp_path) == folders[0]
    kept = [folder for folder in folders if folder.is_dir()]
    assert kept == [folders[0], *folders[-KEPT_CACHES:]]


@pytest.mark.usefixtures("numba_cache")
def test_a_cache_folder_that_cannot_be_written_stops_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path)
    (tmp_path / "__pycache__").write_text("not a folder")
    (tmp_path / "cache-home").write_text("not a folder either")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    assert cache_by_sources(tmp_path) is None  # (no exception: the import goes on)
    assert numba.config.CACHE_DIR == ""


@pytest.mark.usefixtures("numba_cache")
def test_an_installation_this_user_cannot_write_caches_in_the_users_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(Else every run compiled everything again: 298 s for a solve.)"""
    _package(tmp_path)
    (tmp_path / "__pycache__").write_text("not a folder: as if another user's")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    folder = cache_by_sources(tmp_path)
    assert folder is not None and folder.parent == tmp_path / "cache-home" / "agon"
    assert str(folder) == numba.config.CACHE_DIR


@pytest.mark.usefixtures("numba_cache")
def test_a_folder_of_that_name_agon_did_not_make_is_never_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _package(tmp_path)
    given = tmp_path / "shared-cache"
    theirs = [given / f"{CACHE_PREFIX}{number}" for number in range(KEPT_CACHES + 3)]
    for folder in theirs:
        folder.mkdir(parents=True)
        (folder / "their.nbi").write_text("someone else's")
        os.utime(folder, (0, 0))  # (the least recently used of all)
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(given))
    for version in range(KEPT_CACHES + 3):
        source.write_text(f"LAYOUT = {version}\n")
        assert cache_by_sources(tmp_path) is not None
        monkeypatch.setattr(numba.config, "CACHE_DIR", str(given))
    assert all((folder / "their.nbi").is_file() for folder in theirs)
    assert sum(1 for path in given.glob(f"{CACHE_PREFIX}*") if (path / MARK).is_file()) == (
        KEPT_CACHES + 1
    )


def _constants_in_recursive_calls(source: str) -> list[str]:
    """The arguments of each function's calls to itself that Numba would type as literals:
    constants written out or named in capitals (module constants)."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef):
            continue
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                    and call.func.id == function.name):
                continue
            for argument in call.args:
                operand = argument.operand if isinstance(argument, ast.UnaryOp) else argument
                if isinstance(operand, ast.Constant) or (
                    isinstance(operand, ast.Name) and operand.id.isupper()
                ):
                    found.append(f"{function.name}: {ast.unparse(argument)}")
    return found


@pytest.mark.parametrize("module", ["solve/kernels.py", "solve/proof_numbers.py", "search"])
def test_recursive_kernels_pass_no_constants_to_themselves(module: str) -> None:
    # a literal argument compiles a second version through the recursion, whose cached
    # machine code crashes the next process (docs/architecture.md)
    path = SOURCES / module
    for source in [path] if path.is_file() else sorted(path.rglob("*.py")):
        assert _constants_in_recursive_calls(source.read_text()) == [], source


def test_the_check_finds_a_constant_passed_to_itself() -> None:
    source = "def search(depth, need):\n    return search(depth - 1, NEED_ALL)\n"
    assert _constants_in_recursive_calls(source) == ["search: NEED_ALL"]
    assert _constants_in_recursive_calls(source.replace("NEED_ALL", "need")) == []

