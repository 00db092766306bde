"""Keeping Numba's on-disk cache of compiled kernels in step with the sources.

Numba recompiles a cached function when its own source file changes, but not when a function
it calls, in another file, changes (numba/numba pull requests #8396 and #9563 tried to add
that; neither was merged). So after an edit to, say, the solver's table kernels, the cached
proof-number search would go on calling the old ones, compiled against the old layout of the
arrays: wrong results, silently. This module drops every cached kernel of the package once
any source of its kernel layers has changed.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

if sys.platform != "win32":
    import fcntl

STAMP_NAME = "numba-sources.sha256"
"""The fingerprint of the sources the cached kernels were compiled from (in __pycache__)."""
KERNEL_LAYERS = ("core", "games", "search", "solve")
"""The subpackages kernels live in, and all they can import (interfaces come after them)."""


def sources_fingerprint(package: Path) -> str:
    """A hash of the Python sources of ``package``'s kernel layers (names and contents)."""
    digest = hashlib.sha256()
    for layer in KERNEL_LAYERS:
        for source in sorted((package / layer).rglob("*.py")):
            digest.update(str(source.relative_to(package)).encode())
            digest.update(source.read_bytes())
    return digest.hexdigest()


def drop_stale_compiled_kernels(package: Path) -> bool:
    """Delete the Numba cache files (``*.nbi``, ``*.nbc``) under ``package`` if its sources
    changed since they were compiled; True if it did. A package that cannot be read or
    written (an installation elsewhere) is left as it is. Processes that start together (the
    test workers) take turns, so that none deletes what another has compiled since."""
    cache = package / "__pycache__"
    stamp = cache / STAMP_NAME
    try:
        fingerprint = sources_fingerprint(package)
        if stamp.exists() and stamp.read_text() == fingerprint:
            return False
        cache.mkdir(exist_ok=True)
        with open(cache / f"{STAMP_NAME}.lock", "w") as lock:
            if sys.platform != "win32":  # (elsewhere two may both compile: slower, not wrong)
                fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if stamp.exists() and stamp.read_text() == fingerprint:
                return False  # another process has just done it
            for pattern in ("*.nbi", "*.nbc"):
                for cached in package.rglob(pattern):
                    cached.unlink(missing_ok=True)
            stamp.write_text(fingerprint)
    except OSError:
        return False
    return True
