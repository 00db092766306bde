"""Agon: rules engines, search, exact solvers and a web arena for Alternator and Alak."""

from pathlib import Path

from agon.core.compiled import drop_stale_compiled_kernels

__version__ = "0.1.0"

# before any kernel is loaded from Numba's cache (see agon.core.compiled)
drop_stale_compiled_kernels(Path(__file__).parent)
