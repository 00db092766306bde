"""What the solver knows of a game before it searches: the facts the game declares for it, and
how it is asked to search. Nothing here compiles or loads kernels, so that commands can build
their options and help from it at once (:mod:`agon.solve.solver` does the searching)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from agon.core.game import Game
from agon.core.limits import Limit
from agon.core.plugin import KomiRule, Solving
from agon.games import plugin_of

UNDECLARED = Solving[Game](default_table_bits=lambda game: 18)
"""What the solver assumes of a game that declares nothing for it: no symmetry, no bound on
its margins, alpha-beta alone."""

DEFAULT_SPLIT_AFTER = Limit(seconds=600)
"""Where moves are solved apart, how long a position is searched before it is split
(:mod:`agon.solve.parallel`): long enough that splitting, which costs up to a budget's work
and the pruning between the replies, stays a small part of a long solve; short enough to keep
every CPU busy on it."""


def solving_facts(game: Game) -> Solving[Any]:
    """What the variant's game declares for the solver."""
    return plugin_of(game).solving or UNDECLARED


def komi_free(game: Game) -> tuple[Game, float]:
    """The variant whose values serve ``game``'s, and the komi to subtract from them: where
    the komi only shifts every final margin (its :class:`~agon.core.plugin.KomiRule` is not
    ``SEARCHED``), the variant with komi 0 and the game's komi; else the game itself and 0."""
    facts = solving_facts(game)
    if facts.without_komi is None or facts.komi_rule(game) is KomiRule.SEARCHED:
        return game, 0.0
    return facts.without_komi(game), game.komi


def default_table_bits(game: Game) -> int:
    """The transposition table's size its game declares (2**bits buckets)."""
    return solving_facts(game).default_table_bits(game)


def is_small_board(game: Game) -> bool:
    """Whether the variant is solved in at most a few hundred thousand nodes, so that small
    tables do (:func:`default_table_bits`, :data:`agon.solve.solver.NUMBERS_BITS`)."""
    return solving_facts(game).small(game)


class Search(StrEnum):
    """How the solver settles each null-window test of MTD(f)."""

    BOTH = "both"
    """Proof numbers and alpha-beta in turns (:meth:`agon.solve.mtdf.ValueSearch._turn`)."""
    PROOF_NUMBERS = "proof-numbers"
    """Depth-first proof-number search (:mod:`agon.solve.proof_numbers`)."""
    ALPHA_BETA = "alpha-beta"
    """Alpha-beta (:func:`agon.solve.kernels.negamax`), with iterative deepening where games
    can be long."""
