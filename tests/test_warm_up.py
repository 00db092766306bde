"""An agent is made warm: every kernel its moves call is loaded (or compiled) when it is made,
none on a move's clock, the first moves of a game and a search that goes on from an earlier
move's included (the first genmove of a fresh install forfeited on time before)."""

from __future__ import annotations

import sys

import pytest
from numba.core.dispatcher import Dispatcher

import agon.study  # noqa: F401 - (registers the strongest agent, made warm as the others)
from agon.core.limits import Limit
from agon.games import make_game, names
from agon.search.registry import AGENTS, make_agent


def compiled_signatures() -> dict[str, int]:
    """How many compiled forms each of Agon's loaded kernels has."""
    found: dict[str, int] = {}
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("agon"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Dispatcher):
                name = f"{value.py_func.__module__}.{value.py_func.__qualname__}"
                found[name] = len(value.signatures)
    return found


@pytest.mark.parametrize("game_name", names())
@pytest.mark.parametrize("agent_name", list(AGENTS))
def test_no_kernel_is_compiled_on_a_moves_clock(game_name: str, agent_name: str) -> None:
    game = make_game(game_name)
    spec = agent_name if agent_name in ("random", "greedy") else f"{agent_name}:50ms"
    agent = make_agent(spec, game, seed=1)
    before = compiled_signatures()
    state = game.new_state()
    for _ in range(6):
        if state.is_over:
            break
        state.play(agent.analyse(state, Limit(seconds=0.02)).best_move)
    after = compiled_signatures()
    compiled_late = {name for name, count in after.items() if count != before.get(name, 0)}
    assert not compiled_late, f"compiled on a move's clock: {sorted(compiled_late)}"
