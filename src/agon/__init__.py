"""Agon: rules engines, search, exact solvers and a web arena for abstract strategy games, each
a plugin (:mod:`agon.games`).

Importing Agon reads no file and loads no Numba: Numba's cache of compiled kernels is pointed
at the folder of these sources when the first kernel is defined (:mod:`agon.core.compiled`)."""

__version__ = "0.1.0"
