"""How much memory the machine has left, so that a table too large for it is refused with a
message before it is allocated (rather than the process dying, or the machine swapping)."""

from __future__ import annotations

import os
from pathlib import Path

from agon.core.errors import AgonError

MEMINFO = Path("/proc/meminfo")


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation without swapping (Linux's
    ``MemAvailable``; elsewhere the free physical pages), or None where the system does not
    say."""
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


def check_memory(needed: int, what: str) -> None:
    """Refuse (:class:`AgonError`) where ``what`` needs more than the ``needed`` bytes
    available; the message names both figures."""
    available = available_memory()
    if available is not None and needed > available:
        raise AgonError(
            f"{what} needs {needed:,} bytes of memory, and {available:,} are available"
        )
