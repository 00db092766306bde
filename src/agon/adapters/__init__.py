"""Agon's games for the frameworks researchers already use: OpenSpiel and PettingZoo.

``agon.adapters.openspiel`` registers the games with ``pyspiel``; ``agon.adapters.pettingzoo``
builds AEC environments. Both need the ``adapters`` extra (``pip install agon[adapters]``);
this module needs neither. It holds what the two share, read from the rules engine and never
recomputed: the observation planes and the outcome of a finished game (docs/adapters.md).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agon.core.errors import AgonError
from agon.core.game import Game, State
from agon.core.player import Player
from agon.games.alak.rules import Alak, AlakRules, AlakState
from agon.games.alternator.rules import DIRECTIONS, Alternator, AlternatorState

Planes = npt.NDArray[np.float32]

AGENTS = ("black", "white")
"""Agent names, indexed by :class:`Player` (also OpenSpiel's player numbers 0 and 1)."""

ALTERNATOR_PLANES = (
    "root",
    "tree_size",
    *(f"stem_{direction}" for direction in DIRECTIONS),
    "dark_cell",
    "black_to_move",
    "last_move_passed",
)
ALAK_PLANES = (
    "black_stone",
    "white_stone",
    "empty",
    "forbidden",
    "black_to_move",
    "last_move_passed",
    "black_prisoners",
    "white_prisoners",
)

# OpenSpiel stores the longest game as a C int.
_MAX_GAME_LENGTH = 2**31 - 1


def plane_names(game: Game) -> tuple[str, ...]:
    """The name of each observation plane, in order."""
    if isinstance(game, Alternator):
        return ALTERNATOR_PLANES
    if isinstance(game, Alak):
        return ALAK_PLANES
    raise AgonError(f"no observation planes are defined for {game.title}")


def observation_shape(game: Game) -> tuple[int, ...]:
    """``(planes, ranks, files)`` for Alternator, ``(planes, points)`` for Alak."""
    if isinstance(game, Alternator):
        return len(ALTERNATOR_PLANES), game.height, game.width
    if isinstance(game, Alak):
        return len(ALAK_PLANES), game.size
    raise AgonError(f"no observation planes are defined for {game.title}")


def observation_planes(state: State) -> Planes:
    """The position as float32 planes, the same for both players (docs/adapters.md)."""
    if isinstance(state, AlternatorState):
        return _alternator_planes(state)
    if isinstance(state, AlakState):
        return _alak_planes(state)
    raise AgonError(f"no observation planes are defined for {state.game.title}")


def _alternator_planes(state: AlternatorState) -> Planes:
    game = state.game
    planes = np.zeros(observation_shape(game), dtype=np.float32)
    for cell, value in enumerate(state.cells):
        rank, file = divmod(cell, game.width)
        if value > 0:
            planes[0, rank, file] = 1.0
            planes[1, rank, file] = value / game.cells
        else:
            planes[2 + (-1 - value), rank, file] = 1.0
        planes[6, rank, file] = float(game.is_dark(cell))
    planes[7] = float(state.to_move is Player.BLACK)
    planes[8] = float(state.passes > 0)
    return planes


def _alak_planes(state: AlakState) -> Planes:
    game = state.game
    planes = np.zeros(observation_shape(game), dtype=np.float32)
    board = np.array(list(state.board))
    planes[0] = board == "x"
    planes[1] = board == "o"
    planes[2] = board == "."
    legal = state.legal_moves()
    if state.to_move is not None:
        planes[3] = planes[2]
        planes[3, [move for move in legal if move < game.size]] = 0.0
    planes[4] = float(state.to_move is Player.BLACK)
    planes[5] = float(state.current.passes > 0)
    planes[6] = state.prisoners[0] / game.size
    planes[7] = state.prisoners[1] / game.size
    return planes


def outcome(state: State) -> float:
    """Black's result: +1 win, −1 loss, 0 draw or game not over (White's is the opposite)."""
    if not state.is_over:
        return 0.0
    return float(np.sign(state.margin))


def max_game_length(game: Game) -> int:
    """An upper bound on the number of moves (passes included) of any game of this variant.

    Alternator: every move but a pass turns a root into a pit, so at most W×H − 1 placements,
    with at most one pass after each and two at the end: 2×W×H. Alak: every rule set bounds
    the game by the number of boards (3^N): baljeu's no-repetition allows 3^N − 1 placements;
    tromp-taylor's superko as many, with a pass between any two: 2×3^N; traditional ends at the
    third occurrence of a (board, player) position: 4×3^N. Capped at 2^31 − 1, OpenSpiel's
    limit, which only bounds Alak from 19 points on (a cap no real game approaches).
    """
    if isinstance(game, Alternator):
        bound = 2 * game.cells
    elif isinstance(game, Alak):
        boards = 3**game.size
        factor = {AlakRules.BALJEU: 1, AlakRules.TROMP_TAYLOR: 2, AlakRules.TRADITIONAL: 4}
        bound = factor[game.rules] * boards
    else:
        raise AgonError(f"no game-length bound is known for {game.title}")
    return min(bound, _MAX_GAME_LENGTH)


__all__ = [
    "AGENTS",
    "ALAK_PLANES",
    "ALTERNATOR_PLANES",
    "max_game_length",
    "observation_planes",
    "observation_shape",
    "outcome",
    "plane_names",
]
