"""The example game (examples/tictactoe, a package of its own) through every interface: the
command line, the web arena and the adapters serve it with no line of Agon written for it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agon.cli import app
from agon.core.records import GameRecord
from agon.games import make_game, names, plugin
from web_fixtures import Seat, TestClient, client, make_client, replayed, start_game

__all__ = ["client", "make_client"]  # fixtures used by name

runner = CliRunner()


def agon(*args: str, input: str | None = None) -> Result:
    result = runner.invoke(app, list(args), input=input)
    assert "Traceback" not in result.output
    return result


def agon_json(*args: str) -> Any:
    result = agon(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_example_is_found_through_its_entry_point() -> None:
    found = plugin("tictactoe")
    assert "tictactoe" in names() and found.game.__module__ == "agon_tictactoe.rules"
    # searched and solved on its fast twin, solved in `agon tables`
    assert found.fast_twin == "agon_tictactoe.fast:fast_twin"
    assert found.tooling.catalogue == "agon_tictactoe.results:CATALOGUE"


def test_the_example_twin_is_loaded_only_when_it_is_built() -> None:
    """Finding the game imports no Numba; building its twin does, and the twin is the
    game's own (not the one over its reference rules)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from agon.games import make_game, plugin\n"
        "found = plugin('tictactoe')\n"
        "assert 'numba' not in sys.modules and 'agon_tictactoe.fast' not in sys.modules\n"
        "twin = found.build_fast_twin(make_game('tictactoe'))\n"
        "assert twin is not None and twin.cached and 'agon_tictactoe.fast' in sys.modules\n"
        "print(twin.legal_list(twin.new_state()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(list(range(9)))


# --- the command line ---------------------------------------------------------------------------


def test_state_shows_the_rules_engine() -> None:
    start = agon_json("state", "tictactoe")
    assert start["variant"] == {"width": 3, "height": 3, "line": 3}
    assert start["position"] == ".../.../... x" and len(start["legal_moves"]) == 9
    won = agon_json("state", "tictactoe", "--width", "4", "--moves", "a1 a2 b1 b2 c1")
    assert won["position"] == "..../oo../xxx. o"
    assert (won["over"], won["result"]) == (True, "B+1")
    assert won["reason"] == "Black completed a line of 3"
    refused = agon("state", "tictactoe", "--moves", "b2 b2")
    assert refused.exit_code == 2 and "move 2 (b2): b2 is occupied" in refused.stderr
    other = agon("state", "tictactoe", "--komi", "1")
    assert other.exit_code == 2 and "'komi' is not an option of Tic-tac-toe" in other.stderr


def test_rules_in_every_language_for_the_variant() -> None:
    spanish = agon("rules", "tictactoe", "--lang", "es")
    assert spanish.exit_code == 0 and spanish.stdout.startswith("# Tres en raya")
    assert "tablas" in spanish.stdout and "esquina con el centro" in spanish.stdout
    larger = agon("rules", "tictactoe", "--width", "4", "--lang", "lt")
    assert larger.exit_code == 0 and "Kryžiukai" in larger.stdout
    assert "kampą" not in larger.stdout  # the classic board's paragraph is left out


def test_play_save_and_replay(tmp_path: Path) -> None:
    agents = agon("play", "tictactoe", "--black", "random", "--white", "random", "--seed", "2")
    assert agents.exit_code == 0 and "Game over" in agents.stdout
    record_file = tmp_path / "game.json"
    person = agon(
        "play", "tictactoe", "--white", "random", "--seed", "1",
        input=f"b2\nb2\nsave {record_file}\nquit\n",
    )
    assert person.exit_code == 0, person.output
    assert "b2 is occupied" in person.stdout
    record = json.loads(record_file.read_text())
    assert record["game"] == "tictactoe" and record["moves"][0] == "b2"
    replay = agon("replay", str(record_file), "--all")
    assert replay.exit_code == 0, replay.output
    assert "Move 2/2: White" in replay.stdout and replay.stdout.count(" to move") == 3
    assert "Score:" not in replay.stdout  # (a game of wins and losses: no points)


def test_solve_gives_the_known_values() -> None:
    classic = agon_json("solve", "tictactoe", "--openings", "--line")
    assert classic["value"] == 0 and len(classic["best_moves"]) == 9
    assert set(classic["moves"].values()) == {0}
    assert classic["line"]["end"] == "the board is full"
    # agon solve has a --line of its own (a line of perfect play): the game's is --game-line
    small = agon_json("solve", "tictactoe", "--width", "2", "--height", "2", "--game-line", "2")
    assert small["value"] == 1
    assert "--game-line" in agon("solve", "--help").stdout


def test_match_and_quality_use_the_agents() -> None:
    match = agon_json("match", "tictactoe", "random", "mcts:200", "--games", "4", "--seed", "1")
    assert match["games"] == 4 and match["losses"] >= 3  # random rarely holds mcts
    assert all(game["margin"] in (-1, 0, 1) for game in match["results"])
    quality = agon_json(
        "quality", "tictactoe", "alphabeta:2000", "--positions", "4", "--seed", "1", "--quiet"
    )
    assert quality["positions"] == 4 and quality["optimal_share"] == 1.0


# --- the web arena ------------------------------------------------------------------------------


def test_the_lobby_offers_the_game_with_its_options(client: TestClient) -> None:
    meta = client.get("/api/meta").json()["games"]["tictactoe"]
    assert meta["title"] == "Tic-tac-toe"
    assert meta["defaults"] == {"width": 3, "height": 3, "line": 3}
    assert [option["name"] for option in meta["options"]] == ["width", "height", "line"]
    assert all(option["maximum"] == 5 for option in meta["options"])
    for path in ("/", "/rules/tictactoe", "/rules/tictactoe?lang=nl&width=4"):
        page = client.get(path)
        assert page.status_code == 200 and "Tic-tac-toe" in page.text, path
    rules = client.get("/api/rules/tictactoe", params={"lang": "nl"}).json()
    assert "Boter-kaas-en-eieren" in rules["html"]


def test_a_game_against_the_computer_to_its_end(client: TestClient) -> None:
    seat, _ = start_game(client, game="tictactoe", options={"width": 3, "height": 3},
                         opponent="computer", level="easy", colour="black")
    view = seat.view()
    assert 'data-place="b2"' in view["svg"] and 'aria-label="b2, empty"' in view["svg"]
    while view["status"] == "active":
        state = replayed(view)
        answer = seat.move(state.game.format_move(state.legal_moves()[0]))
        assert answer.status_code == 200, answer.text
        view = seat.wait_for_turn()
    final = replayed(view)  # every move, the computer's too, obeys the rules
    assert final.is_over and view["result"] == final.result and view["reason"] == final.end_reason
    assert [move["player"] for move in view["moves"][:2]] == ["black", "white"]


def test_a_friend_takes_the_second_seat_and_watchers_follow(client: TestClient) -> None:
    host, created = start_game(client, game="tictactoe", options={"line": 3},
                               opponent="friend", colour="black")
    guest = Seat(client, host.game_id, created["invite_token"])
    assert guest.view()["you"] == ["white"]
    picked = client.get(f"/api/games/{host.game_id}/choices", params={"picked": "b2"}).json()
    assert picked["move"] == "b2"
    with client.websocket_connect(f"/ws/games/{host.game_id}") as socket:
        assert socket.receive_json()["view"]["moves"] == []
        assert host.move("b2").status_code == 200
        assert [m["text"] for m in socket.receive_json()["view"]["moves"]] == ["b2"]
        refused = guest.move("b2")
        assert refused.status_code == 422 and "b2 is occupied" in refused.json()["detail"]
        assert host.move("a1").status_code == 409  # White's turn
        for mover, move in ((guest, "a1"), (host, "c1"), (guest, "a3"), (host, "a2"),
                            (guest, "c3"), (host, "c2")):
            assert mover.move(move).status_code == 200
            socket.receive_json()
        view = host.view()
    assert view["status"] == "over" and view["result"] == "B+1"
    assert view["reason"] == "Black completed a line of 3"


def test_an_exported_record_replays_at_the_terminal(client: TestClient, tmp_path: Path) -> None:
    seat, _ = start_game(client, game="tictactoe", options={"width": 4, "line": 3},
                         opponent="local")
    for move in ("b2", "a1", "c2"):
        assert seat.move(move).status_code == 200
    answer = seat.get("/record")
    assert "attachment" in answer.headers["content-disposition"]
    path = tmp_path / "record.json"
    path.write_text(answer.text)
    record = GameRecord.load(path, make_game)
    assert record.game == make_game("tictactoe", {"width": 4, "line": 3})
    assert record.moves == ["b2", "a1", "c2"]
    replay = agon("replay", str(path), "--all")
    assert replay.exit_code == 0 and "Move 3/3: Black c2" in replay.stdout


# --- the adapters -------------------------------------------------------------------------------


def test_openspiel_and_pettingzoo_play_it() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    from pettingzoo.test import api_test

    import agon.adapters.openspiel  # noqa: F401  (registers every game with pyspiel)
    from agon.adapters import pettingzoo

    game = pyspiel.load_game("python_agon_tictactoe(width=4,height=3,line=3)")
    assert game.num_distinct_actions() == 12 and game.max_game_length() == 12
    assert game.observation_tensor_shape() == [4, 3, 4]
    state = game.new_initial_state()
    for action in (0, 4, 1, 5, 2):  # a1 a2 b1 b2 c1
        state.apply_action(action)
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api_test(pettingzoo.env("tictactoe", width=2, height=2, line=2), num_cycles=50)
