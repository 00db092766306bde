"""The computer's named levels, and the thinking itself (run in a worker process).

Each level lists agent specs from strongest wish to safest fallback; the first one the agent
registry has is used, so the levels keep working whichever agents a version ships.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import agon.study  # noqa: F401 - (registers the strongest agent)
from agon.core.errors import AgonError, quoted
from agon.core.game import Game
from agon.games import make_game, plugins
from agon.search.agent import Agent
from agon.search.registry import AGENTS, make_agent
from agon.solve.solver import warm_up_kernels


@dataclass(frozen=True)
class Level:
    key: str
    label: str
    specs: tuple[str, ...]


LEVELS: tuple[Level, ...] = (
    Level("beginner", "Beginner", ("random",)),
    Level("easy", "Easy", ("greedy", "random")),
    Level("medium", "Medium", ("mcts:1s", "greedy", "random")),
    Level("hard", "Hard", ("alphabeta:2s", "mcts:3s", "mcts:1s", "greedy", "random")),
    Level("strongest", "Strongest", ("strongest:2s", "alphabeta:2s", "mcts:1s", "random")),
)
LEVELS_BY_KEY = {level.key: level for level in LEVELS}
DEFAULT_LEVEL = "medium"
KEPT_AGENTS = 2
"""Agents each worker keeps between moves (one of the strongest holds its solver's table, about
a hundred megabytes)."""
_worker = threading.local()


def first_available(specs: tuple[str, ...]) -> str:
    """The first spec whose agent the registry has (checked by name: building one compiles)."""
    for spec in specs:
        if spec.partition(":")[0] in AGENTS:
            return spec
    return "random"


def level_spec(key: str) -> str:
    try:
        level = LEVELS_BY_KEY[key]
    except KeyError:
        names = ", ".join(LEVELS_BY_KEY)
        raise AgonError(f"unknown level {quoted(key)}: choose one of {names}") from None
    return first_available(level.specs)


def think(
    game_name: str, options: dict[str, Any], moves: list[str], spec: str, seed: int
) -> dict[str, Any]:
    """Rebuild the position from its moves and let the agent analyse it.

    A plain top-level function of plain values, so that it can run in another process.
    """
    game = make_game(game_name, options)
    state = game.new_state()
    for text in moves:
        state.play_text(text)
    analysis = kept_agent(game, spec, seed).analyse(state)
    return {
        "move": game.format_move(analysis.best_move),
        "value": analysis.value,
        "pv": [game.format_move(move) for move in analysis.principal_variation],
        "proven": analysis.proven,
        "spec": spec,
    }


def kept_agent(game: Game, spec: str, seed: int) -> Agent:
    """The agent ``spec`` of ``game``'s variant that this worker (process or thread) keeps from
    move to move, and from game to game, so that its tables (the solver's, alpha-beta's, MCTS's
    tree where the game goes on from it) are not lost after each move; made with ``seed`` where
    it is new. The :data:`KEPT_AGENTS` used last are kept."""
    kept: OrderedDict[tuple[str, str], Agent] | None = getattr(_worker, "agents", None)
    if kept is None:
        kept = _worker.agents = OrderedDict()
    key = (f"{game.name} {json.dumps(game.options(), sort_keys=True)}", spec)
    agent = kept.pop(key, None) or make_agent(spec, game, seed=seed)
    kept[key] = agent
    while len(kept) > KEPT_AGENTS:
        _, oldest = kept.popitem(last=False)
        oldest.close()
    return agent


def warm_up() -> None:
    """Run once in each worker process: load the agents' compiled kernels, and the solver's
    (the strongest level's, the hints' and the analyses'), before a game needs them."""
    for found in plugins().values():
        make_agent(first_available(("greedy", "random")), found.make(), seed=0)
    warm_up_kernels()
