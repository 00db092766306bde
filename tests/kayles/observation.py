"""Kayles positions as observation planes for learning frameworks (OpenSpiel, PettingZoo)."""

from __future__ import annotations

from typing import Any

from agon.core.player import Player
from kayles.rules import STANDING, Kayles, KaylesState

PLANES = ("standing", "black_to_move")


def shape(game: Kayles) -> tuple[int, ...]:
    """``(planes, pins)``."""
    return len(PLANES), game.pins


def planes(state: KaylesState) -> Any:
    import numpy as np

    result = np.zeros(shape(state.game), dtype=np.float32)
    result[0] = [pin == STANDING for pin in state.row]
    result[1] = float(state.player is Player.BLACK)
    return result
