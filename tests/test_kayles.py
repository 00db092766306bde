"""Kayles (tests/kayles), the second example game, through every tool: its unusual variants
(over before the start, a single legal move at every turn, no pass, a win or a loss without
points) are played, or refused in words.

No entry point names Kayles: these tests register it around themselves, and run the command
line in a process of its own that registers it first (its options are read when the command
line is built)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agon.conformance import registered
from agon.core.errors import AgonError
from agon.games import make_game
from kayles import PLUGIN, Kayles
from web_fixtures import TestClient, client, make_client, replayed, start_game

__all__ = ["client", "make_client"]  # fixtures used by name

TESTS = Path(__file__).parent
LAUNCHER = (
    "from agon.games import register; from kayles import PLUGIN; register(PLUGIN); "
    "from agon.cli import main; main()"
)


@pytest.fixture(autouse=True)
def kayles_registered() -> Iterator[None]:
    with registered(PLUGIN):
        yield


def agon(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """``agon ARGS`` with Kayles registered, in a process of its own."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    result = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *args], input=input, capture_output=True, text=True,
        env=environment, timeout=120,
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


def agon_json(*args: str) -> Any:
    result = agon(*args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# --- the variant over before its start -------------------------------------------------------


def test_a_row_of_no_pins_is_refused_when_made() -> None:
    assert Kayles.from_options({"pins": 0}).new_state().is_over  # the rules allow it
    for make in (lambda: PLUGIN.make({"pins": 0}), lambda: make_game("kayles", {"pins": 0})):
        with pytest.raises(AgonError, match=r"over before its first move \(there are no pins\)"):
            make()
    refused = agon("state", "kayles", "--pins", "0")
    assert refused.returncode == 2
    assert "over before its first move" in refused.stderr


# --- the command line ---------------------------------------------------------------------------


def test_play_a_forced_game_and_a_scripted_one() -> None:
    forced = agon("play", "kayles", "--pins", "3", "--leftmost", "--black", "random",
                  "--white", "greedy", "--seed", "1")
    assert forced.returncode == 0, forced.stderr
    assert "Black wins (Black knocked down the last pin)." in forced.stdout
    assert "point" not in forced.stdout.split("Game over")[-1]
    person = agon("play", "kayles", "--pins", "4", "--white", "random", "--seed", "1",
                  input="2-3\n2\n1\nquit\n")
    assert person.returncode == 0, person.stderr
    assert "only standing pins can be knocked down" in person.stdout


def test_solve_match_and_quality() -> None:
    # an odd row is the first player's (take the middle, then mirror)
    solved = agon_json("solve", "kayles", "--pins", "5")
    assert solved["value"] == 1 and solved["best_moves"] == ["3"]
    forced = agon_json("solve", "kayles", "--pins", "4", "--leftmost")
    assert forced["value"] == -1 and forced["best_moves"] == ["1"]
    match = agon_json("match", "kayles", "random", "alphabeta:200", "--pins", "3",
                      "--leftmost", "--games", "2", "--seed", "1")
    assert [game["margin"] for game in match["results"]] == [1, 1]  # Black takes the last pin
    quality = agon("quality", "kayles", "mcts:50", "--leftmost", "--positions", "2")
    assert quality.returncode == 2 and "offers no choice of moves" in quality.stderr
    # no fast twin, so no evaluation terms: there is nothing to train, and it still plays
    trained = agon("train", "kayles", "--pins", "5", "--games", "1")
    assert trained.returncode == 2 and "has no evaluation terms to train" in trained.stderr


# --- the web arena ------------------------------------------------------------------------------


def test_the_arena_refuses_a_row_of_no_pins(client: TestClient) -> None:
    answer = client.post("/api/games", json={"game": "kayles", "options": {"pins": 0},
                                             "opponent": "local"})
    assert answer.status_code == 400, answer.text
    assert "over before its first move" in answer.json()["detail"]


def test_a_forced_game_against_the_computer_to_its_end(client: TestClient) -> None:
    seat, _ = start_game(client, game="kayles", options={"pins": 3, "leftmost": True},
                         opponent="computer", level="easy", colour="white")
    view = seat.wait_for_turn()
    assert view["has_pass"] is False and 'data-place="1"' in view["svg"]
    while view["status"] == "active":
        state = replayed(view)
        assert seat.move(state.game.format_move(state.legal_moves()[0])).status_code == 200
        view = seat.wait_for_turn()
    assert view["result"] == "B+1" and view["headline"] == "Black wins"


def test_resign_and_pass_in_a_game_with_no_pass(client: TestClient) -> None:
    seat, _ = start_game(client, game="kayles", options={"pins": 1}, opponent="local")
    refused = seat.post("/pass")
    assert refused.status_code == 400
    assert refused.json()["detail"] == "there is no pass in Kayles: knock down a pin"
    answer = seat.post("/resign")
    assert answer.status_code == 200, answer.text
    view = seat.view()
    assert view["result"] == "W+R" and view["headline"] == "White wins by resignation"
    last, _ = start_game(client, game="kayles", options={"pins": 1}, opponent="local")
    assert last.move("1").status_code == 200
    assert last.view()["headline"] == "Black wins"
    assert last.post("/resign").status_code == 409  # the game is over


# --- the adapters -------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [{"pins": 1}, {"pins": 4, "leftmost": True}])
def test_openspiel_and_pettingzoo_play_forced_games(options: dict[str, Any]) -> None:
    pyspiel = pytest.importorskip("pyspiel")
    from pettingzoo.test import api_test

    from agon.adapters import openspiel, pettingzoo

    game = openspiel.load(make_game("kayles", options))
    state = game.new_initial_state()
    while not state.is_terminal():
        assert len(state.legal_actions()) == 1
        state.apply_action(state.legal_actions()[0])
    pins = options["pins"]
    assert state.returns() == ([1.0, -1.0] if pins % 2 else [-1.0, 1.0])
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api_test(pettingzoo.env("kayles", **options), num_cycles=20)


def test_openspiel_takes_a_game_registered_after_its_import() -> None:
    pytest.importorskip("pyspiel")
    from agon.adapters import openspiel  # (imported first: Kayles Late is registered after)

    class KaylesLate(Kayles):
        name = "kayles_late"

    with registered(dataclasses.replace(PLUGIN, game=KaylesLate)):
        game = openspiel.load(make_game("kayles_late", {"pins": 2}))
        assert game.num_distinct_actions() == 3 and game.agon_game == KaylesLate(2)


@pytest.mark.parametrize("spec", ["strongest:1s", "strongest-nostore:1s"])
def test_the_strongest_agent_keeps_the_win_in_a_game_without_a_twin(spec: str) -> None:
    """Stores, then the solver, then search, all on the reference rules: Kayles is won by
    the first player on every row (the middle pin or pair leaves two equal rows)."""
    import agon.study  # noqa: F401  # (registers the strongest agents)
    from agon.search.registry import make_agent
    from agon.solve.solver import Solver

    with registered(PLUGIN):
        game = make_game("kayles", {"pins": 7})
        state = game.new_state()
        solver = Solver(game)
        assert solver.margin(state) == 1
        move = make_agent(spec, game, seed=0).choose(state)
        state.play(move)
        assert solver.margin(state) == 1, f"{spec} gave the win away: {game.format_move(move)}"


def test_openspiel_mcts_plays_a_game_without_a_twin() -> None:
    """OpenSpiel's MCTSBot (``openspiel-mcts``) through the adapter on the reference rules:
    with enough simulations it proves Kayles' first-player win and keeps it."""
    pytest.importorskip("pyspiel")
    from agon.search.registry import make_agent
    from agon.solve.solver import Solver

    with registered(PLUGIN):
        game = make_game("kayles", {"pins": 7})
        state = game.new_state()
        analysis = make_agent("openspiel-mcts:3000", game, seed=1).analyse(state)
        assert analysis.proven and analysis.win_rate == 1.0
        state.play(analysis.best_move)
        assert Solver(game).margin(state) == 1, game.format_move(analysis.best_move)
