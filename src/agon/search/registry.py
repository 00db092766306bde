"""Agents by spec: ``make_agent("mcts:2s", game, seed=1)``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points

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


ENTRY_POINT_GROUP = "agon.agents"
"""Installed packages name more agents here: ``NAME = "module:factory"``, the factory called
as ``factory(game, limit, seed)`` (Agon's own ``openspiel-mcts``, in the adapters)."""


def _installed(point: EntryPoint) -> AgentFactory:
    """The factory an entry point names, loaded when an agent is made: one whose package
    needs what is not installed fails then, in words, and the others still work."""

    def make(game: Game, limit: Limit | None, seed: int | None) -> Agent:
        try:
            factory = point.load()
        except ImportError as missing:
            raise AgonError(
                f"the agent {point.name} needs a package that is not installed ({missing})"
            ) from None
        return factory(game, limit, seed)  # type: ignore[no-any-return]

    return make


for _point in entry_points(group=ENTRY_POINT_GROUP):
    AGENTS.setdefault(_point.name, _installed(_point))


def register_agent(name: str, factory: AgentFactory) -> None:
    """Add an agent that a later layer makes (the study's ``strongest``, which reads the stored
    exact values): ``factory(game, limit, seed)``; it is listed after the search's own."""
    AGENTS[name] = factory


MAX_SPEC_LENGTH = 100
"""The longest agent spec read (``alphabeta:500ms`` is 15 characters)."""


def parse_spec(spec: str) -> tuple[str, Limit | None]:
    """The agent's name and budget in ``NAME`` or ``NAME:BUDGET``, checked (without making the
    agent, which may compile it); a bad spec is an AgonError."""
    if len(spec) > MAX_SPEC_LENGTH:
        raise AgonError(f"agent spec {quoted(spec)} is over {MAX_SPEC_LENGTH} characters")
    name, _, budget_text = spec.strip().lower().partition(":")
    if name not in AGENTS:
        raise AgonError(f"unknown agent {quoted(spec)}: choose one of {', '.join(AGENTS)}")
    return name, Limit.parse(budget_text) if budget_text else None


def make_agent(spec: str, game: Game, seed: int | None = None) -> Agent:
    """Build an agent from ``NAME`` or ``NAME:BUDGET``; a bad spec is an AgonError."""
    name, limit = parse_spec(spec)
    return AGENTS[name](game, limit, seed)
