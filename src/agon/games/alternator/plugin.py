"""What Alternator declares to the rest of Agon (:class:`agon.core.plugin.GamePlugin`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agon.core.plugin import BoardRenderer, GamePlugin, Judging, KomiRule, Observation, Solving
from agon.games.alternator import observation
from agon.games.alternator.rules import Alternator, AlternatorState

if TYPE_CHECKING:
    from agon.core.fast import FastTwin
    from agon.core.results import Catalogue
    from agon.core.symmetry import Symmetries

SMALL_CELLS = 12
"""Boards of up to this many cells are solved in at most a few hundred thousand nodes."""


def _renderer() -> BoardRenderer:
    from agon.games.alternator import render

    return render


def _fast_twin(game: Alternator) -> FastTwin:
    from agon.games.alternator import fast

    return fast.fast_twin(game)


def _catalogue() -> Catalogue:
    from agon.games.alternator import results

    return results.CATALOGUE


def _symmetries(game: Alternator) -> Symmetries:
    from agon.games.alternator import symmetry

    return symmetry.symmetries(game)


def _small(game: Alternator) -> bool:
    return game.cells <= SMALL_CELLS


PLUGIN: GamePlugin[Alternator, AlternatorState] = GamePlugin(
    game=Alternator,
    summary="Grow trees on a checkerboard: every merge moves the root to the other colour.",
    credit="Alternator by Gregory Van Patten",
    click_help=(
        "Click a cell to draw a pit there, then a highlighted neighbour to be its root. "
        "The larger tree attaches to the smaller; a tree scores for the colour of its root cell."
    ),
    texts="agon.games.alternator",
    languages=("en", "es", "nl", "lt"),
    renderer=_renderer,
    # every move but a pass turns a root into a pit: at most W×H − 1 placements, with at most
    # one pass after each and two at the end
    max_game_length=lambda game: 2 * game.cells,
    observation=Observation(
        names=lambda game: observation.PLANES, shape=observation.shape, planes=observation.planes
    ),
    fast_twin=_fast_twin,
    solving=Solving(
        # 16 bytes an entry: 2**22 buckets of two take 128 MiB
        table_bits=lambda game: 18 if _small(game) else 22,
        small=_small,
        largest_margin=lambda game: game.cells,
        komi_rule=lambda game: KomiRule.LEFT_OUT,
        without_komi=lambda game: replace(game, komi_points=0.0),
        symmetries=_symmetries,
        tables_bits=23,
        warm_up=lambda: Alternator(1, 2),
    ),
    # margins run up to the board's cells: a point or two is a fine difference there
    judging=Judging(thresholds=(2.0, 4.0, 8.0)),
    benchmarks=(("alternator-8x8", {}),),
    checks=(
        ("alternator-3x3", {"size": "3x3"}),
        ("alternator-5x4-komi-0", {"size": "5x4", "komi": 0}),
        ("alternator-1x7", {"size": "1x7"}),
    ),
    catalogue=_catalogue,
    variant_examples=({}, {"size": "3x3"}, {"size": "2x3", "komi": 0}, {"size": "1x7"}),
    order=1,
)
