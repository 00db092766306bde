"""Agents by spec: ``make_agent("mcts:2s", game, seed=1)``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from agon.core.errors import AgonError, quoted
from agon.core.game import Game
from agon.core.limits import Limit
from agon.search.agent import Agent, RandomAgent

AgentFactory = Callable[[Game, Limit | None, int | None], Agent]


def _fast(module: str, class_name: str) -> AgentFactory:
    """A factory of a compiled agent, whose module (and kernels) is imported only when an agent
    is made: a command that makes none starts without them."""

    def make(game: Game, limit: Limit | None, seed: int | None) -> Agent:
        agent_class = getattr(importlib.import_module(f"agon.search.{module}"), class_name)
        return agent_class(game, limit, seed).warmed_up()  # type: ignore[no-any-return]

    return make


AGENTS: dict[str, AgentFactory] = {
    "random": lambda game, limit, seed: RandomAgent(game, seed),
    "greedy": _fast("greedy", "GreedyAgent"),
    "mcts": _fast("mcts", "MctsAgent"),
    "mcts-informed": _fast("mcts", "InformedMctsAgent"),
    "alphabeta": _fast("alphabeta", "AlphaBetaAgent"),
}


def make_agent(spec: str, game: Game, seed: int | None = None) -> Agent:
    """Build an agent from ``NAME`` or ``NAME:BUDGET``; a bad spec is an AgonError."""
    name, _, budget_text = spec.strip().lower().partition(":")
    if name not in AGENTS:
        raise AgonError(f"unknown agent {quoted(spec)}: choose one of {', '.join(AGENTS)}")
    limit = Limit.parse(budget_text) if budget_text else None
    return AGENTS[name](game, limit, seed)
