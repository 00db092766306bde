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
from typing import Any

from numba import cfunc
from numba.core.errors import NumbaExperimentalFeatureWarning

from agon.core.fast import KERNEL_NAMES, KERNELS, FastTwin
from agon.core.game import Game
from agon.games import plugin_of
from agon.search.reference import reference_twin

# Numba still calls first-class function arguments experimental; they are what lets one cached
# search serve every game, and the tests check every search against the reference rules
warnings.filterwarnings(
    "ignore", "First-class function type", category=NumbaExperimentalFeatureWarning
)

class Callbacks:
    """A twin's kernels as C callbacks, each compiled (or loaded from Numba's cache) when first
    asked for, and built once per game: every variant shares them. Read them by name, as the
    twin's own: ``callbacks.play``."""

    def __init__(self, twin: FastTwin) -> None:
        self._twin = twin

    def __getattr__(self, name: str) -> Any:
        if name not in KERNEL_NAMES:
            raise AttributeError(f"no kernel {name!r} in the fast-twin contract")
        twin = self.__dict__["_twin"]
        return callback(twin.kernels[name], _SIGNATURES[name], twin.cached)


_SIGNATURES = {kernel.name: kernel.signature for kernel in KERNELS}


@functools.cache
def twin_for(game: Game) -> FastTwin:
    """The fast twin of a variant: its game's own (built once per variant), or, for a game
    that has none, the twin over its reference rules (:mod:`agon.search.reference`)."""
    plugin = plugin_of(game)
    built = plugin.build_fast_twin(game)
    return reference_twin(game, plugin) if built is None else built


def kernels_for(twin: FastTwin) -> Callbacks:
    """The twin's kernels as C callbacks (:class:`Callbacks`)."""
    return Callbacks(twin)


@functools.cache
def callback(dispatcher: Any, signature: str, cached: bool) -> Any:
    """The C callback of a Numba function's Python function, of this signature (a Numba
    signature string), in Numba's on-disk cache where ``cached``."""
    return cfunc(signature, cache=cached)(dispatcher.py_func)


def pass_action(game: Game) -> int:
    """The pass move as the kernels take it: -1 where the rules have no pass."""
    return -1 if game.pass_move is None else game.pass_move
