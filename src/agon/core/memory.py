"""How much memory the machine has left, so that a table too large for it is refused with a
message before it is allocated (rather than the process dying, or the machine swapping)."""

from __future__ import annotations

import os
from pathlib import Path

from agon.core.errors import AgonError

MEMINFO = Path("/proc/meminfo")
STATM = Path("/proc/self/statm")
CGROUP = Path("/sys/fs/cgroup")


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation without swapping, or None where the
    system does not say: the least of the machine's (Linux's ``MemAvailable``; elsewhere the
    free physical pages), what this process's address space may still grow by (``ulimit -v``)
    and what its control group may still take (a container's limit)."""
    known = [
        found for found in (_machine_available(), _address_space_left(), _cgroup_left())
        if found is not None
    ]
    return min(known, default=None)


def _machine_available() -> int | None:
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _address_space_left() -> int | None:
    """What ``ulimit -v`` (``RLIMIT_AS``) leaves this process, where it sets a limit."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit == resource.RLIM_INFINITY:
            return None
        pages = int(STATM.read_text().split()[0])
        return max(0, limit - pages * os.sysconf("SC_PAGE_SIZE"))
    except (ImportError, OSError, ValueError, IndexError):
        return None


def _cgroup_left() -> int | None:
    """What this process's control group (version 2) may still take, where it has a limit."""
    try:
        limit = (CGROUP / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((CGROUP / "memory.current").read_text()))
    except (OSError, ValueError):
        return None


def check_memory(needed: int, what: str) -> None:
    """Refuse (:class:`AgonError`) where ``what`` needs more than the ``needed`` bytes
    available; the message names both figures."""
    available = available_memory()
    if available is not None and needed > available:
        raise AgonError(
            f"{what} needs {needed:,} bytes of memory, and {available:,} are available"
        )
