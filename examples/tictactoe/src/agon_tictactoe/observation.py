"""Tic-tac-toe positions as observation planes for learning frameworks (OpenSpiel, PettingZoo)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agon.core.player import Player
from agon_tictactoe.rules import EMPTY, STONES, TicTacToe, TicTacToeState

if TYPE_CHECKING:
    import numpy.typing as npt
    from numpy import float32

PLANES = ("black_stone", "white_stone", "empty", "black_to_move")


def shape(game: TicTacToe) -> tuple[int, ...]:
    """``(planes, ranks, files)``."""
    return len(PLANES), game.height, game.width


def planes(state: TicTacToeState) -> npt.NDArray[float32]:
    import numpy as np  # (not at import: the plugin loads this module)

    game = state.game
    board = np.array(list(state.board)).reshape(game.height, game.width)
    result = np.zeros(shape(game), dtype=np.float32)
    result[0] = board == STONES[0]
    result[1] = board == STONES[1]
    result[2] = board == EMPTY
    result[3] = float(state.to_move is Player.BLACK)
    return result
