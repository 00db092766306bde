"""An agent is made warm: every kernel its moves call is loaded (or compiled) when it is made,
none on a move's clock, the first moves of a game and a search that goes on from an earlier
move's included (the first genmove of a fresh install forfeited on time before).

Each case runs in a fresh interpreter (this file run as a script): in the test process, a
kernel that another test loaded first would hide one loaded late (a fresh alpha-beta agent
loaded Alak's ``_bit`` on its first move, unseen while earlier tests had loaded it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import agon.study  # noqa: F401 - (registers the strongest agent, made warm as the others)
from agon.games import names
from agon.search.registry import AGENTS

SECONDS_A_CASE = 300
"""Generous: a cold compile cache compiles the kernels first."""


def compiled_signatures() -> dict[str, int]:
    """How many compiled forms each of Agon's loaded kernels has."""
    from numba.core.dispatcher import Dispatcher

    found: dict[str, int] = {}
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("agon"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Dispatcher):
                name = f"{value.py_func.__module__}.{value.py_func.__qualname__}"
                found[name] = len(value.signatures)
    return found


def compiled_on_a_moves_clock(game_name: str, agent_name: str) -> list[str]:
    """The kernels that a new agent's first moves loaded or compiled, after it was made."""
    from agon.core.limits import Limit
    from agon.games import make_game
    from agon.search.registry import make_agent

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
    return sorted(name for name, count in after.items() if count != before.get(name, 0))


@pytest.mark.parametrize("game_name", names())
@pytest.mark.parametrize("agent_name", list(AGENTS))
def test_no_kernel_is_compiled_on_a_moves_clock(game_name: str, agent_name: str) -> None:
    ran = subprocess.run(
        [sys.executable, __file__, game_name, agent_name],
        capture_output=True, text=True, timeout=SECONDS_A_CASE, check=False,
    )
    assert ran.returncode == 0, ran.stderr
    compiled_late = json.loads(ran.stdout.strip().splitlines()[-1])
    assert not compiled_late, f"compiled on a move's clock: {compiled_late}"


if __name__ == "__main__":
    print(json.dumps(compiled_on_a_moves_clock(sys.argv[1], sys.argv[2])))
