"""Study: what Agon knows of a position, for players. Values in words and judgements of moves
(:mod:`~agon.study.values`), exact values kept and reused (:mod:`~agon.study.store`), analysis
of positions and reviews of games (:mod:`~agon.study.analysis`), and puzzles from solved
positions (:mod:`~agon.study.puzzles`). Written once for every game: it asks the plugin."""

from __future__ import annotations

from agon.core.game import Game
from agon.core.limits import Limit
from agon.search.agent import Agent
from agon.search.registry import register_agent


def _strongest(game: Game, limit: Limit | None, seed: int | None) -> Agent:
    """The strongest agent (:mod:`agon.study.strongest`), imported only when one is made."""
    from agon.study.strongest import StrongestAgent

    return StrongestAgent(game, limit, seed).warmed_up()


def _strongest_without_store(game: Game, limit: Limit | None, seed: int | None) -> Agent:
    """The strongest agent without the stores of exact values: the solver and alpha-beta alone,
    as it plays on a board nobody has solved."""
    from agon.study.strongest import StrongestAgent

    return StrongestAgent(game, limit, seed, exact=None).warmed_up()


register_agent("strongest", _strongest)
register_agent("strongest-nostore", _strongest_without_store)
