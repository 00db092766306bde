"""Each game's fast twin, and its kernels in the form the search kernels take them.

The search kernels receive a twin's kernels as first-class functions. They are handed over as
*compiled C callbacks* (``numba.cfunc`` with the contract's signatures), not as Numba
dispatchers: a dispatcher argument makes Numba compile a separate search per game and, worse,
its on-disk cache never hits (the dispatcher's type is keyed by an identity that changes from
process to process), so every process would recompile the search for many seconds. With
callbacks the argument types are plain function signatures: one compiled search serves every
game, and it is cached. A call through a callback costs a few nanoseconds.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, NamedTuple

from numba import cfunc, types
from numba.core.errors import NumbaExperimentalFeatureWarning

from agon.core.fast import FastTwin
from agon.core.game import Game
from agon.games import plugin_of
from agon.search.reference import reference_twin

# Numba still calls first-class function arguments experimental; they are what lets one cached
# search serve every game, and the tests check every search against the reference rules
warnings.filterwarnings(
    "ignore", "First-class function type", category=NumbaExperimentalFeatureWarning
)

_ARRAY = types.Array(types.int64, 1, "C")
_QUERY = (_ARRAY, _ARRAY)  # (params, state)


class TwinKernels(NamedTuple):
    """A twin's kernels as C callbacks, in the order the search kernels take them."""

    legal_moves: Any
    play: Any
    undo: Any
    to_move: Any
    end_code: Any
    margin: Any
    key: Any
    history_key: Any
    evaluate: Any
    move_order: Any


SIGNATURES = TwinKernels(
    legal_moves=types.int64(_ARRAY, _ARRAY, _ARRAY),
    play=types.void(_ARRAY, _ARRAY, types.int64),
    undo=types.void(*_QUERY),
    to_move=types.int64(*_QUERY),
    end_code=types.int64(*_QUERY),
    margin=types.float64(*_QUERY),
    key=types.int64(*_QUERY),
    history_key=types.int64(*_QUERY),
    evaluate=types.float64(*_QUERY),
    move_order=types.float64(_ARRAY, _ARRAY, types.int64),
)


class HistoryKernels(NamedTuple):
    """The kernels that tell a solver which part of the history a result depends on."""

    history_length: Any
    history_board: Any
    history_reference: Any


HISTORY_SIGNATURES = HistoryKernels(
    history_length=types.int64(*_QUERY),
    history_board=types.int64(_ARRAY, _ARRAY, types.int64),
    history_reference=types.int64(*_QUERY),
)


@functools.cache
def twin_for(game: Game) -> FastTwin:
    """The fast twin of a variant: its game's own (built once per variant), or, for a game
    that has none, the twin over its reference rules (:mod:`agon.search.reference`)."""
    plugin = plugin_of(game)
    if plugin.fast_twin is None:
        return reference_twin(game, plugin)
    return plugin.fast_twin(game)


def kernels_for(twin: FastTwin) -> TwinKernels:
    """The twin's kernels as C callbacks (built once per game: every variant shares them)."""
    kernels = (getattr(twin, name) for name in TwinKernels._fields)
    return TwinKernels(*_compile(SIGNATURES, twin.cached, *kernels))


def history_kernels_for(twin: FastTwin) -> HistoryKernels:
    """The twin's history kernels as C callbacks."""
    kernels = (getattr(twin, name) for name in HistoryKernels._fields)
    return HistoryKernels(*_compile(HISTORY_SIGNATURES, twin.cached, *kernels))


@functools.cache
def _compile(signatures: tuple[Any, ...], cached: bool, *dispatchers: Any) -> tuple[Any, ...]:
    """C callbacks of the dispatchers' Python functions (built once per game: every variant
    shares them), in Numba's on-disk cache where ``cached``."""
    return tuple(
        cfunc(signature, cache=cached)(dispatcher.py_func)
        for signature, dispatcher in zip(signatures, dispatchers, strict=True)
    )


def pass_action(game: Game) -> int:
    """The pass move as the kernels take it: -1 where the rules have no pass."""
    return -1 if game.pass_move is None else game.pass_move
