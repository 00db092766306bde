"""Keeping Numba's on-disk cache of compiled kernels in step with the sources.

Numba recompiles a cached function when its own source file changes, but not when a function
it calls, in another file, changes (numba/numba pull requests #8396 and #9563 tried to add
that; neither was merged). So after an edit to, say, the solver's table kernels, the cached
proof-number search would go on calling the old ones, compiled against the old layout of the
arrays: wrong results, silently. So each version of the sources gets a cache folder of its own,
named by a fingerprint of the kernel layers' sources and of every installed game plugin's
package (a plugin's fast twin is compiled into the same folder, and its kernels call Agon's):
a process compiles into, and loads from, only the folder of the code it runs (deleting one
cache when the sources change left a race: docs/changelog.md). The fingerprint is taken when
the first kernel is defined (:func:`cache_kernels`, which :mod:`agon.core.fast` calls), not when
``agon`` is imported: importing Agon reads no file.

A cache file that is torn, emptied or overwritten (by a crash of the machine, a failing disk, a
tool that copied the folder) makes Numba raise each time it loads that kernel, in every later
run; so a kernel that cannot be loaded from one of Agon's folders is compiled afresh instead,
and the folder deleted and made again, once in a process, saying so
(:func:`rebuild_damaged_caches`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

CACHE_PREFIX = "numba-"
"""The start of a cache folder's name; the rest is the start of the sources' fingerprint."""
KEPT_CACHES = 8
"""Cache folders kept beside the one in use (the most recently used), for other versions of
the sources still running or checked out again."""
MARK = ".made-by-agon"
"""The file that marks a cache folder as Agon's (only such folders are ever deleted)."""
KERNEL_LAYERS = ("core", "games", "search", "solve")
"""The subpackages kernels live in, and all they can import (interfaces come after them)."""
PLUGIN_GROUP = "agon.games"
"""The entry-point group games are found in (``agon.games.ENTRY_POINT_GROUP``: the registry
comes after this layer)."""
AGON = Path(__file__).parents[1]
"""Agon's own package folder."""

_imported: dict[Path, str] = {}
_rebuilt: set[Path] = set()
"""The cache folders this process found damaged (it deletes each at most once)."""


def sources_fingerprint(package: Path, plugins: Sequence[Path] = ()) -> str:
    """A hash of the Python sources of ``package``'s kernel layers and of the ``plugins``
    (game packages of their own, or single modules: :func:`plugin_sources`), names and
    contents."""
    digest = hashlib.sha256()
    for layer in KERNEL_LAYERS:
        for source in sorted((package / layer).rglob("*.py")):
            digest.update(str(source.relative_to(package)).encode())
            digest.update(source.read_bytes())
    for plugin in plugins:
        sources = sorted(plugin.rglob("*.py")) if plugin.is_dir() else [plugin]
        for source in sources:
            digest.update(str(source.relative_to(plugin.parent)).encode())
            digest.update(source.read_bytes())
    return digest.hexdigest()


def plugin_sources(package: Path = AGON) -> list[Path]:
    """The sources of every game plugin installed outside ``package``: the folder of the
    top-level package each entry point of :data:`PLUGIN_GROUP` names (the module itself where
    it is one file), found without importing it; sorted, each once. All of a plugin's package
    counts, not only its fast twin: a kernel reads the constants of the modules it imports
    when it is compiled."""
    found: set[Path] = set()
    inside = package.resolve()
    for entry in entry_points(group=PLUGIN_GROUP):
        top = entry.module.partition(".")[0]
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):  # (a broken plugin: the registry says so when loaded)
            continue
        if spec is None:
            continue
        if spec.submodule_search_locations:
            places = [Path(place) for place in spec.submodule_search_locations]
        elif spec.origin is not None and spec.origin.endswith(".py"):
            places = [Path(spec.origin)]
        else:
            continue
        for place in places:
            resolved = place.resolve()
            if resolved != inside and inside not in resolved.parents:
                found.add(resolved)
    return sorted(found)


def imported_fingerprint(package: Path, plugins: Sequence[Path] = ()) -> str:
    """The fingerprint of ``package``'s sources as :func:`cache_by_sources` took it when the
    first kernel was defined, which is the code this process runs even if the files have been
    edited since (where it was not taken, the sources' as they are now, with ``plugins``)."""
    return _imported.get(package) or sources_fingerprint(package, plugins)


def cache_kernels() -> Path | None:
    """Point Numba's cache at the folder of Agon's sources and the installed plugins' as they
    are now (:func:`cache_by_sources`), once in a process: :mod:`agon.core.fast`, which every
    kernel module imports, calls it before any kernel is defined. Returns the folder (None
    where none can be written)."""
    if AGON in _imported:
        return Path(os.environ["NUMBA_CACHE_DIR"]) if os.environ.get("NUMBA_CACHE_DIR") else None
    return cache_by_sources(AGON, plugin_sources(AGON))


def cache_by_sources(package: Path, plugins: Sequence[Path] = ()) -> Path | None:
    """Point Numba's cache at the folder of ``package``'s sources as they are now, under the
    folder Numba was given (``NUMBA_CACHE_DIR``), else under the package's ``__pycache__``, else
    (an installation this user cannot write) under the user's own cache folder
    (:func:`user_cache`); and delete all but the :data:`KEPT_CACHES` most recently used other
    such folders that Agon made (each is marked with :data:`MARK`: a folder of that name that
    Agon did not make is never deleted). Call it before any kernel is defined: Numba picks a
    kernel's cache folder when it is decorated. The folder's name covers ``plugins``' sources
    too (:func:`sources_fingerprint`). Returns the folder, or None where none can be
    written (Numba's own choice of folder stands, and nothing is raised, so the import goes
    on)."""
    try:
        fingerprint = sources_fingerprint(package, plugins)
    except OSError:
        return None
    _imported[package] = fingerprint
    # Numba is not imported here (importing Agon compiles and loads nothing): it reads the
    # folder from the environment when it is imported, or, imported already, from its settings
    numba = sys.modules.get("numba")
    given_name = numba.config.CACHE_DIR if numba is not None else os.environ.get(
        "NUMBA_CACHE_DIR", ""
    )
    given = Path(given_name) if given_name else None
    if given is not None and given.name.startswith(CACHE_PREFIX):
        given = given.parent  # (a worker process inherits its parent's folder)
    bases = [given] if given is not None else [package / "__pycache__", user_cache()]
    name = f"{CACHE_PREFIX}{fingerprint[:16]}"
    found = next(
        ((base, base / name) for base in bases if _usable(base / name)), None
    )
    if found is None:
        return None
    base, folder = found
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    if numba is not None:  # (it reads its settings from the environment again when it changes)
        numba.config.CACHE_DIR = str(folder)
    others = sorted(
        (
            path for path in base.glob(f"{CACHE_PREFIX}*")
            if path != folder and (path / MARK).is_file()
        ),
        key=_last_used, reverse=True,
    )
    for old in others[KEPT_CACHES:]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


def rebuild_damaged_caches() -> None:
    """Have a kernel that cannot be loaded from one of Agon's cache folders (:data:`MARK`),
    where Numba raises, in this run and every later one, compiled afresh instead: the folder is
    deleted and made again (:func:`_rebuilt_now`), and the kernel saved into it. What any other
    folder makes Numba raise is raised as before. Call it once Numba is imported, before any
    kernel is called (:mod:`agon.core.fast`, which every kernel module imports, does)."""
    from numba.core.caching import Cache  # (here: importing this module loads no Numba)

    load: Callable[..., Any] = Cache._load_overload

    def load_or_rebuild(cache: Any, signature: Any, target_context: Any) -> Any:
        try:
            return load(cache, signature, target_context)
        except Exception as error:  # (whatever a torn or overwritten file makes Numba raise)
            folder = Path(cache.cache_path).parent  # (Numba's folder for one source folder)
            if not (folder.name.startswith(CACHE_PREFIX) and (folder / MARK).is_file()):
                raise
            if not _rebuilt_now(folder, type(error).__name__):
                # not deleted (it could not be, or was already: again could throw away other
                # processes' new kernels), so compiled and not saved: saving reads the index
                cache.disable()
            return None

    Cache._load_overload = load_or_rebuild  # type: ignore[method-assign]


def user_cache() -> Path:
    """The user's own cache folder for Agon: ``$XDG_CACHE_HOME/agon``, by default
    ``~/.cache/agon``."""
    cache_home = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(cache_home):
        return Path(cache_home) / "agon"
    try:
        return Path.home() / ".cache" / "agon"
    except RuntimeError:  # (no home folder)
        return Path(tempfile.gettempdir()) / f"agon-{os.getuid()}"


def _usable(folder: Path) -> bool:
    """Whether ``folder`` is (or is now made) a cache folder this process can write: marked as
    Agon's, and used now (the last to be deleted)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        (folder / MARK).touch()
        os.utime(folder)
    except OSError:
        return False
    return True


def _rebuilt_now(folder: Path, damage: str) -> bool:
    """Delete the cache folder ``folder``, damaged (loading a kernel raised ``damage``), and make
    it again, saying so on stderr, unless this process did already; whether it is empty now."""
    if folder in _rebuilt:
        return False
    _rebuilt.add(folder)
    shutil.rmtree(folder, ignore_errors=True)
    rebuilt = not folder.exists() and _usable(folder)
    outcome = "deleted it: the kernels are compiled again" if rebuilt else (
        "could not delete it: its damaged kernels are compiled in each run until it is"
    )
    print(
        f"agon: the cache of compiled kernels {folder} is damaged ({damage}); {outcome}",
        file=sys.stderr, flush=True,
    )
    return rebuilt


def _last_used(folder: Path) -> float:
    try:
        return folder.stat().st_mtime
    except OSError:
        return 0.0
