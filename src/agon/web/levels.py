"""The computer's named levels, and the thinking itself (run in a worker process).

Each level lists agent specs from strongest wish to safest fallback; the first one the agent
registry has is used, so the levels keep working whichever agents a version ships.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agon.core.errors import AgonError, quoted
from agon.games import make_game, plugins
from agon.search.registry import AGENTS, make_agent


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
)
LEVELS_BY_KEY = {level.key: level for level in LEVELS}
DEFAULT_LEVEL = "medium"


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
    analysis = make_agent(spec, game, seed=seed).analyse(state)
    return {
        "move": game.format_move(analysis.best_move),
        "value": analysis.value,
        "pv": [game.format_move(move) for move in analysis.principal_variation],
        "proven": analysis.proven,
        "spec": spec,
    }



def warm_up() -> None:
    """Run once in each worker process: load the agents' compiled kernels before a game needs them.
    """
    for found in plugins().values():
        make_agent(first_available(("greedy", "random")), found.make(), seed=0)
