"""Alternator positions as observation planes for learning frameworks (docs/adapters.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agon.core.player import Player
from agon.games.alternator.rules import DIRECTIONS, Alternator, AlternatorState

if TYPE_CHECKING:
    import numpy.typing as npt
    from numpy import float32

PLANES = (
    "root",
    "tree_size",
    *(f"stem_{direction}" for direction in DIRECTIONS),
    "dark_cell",
    "black_to_move",
    "last_move_passed",
)


def shape(game: Alternator) -> tuple[int, ...]:
    """``(planes, ranks, files)``."""
    return len(PLANES), game.height, game.width


def planes(state: AlternatorState) -> npt.NDArray[float32]:
    import numpy as np  # (not at import: the game's plugin loads this module)

    game = state.game
    result = np.zeros(shape(game), dtype=np.float32)
    for cell, value in enumerate(state.cells):
        rank, file = divmod(cell, game.width)
        if value > 0:
            result[0, rank, file] = 1.0
            result[1, rank, file] = value / game.cells
        else:
            result[2 + (-1 - value), rank, file] = 1.0
        result[6, rank, file] = float(game.is_dark(cell))
    result[7] = float(state.to_move is Player.BLACK)
    result[8] = float(state.passes > 0)
    return result
