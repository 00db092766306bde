"""What every game shares: players, the game/state protocol, errors, results and records."""

from agon.core.errors import AgonError, IllegalMove, NotationError, PositionError, RecordError
from agon.core.game import Game, Move, Score, State
from agon.core.player import Player

__all__ = [
    "AgonError",
    "Game",
    "IllegalMove",
    "Move",
    "NotationError",
    "Player",
    "PositionError",
    "RecordError",
    "Score",
    "State",
]
