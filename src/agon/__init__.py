"""Agon: rules engines, search, exact solvers and a web arena for abstract strategy games, each
a plugin (:mod:`agon.games`)."""

from pathlib import Path

from agon.core.compiled import cache_by_sources

__version__ = "0.1.0"

# before any kernel is defined, so that each is cached with the sources it was compiled from
# (see agon.core.compiled)
cache_by_sources(Path(__file__).parent)
