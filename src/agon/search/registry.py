"""Agents by spec: ``make_agent("mcts:2s", game, seed=1)``."""

from __future__ import annotations

from collections.abc import Callable

from agon.core.errors import AgonError, quoted
from agon.core.game import Game
from agon.core.limits import Limit
from agon.search.agent import Agent, RandomAgent
from agon.search.alphabeta import AlphaBetaAgent
from agon.search.base import FastAgent
from agon.search.greedy import GreedyAgent
from agon.search.mcts import InformedMctsAgent, MctsAgent

AgentFactory = Callable[[Game, Limit | None, int | None], Agent]


def _fast(agent_class: type[FastAgent]) -> AgentFactory:
    return lambda game, limit, seed: agent_class(game, limit, seed).warmed_up()


AGENTS: dict[str, AgentFactory] = {
    "random": lambda game, limit, seed: RandomAgent(game, seed),
    "greedy": _fast(GreedyAgent),
    "mcts": _fast(MctsAgent),
    "mcts-informed": _fast(InformedMctsAgent),
    "alphabeta": _fast(AlphaBetaAgent),
}


def make_agent(spec: str, game: Game, seed: int | None = None) -> Agent:
    """Build an agent from ``NAME`` or ``NAME:BUDGET``; a bad spec is an AgonError."""
    name, _, budget_text = spec.strip().lower().partition(":")
    if name not in AGENTS:
        raise AgonError(f"unknown agent {quoted(spec)}: choose one of {', '.join(AGENTS)}")
    limit = Limit.parse(budget_text) if budget_text else None
    return AGENTS[name](game, limit, seed)
