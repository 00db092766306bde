"""What Kayles declares to Agon. The tests register it by hand (``agon.games.register``); a
game of its own package would name ``PLUGIN`` in the entry-point group ``agon.games``."""

from __future__ import annotations

from agon.core.plugin import GamePlugin, Judging, Observation, Solving, Tooling
from kayles import observation
from kayles.rules import Kayles, KaylesState

PLUGIN: GamePlugin[Kayles, KaylesState] = GamePlugin(
    game=Kayles,
    credit="Kayles, a traditional game (Dudeney, Loyd)",
    texts="kayles",
    renderer="kayles.render",
    max_game_length=lambda game: game.pins,  # every move knocks down a pin at least
    observation=Observation(
        names=lambda game: observation.PLANES, shape=observation.shape, planes=observation.planes
    ),
    solving=Solving(
        default_table_bits=lambda game: 12,
        small=lambda game: True,
        largest_margin=lambda game: 1,
        warm_up=lambda: Kayles(1),
    ),
    judging=Judging(outcome_only=True),  # a win or a loss, never points
    tooling=Tooling(
        order=200,
        variant_examples=(
            {"pins": 7},
            {"pins": 1},  # one move, and the game is over
            {"pins": 5, "leftmost": True},  # one legal move at every turn
        ),
    ),
)
