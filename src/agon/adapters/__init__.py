"""Agon's games for the frameworks researchers already use: OpenSpiel and PettingZoo.

``agon.adapters.openspiel`` registers the games with ``pyspiel``; ``agon.adapters.pettingzoo``
builds AEC environments. Both need the ``adapters`` extra (``pip install agon[adapters]``);
this module needs neither. It holds what the two share, each read from the game's declared
facts or its rules engine and never recomputed: the observation planes, the bound on a game's
length and the outcome of a finished game (docs/adapters.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from agon.core.errors import AgonError
from agon.core.game import Game, State
from agon.core.plugin import Observation
from agon.games import plugin_of

Planes = npt.NDArray[np.float32]

AGENTS = ("black", "white")
"""Agent names, indexed by :class:`Player` (also OpenSpiel's player numbers 0 and 1)."""

MAX_GAME_LENGTH = 2**31 - 1
"""OpenSpiel stores the longest game as a C int: longer bounds are cut to it."""


def _observation(game: Game) -> Observation[Any, Any]:
    declared = plugin_of(game).observation
    if declared is None:
        raise AgonError(f"{game.title} declares no observation planes")
    return declared


def plane_names(game: Game) -> tuple[str, ...]:
    """The name of each observation plane, in order."""
    return tuple(_observation(game).names(game))


def observation_shape(game: Game) -> tuple[int, ...]:
    """``(planes, ...)``: the planes, then the board's own shape (ranks and files, points)."""
    return tuple(_observation(game).shape(game))


def unbounded_planes(game: Game) -> tuple[str, ...]:
    """The planes whose values may exceed 1."""
    return _observation(game).unbounded


def observation_planes(state: State) -> Planes:
    """The position as float32 planes, the same for both players (docs/adapters.md)."""
    planes: Planes = _observation(state.game).planes(state)
    return planes


def outcome(state: State) -> float:
    """Black's result: +1 win, −1 loss, 0 draw or game not over (White's is the opposite)."""
    return result_of(state.margin) if state.is_over else 0.0


def result_of(final_margin: float) -> float:
    """Black's result (+1 win, −1 loss, 0 draw) of a game that ended with this margin."""
    return float(np.sign(final_margin))


def max_game_length(game: Game) -> int:
    """An upper bound on the number of moves (passes included) of any game of this variant,
    as its game declares it, cut to :data:`MAX_GAME_LENGTH`."""
    return min(plugin_of(game).max_game_length(game), MAX_GAME_LENGTH)


__all__ = [
    "AGENTS",
    "max_game_length",
    "observation_planes",
    "observation_shape",
    "outcome",
    "plane_names",
    "unbounded_planes",
]
