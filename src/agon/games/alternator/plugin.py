"""What Alternator declares to the rest of Agon (:class:`agon.core.plugin.GamePlugin`)."""

from __future__ import annotations

from dataclasses import replace

from agon.core.plugin import GamePlugin, Judging, KomiRule, Observation, Solving, Tooling
from agon.games.alternator import observation
from agon.games.alternator.rules import Alternator, AlternatorState

SMALL_CELLS = 12
"""Boards of up to this many cells are solved in at most a few hundred thousand nodes."""


def _small(game: Alternator) -> bool:
    return game.cells <= SMALL_CELLS


PLUGIN: GamePlugin[Alternator, AlternatorState] = GamePlugin(
    game=Alternator,
    credit="Alternator by Gregory Van Patten",
    texts="agon.games.alternator",
    languages=("en", "es", "nl", "lt"),
    renderer="agon.games.alternator.render",
    # every move but a pass turns a root into a pit: at most W×H − 1 placements, with at most
    # one pass after each and two at the end
    max_game_length=lambda game: 2 * game.cells,
    observation=Observation(
        names=lambda game: observation.PLANES, shape=observation.shape, planes=observation.planes
    ),
    fast_twin="agon.games.alternator.fast:fast_twin",
    solving=Solving(
        # 16 bytes an entry: 2**22 buckets of two take 128 MiB
        default_table_bits=lambda game: 18 if _small(game) else 22,
        small=_small,
        largest_margin=lambda game: game.cells,
        komi_rule=lambda game: KomiRule.LEFT_OUT,
        without_komi=lambda game: replace(game, komi_points=0.0),
        symmetries="agon.games.alternator.symmetry:symmetries",
        # (for a proof-number search asked for: passes make many transpositions)
        refined_proof_numbers=lambda game: True,
        warm_up=lambda: Alternator(1, 2),
    ),
    # margins run up to the board's cells: a point or two is a fine difference there
    judging=Judging(thresholds=(2.0, 4.0, 8.0)),
    tooling=Tooling(
        order=1,
        benchmarks=(("alternator-8x8", {}),),
        checks=(
            ("alternator-3x3", {"size": "3x3"}),
            ("alternator-5x4-komi-0", {"size": "5x4", "komi": 0}),
            ("alternator-1x7", {"size": "1x7"}),
        ),
        variant_examples=({}, {"size": "3x3"}, {"size": "2x3", "komi": 0}, {"size": "1x7"}),
        catalogue="agon.games.alternator.results:CATALOGUE",
        catalogue_table_bits=23,
    ),
)
