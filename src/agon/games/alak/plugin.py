"""What Alak declares to the rest of Agon (:class:`agon.core.plugin.GamePlugin`)."""

from __future__ import annotations

from dataclasses import replace

from agon.core.plugin import GamePlugin, Judging, KomiRule, Observation, Solving, Tooling
from agon.games.alak import observation
from agon.games.alak.rules import Alak, AlakState, Repetition, Scoring

SMALL_POINTS = 7
"""Boards of up to this many points are solved in at most a few hundred thousand nodes."""


def _max_game_length(game: Alak) -> int:
    """Every rule set bounds a game by the number of boards, 3^N: where no earlier board may
    return, 3^N − 1 placements, and where one may pass, a pass between any two; under ko a
    game ends at the third occurrence of a (board, player) position: 4 × 3^N."""
    rules = game.rule_set
    repeats = 4 if rules.repetition is Repetition.KO else 2 if rules.passing else 1
    return repeats * int(3**game.size)


def _table_bits(game: Alak) -> int:
    """Entries keep two summaries of 16·(N+33) bytes: 2**19 buckets up to 12 points (1.4 GiB
    on 12), 2**18 up to 16, 2**17 beyond."""
    if _small(game):
        return 15
    return 19 if game.size <= 12 else 18 if game.size <= 16 else 17


def _small(game: Alak) -> bool:
    return game.size <= SMALL_POINTS


PLUGIN: GamePlugin[Alak, AlakState] = GamePlugin(
    game=Alak,
    credit="Alak from A. K. Dewdney’s The Planiverse",
    texts="agon.games.alak",
    languages=("en", "es", "nl", "lt"),
    renderer="agon.games.alak.render",
    max_game_length=_max_game_length,
    observation=Observation(
        names=lambda game: observation.PLANES, shape=observation.shape, planes=observation.planes,
        unbounded=("black_prisoners", "white_prisoners"),
    ),
    fast_twin="agon.games.alak.fast:fast_twin",
    solving=Solving(
        default_table_bits=_table_bits,
        small=_small,
        # prisoners make the margin unbounded
        largest_margin=lambda game: (
            None if game.rule_set.scoring is Scoring.AREA_AND_PRISONERS else game.size
        ),
        # a draw by repetition is worth 0 whatever the komi: under ko the search keeps it
        komi_rule=lambda game: (
            KomiRule.SEARCHED if game.rule_set.repetition is Repetition.KO
            else KomiRule.SUBTRACTED
        ),
        without_komi=lambda game: replace(game, komi_points=0.0),
        symmetries="agon.games.alak.symmetry:symmetries",
        proof_numbers=lambda game: True,
        # passes and returns to earlier boards make many transpositions
        refined_proof_numbers=lambda game: game.rule_set.passing,
        # with no pass, every move but a capture adds a stone
        depth_in_setbacks=lambda game: not game.rule_set.passing,
        # on one point a game ends at once, before the proof-number search that three reach
        warm_up=lambda: Alak(3),
    ),
    # a few points decide most games on a line
    judging=Judging(thresholds=(1.0, 2.0, 3.0)),
    tooling=Tooling(
        order=2,
        benchmarks=(
            ("alak-11-baljeu", {}),
            ("alak-11-traditional", {"rules": "traditional"}),
            ("alak-11-tromp-taylor", {"rules": "tromp-taylor"}),
        ),
        checks=(
            ("alak-7-baljeu-noedge", {"size": 7, "edge_capture": False}),
            ("alak-6-traditional", {"size": 6, "rules": "traditional"}),
            ("alak-5-tromp-taylor-komi-1", {"size": 5, "rules": "tromp-taylor", "komi": 1}),
        ),
        variant_examples=(
            {},
            {"size": 6},
            {"size": 7, "edge_capture": False},
            {"size": 3, "rules": "traditional", "komi": 0.5},
            {"size": 6, "rules": "tromp-taylor"},
        ),
        catalogue="agon.games.alak.results:CATALOGUE",
        catalogue_table_bits=20,
    ),
)
