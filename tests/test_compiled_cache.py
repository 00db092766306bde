"""A damaged cache of compiled kernels (files torn, emptied or overwritten) is rebuilt, saying
so once, and the next run loads from it quietly; a cache folder that cannot be used, or that
Agon did not make, is left as it is; a plugin's kernels are cached by its sources too, and
importing Agon reads no file (agon.core.compiled).

The kernels are two tiny ones of a package made for the test, so that the cache's folder does
not move when Agon's own sources are edited, and little is compiled."""

from __future__ import annotations

import importlib.util
import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numba
import pytest

import agon.core.fast  # noqa: F401  (as every kernel module does: it guards Numba's loading)
from agon.core.compiled import (
    AGON,
    CACHE_PREFIX,
    cache_by_sources,
    plugin_sources,
    sources_fingerprint,
)

pytestmark = pytest.mark.slow

KERNELS = """
from numba import njit


@njit(cache=True)
def twice(number):
    return 2 * number


@njit(cache=True)
def thrice(number):
    return 3 * number
"""

PROBE = """
import sys
from pathlib import Path

import numba

import agon.core.fast  # (as every kernel module does)
from agon.core.compiled import cache_by_sources

package, cache = Path(sys.argv[1]), sys.argv[2]
if cache == "agon's":
    cache_by_sources(package)
else:
    numba.config.CACHE_DIR = cache  # (a folder Agon did not make)
sys.path.insert(0, str(package.parent))
from tiny.solve.kernels import thrice, twice

assert (twice(7), thrice(7)) == (14, 21)
print(sum(twice.stats.cache_hits.values()) + sum(thrice.stats.cache_hits.values()))
"""

RUN_TIMEOUT = 600
"""Seconds a run may take (compiling, on a loaded machine, is slow, not wrong)."""
DAMAGED = "is damaged"
"""What the line that reports a damaged cache says."""

Damage = Callable[[Path], None]


def _garbage(file: Path) -> None:
    file.write_bytes(b"\x00\xffnot a pickle" * 64)


def _torn(file: Path) -> None:
    file.write_bytes(file.read_bytes()[: file.stat().st_size // 2])


def _emptied(file: Path) -> None:
    file.write_bytes(b"")


def _zeroed(file: Path) -> None:
    """(What a crash can leave of a file written just before it.)"""
    file.write_bytes(bytes(file.stat().st_size))


def _pickled_garbage(file: Path) -> None:
    file.write_bytes(pickle.dumps(("not", "a", "kernel")))


def _package(root: Path) -> Path:
    package = root / "tiny"
    (package / "solve").mkdir(parents=True)
    (package / "solve" / "kernels.py").write_text(KERNELS)
    return package


def _run(package: Path, cache: str = "agon's") -> subprocess.CompletedProcess[str]:
    """Call the kernels in a new process, caching them in Agon's folder for ``package`` (under
    the folder Numba is given) or in ``cache``."""
    return subprocess.run(
        [sys.executable, "-c", PROBE, str(package), cache],
        capture_output=True, text=True, timeout=RUN_TIMEOUT,
        env={**os.environ, "NUMBA_CACHE_DIR": str(package.parent / "kernel-cache")},
    )


def _cache_hits(done: subprocess.CompletedProcess[str]) -> int:
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def _agons_folder(package: Path) -> Path:
    return package.parent / "kernel-cache" / f"{CACHE_PREFIX}{sources_fingerprint(package)[:16]}"


@pytest.mark.parametrize("suffix", [".nbi", ".nbc"], ids=["index", "data"])
@pytest.mark.parametrize(
    "damage", [_garbage, _torn, _emptied, _zeroed], ids=["garbage", "torn", "empty", "zeroed"]
)
def test_a_damaged_cache_is_rebuilt_once_and_then_used(
    tmp_path: Path, damage: Damage, suffix: str
) -> None:
    package = _package(tmp_path)
    assert _cache_hits(_run(package)) == 0
    files = sorted(_agons_folder(package).rglob(f"*{suffix}"))
    assert len(files) == 2  # (one for each kernel)
    for file in files:
        damage(file)

    rebuilding = _run(package)  # (Numba raised here, in this run and every later one)
    assert _cache_hits(rebuilding) == 0
    assert rebuilding.stderr.count(DAMAGED) == 1, rebuilding.stderr  # (not once per kernel)
    assert str(_agons_folder(package)) in rebuilding.stderr

    rebuilt = _run(package)
    assert _cache_hits(rebuilt) == 2 and rebuilt.stderr == ""


def test_a_data_file_of_other_pickled_objects_is_damage_too(tmp_path: Path) -> None:
    """(It unpickles; rebuilding a kernel from it raised a TypeError.)"""
    package = _package(tmp_path)
    assert _cache_hits(_run(package)) == 0
    for file in _agons_folder(package).rglob("*.nbc"):
        _pickled_garbage(file)

    rebuilding = _run(package)
    assert _cache_hits(rebuilding) == 0 and rebuilding.stderr.count(DAMAGED) == 1
    rebuilt = _run(package)
    assert _cache_hits(rebuilt) == 2 and rebuilt.stderr == ""


def _made_a_file(folder: Path) -> None:
    folder.write_text("not a folder")


def _made_a_link_to_itself(folder: Path) -> None:
    """(Unreadable whoever runs the test, root included.)"""
    folder.symlink_to(folder.name)


def _made_unreadable(folder: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any folder")
    folder.mkdir()
    folder.chmod(0)


@pytest.mark.parametrize(
    "spoil", [_made_a_file, _made_a_link_to_itself, _made_unreadable],
    ids=["a file", "a link to itself", "unreadable"],
)
def test_a_cache_folder_that_cannot_be_used_stops_nothing_and_is_left_alone(
    tmp_path: Path, spoil: Callable[[Path], None]
) -> None:
    """(Numba's own choice of folder stands, as where none can be written.)"""
    package = _package(tmp_path)
    folder = _agons_folder(package)
    folder.parent.mkdir()
    spoil(folder)
    spoilt = os.lstat(folder)
    try:
        for _ in range(2):
            done = _run(package)
            assert done.returncode == 0 and done.stderr == "", done.stderr
        left = os.lstat(folder)
        assert (left.st_mode, left.st_size, left.st_mtime_ns) == (
            spoilt.st_mode, spoilt.st_size, spoilt.st_mtime_ns
        )
    finally:
        if not folder.is_symlink():
            folder.chmod(0o700)  # (for the test's clean-up)


def test_a_damaged_cache_agon_did_not_make_is_left_as_it_is(tmp_path: Path) -> None:
    package = _package(tmp_path)
    theirs = tmp_path / "their-cache"
    assert _cache_hits(_run(package, str(theirs))) == 0
    files = sorted(theirs.rglob("*.nbi"))
    for file in files:
        _garbage(file)

    done = _run(package, str(theirs))
    assert done.returncode != 0 and "UnpicklingError" in done.stderr  # (Numba's, as it was)
    assert DAMAGED not in done.stderr
    assert all(file.read_bytes().startswith(b"\x00\xffnot a pickle") for file in files)


def _load_kernels(package: Path) -> ModuleType:
    """The package's kernels, in a new module (new dispatchers: they load from the cache
    again)."""
    spec = importlib.util.spec_from_file_location("kernels", package / "solve" / "kernels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_damaged_cache_that_cannot_be_deleted_is_compiled_around(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each damaged kernel is compiled and not saved (saving read the damaged index again and
    raised), and the damage is reported once."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "kernel-cache"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", "")
    package = _package(tmp_path)
    folder = cache_by_sources(package)
    assert folder is not None
    warm = _load_kernels(package)
    assert (warm.twice(7), warm.thrice(7)) == (14, 21)
    files = sorted(folder.rglob("*.nbi"))
    for file in files:
        _garbage(file)
    monkeypatch.setattr(shutil, "rmtree", lambda *_, **__: None)  # (as if it were not ours to)

    damaged = _load_kernels(package)
    assert (damaged.twice(7), damaged.thrice(7)) == (14, 21)
    assert capsys.readouterr().err.count("could not delete it") == 1
    assert all(file.read_bytes().startswith(b"\x00\xffnot a pickle") for file in files)


# --- a plugin's kernels, and importing Agon ---------------------------------------------------

PLUGIN_KERNELS = """
from numba import njit

from tinygame.helpers import times


@njit(cache=True)
def kernel(number):
    return times(number) + 1
"""

PLUGIN_PROBE = """
import sys
from pathlib import Path

import agon.core.fast  # (as every kernel module does)
from agon.core.compiled import cache_by_sources

package, plugin = Path(sys.argv[1]), Path(sys.argv[2])
cache_by_sources(package, [plugin])
sys.path.insert(0, str(plugin.parent))
from tinygame.fast import kernel

print(kernel(7), kernel.stats.cache_hits[kernel.signatures[0]])
"""


def _helpers(factor: int) -> str:
    """A helper kernel of the plugin, in a file of its own."""
    return (
        "from numba import njit\n\n\n@njit(cache=True)\ndef times(number):\n"
        f"    return {factor} * number\n"
    )


def test_a_plugins_kernel_is_compiled_again_when_a_kernel_it_calls_changes(
    tmp_path: Path,
) -> None:
    """(Numba alone would load the cached kernel, which calls the old helper: 15, not 22.)"""
    package = _package(tmp_path)
    plugin = tmp_path / "plugins" / "tinygame"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text("")
    (plugin / "fast.py").write_text(PLUGIN_KERNELS)
    (plugin / "helpers.py").write_text(_helpers(2))

    def run() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", PLUGIN_PROBE, str(package), str(plugin)],
            capture_output=True, text=True, timeout=RUN_TIMEOUT,
            env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "kernel-cache")},
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert run() == ["15", "0"]
    assert run() == ["15", "1"]  # (from the cache)
    (plugin / "helpers.py").write_text(_helpers(3))
    assert run() == ["22", "0"]


def test_a_plugins_sources_name_the_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "kernel-cache"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", "")
    package = _package(tmp_path)
    plugin = tmp_path / "plugins" / "tinygame"
    plugin.mkdir(parents=True)
    (plugin / "fast.py").write_text("LAYOUT = 1\n")
    alone = cache_by_sources(package)
    first = cache_by_sources(package, [plugin])
    assert first is not None and first != alone
    (plugin / "fast.py").write_text("LAYOUT = 2\n")
    second = cache_by_sources(package, [plugin])
    assert second is not None and second not in (first, alone)
    assert second.name == f"{CACHE_PREFIX}{sources_fingerprint(package, [plugin])[:16]}"


def test_the_installed_plugins_outside_agon_count() -> None:
    import agon_tictactoe  # (the example game, installed beside Agon)

    found = plugin_sources()
    assert Path(agon_tictactoe.__file__).parent.resolve() in found
    assert not any(AGON.resolve() in (path, *path.parents) for path in found)


IMPORT_PROBE = """
import os
import sys

folders = []
sys.addaudithook(
    lambda event, args: folders.append(str(args[0])) if event == "os.scandir" else None
)
import agon

assert folders == [], folders  # (Path.rglob lists folders with os.scandir)
assert "NUMBA_CACHE_DIR" not in os.environ and "numba" not in sys.modules
import agon.core.fast

from agon.core.compiled import AGON, CACHE_PREFIX, plugin_sources, sources_fingerprint

folder = os.environ["NUMBA_CACHE_DIR"]
name = CACHE_PREFIX + sources_fingerprint(AGON, plugin_sources())[:16]
assert folder.endswith(name) and folders, (folder, name)
print("ok")
"""


def test_importing_agon_reads_no_file_the_first_kernel_takes_the_fingerprint() -> None:
    environment = {
        name: value for name, value in os.environ.items() if name != "NUMBA_CACHE_DIR"
    }
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True,
        timeout=RUN_TIMEOUT, env=environment,
    )
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
