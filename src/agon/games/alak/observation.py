"""Alak positions as observation planes for learning frameworks (docs/adapters.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agon.core.player import Player
from agon.games.alak.rules import Alak, AlakState

if TYPE_CHECKING:
    import numpy.typing as npt
    from numpy import float32

PLANES = (
    "black_stone",
    "white_stone",
    "empty",
    "forbidden",
    "black_to_move",
    "last_move_passed",
    "black_prisoners",
    "white_prisoners",
)


def shape(game: Alak) -> tuple[int, ...]:
    """``(planes, points)``."""
    return len(PLANES), game.size


def planes(state: AlakState) -> npt.NDArray[float32]:
    import numpy as np  # (not at import: the game's plugin loads this module)

    game = state.game
    result = np.zeros(shape(game), dtype=np.float32)
    board = np.array(list(state.board))
    result[0] = board == "x"
    result[1] = board == "o"
    result[2] = board == "."
    legal = state.legal_moves()
    if state.to_move is not None:
        result[3] = result[2]
        result[3, [move for move in legal if move < game.size]] = 0.0
    result[4] = float(state.to_move is Player.BLACK)
    result[5] = float(state.current.passes > 0)
    result[6] = state.prisoners[0] / game.size
    result[7] = state.prisoners[1] / game.size
    return result
